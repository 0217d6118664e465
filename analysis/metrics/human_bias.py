"""Human bias rates from the pairwise crowd studies (docs/methods.md, "Bias rates"), vectorised.

Input: the frame of ``analysis.loaders.human_pairwise_frame``, one row per approved
answer: ``rater, batch, instruction, condition, pair_index, position, resp_a, resp_b,
arrangement ("ab"|"ba"), cue_slot ("A"|"B"|None), choice ("A"|"B")`` plus the
responses' lengths ``units_a``, ``units_b`` in the profile's human length unit.

Every pair is answered twice by the same rater (the twin tasks share ``pair_index``).
All four definitions are symmetric in the twins, so task order does not matter.
Human salience is taken from the order study.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from annotations.biases import CROWD_CUED
from annotations.vocabulary import Arrangement, Condition, CrowdChoice

# nltk.word_tokenize (the authors' tokenizer) needs the punkt model, which is not
# available offline. ``word_tokens`` follows the Penn Treebank rules that word_tokenize
# applies (quotes become `` and '', clitics split off: "do" + "n't", "it" + "'s",
# "can" + "not"; ":" and "," split unless inside numbers; "..." kept whole; brackets,
# "?", "!", ";", "@", "#", "$", "%", "&", "*" split; hyphens and slashes kept inside
# words) and approximates punkt's sentence split by detaching a period followed by
# whitespace. Newlines are deleted first, as the authors did. On the CoBBLEr order
# study it reproduces 74 of the 75 stored per-rater salience values exactly; reports
# say that this tokenizer, not NLTK's, counted the tokens.
_TOKEN_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)(')(?!re|ve|ll|m|t|s|d|n)(\w)\b"), r"\1 \2"),
    (re.compile(r'^"'), " `` "),
    (re.compile(r'([ (\[{<])"'), r"\1 `` "),
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}"), r" \g<0> "),
    (re.compile(r"[;@#$%&*]"), r" \g<0> "),
    (re.compile(r"(?<!\.)\.(?=[\]\)}>\"']*(\s|$))"), " . "),
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),
    (re.compile(r"[\]\[(){}<>]"), r" \g<0> "),
    (re.compile(r"--"), " -- "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"([^' ])('[sSmMdD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
    (re.compile(r"(?i)\b(can)(not)\b"), r"\1 \2"),
    (re.compile(r"(?i)\b(gon|got|wan)(na|ta)\b"), r"\1 \2"),
]
TOKENIZER_NOTE = (
    "Treebank-style regex word tokenizer (analysis.metrics.human_bias.word_tokens), newlines deleted; not NLTK"
)


def word_tokens(text: str) -> list[str]:
    """Treebank-like word tokens of ``text`` after deleting newlines (see the note above)."""
    out = text.replace("\n", "") + " "
    for pattern, replacement in _TOKEN_RULES:
        out = pattern.sub(replacement, out)
    return out.split()


@lru_cache(maxsize=4096)
def _token_count(text: str) -> int:
    # Cached: a report tokenises the same responses in several sections (17 regex passes each).
    return len(word_tokens(text))


def count_units(texts: pd.Series, unit: str) -> pd.Series:
    """Length of each text in ``unit``: chars, words (whitespace) or tokens (``word_tokens``)."""
    if unit == "chars":
        return texts.str.len()
    if unit == "words":
        return texts.str.split().str.len()
    if unit == "tokens":
        unique = {t: _token_count(t) for t in texts.unique()}  # few distinct responses
        return texts.map(unique)
    raise ValueError(f"unknown length unit {unit!r}")


LETTERS = (CrowdChoice.A, CrowdChoice.B)  # the votes that choose a slot; a tie ("T") chooses neither


def twin_frame(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per (rater, batch, pair_index): the two answers side by side (suffixes 1, 2).

    ``chose_a1``/``chose_a2``: whether the vote chose response_a (nullable; <NA> for a tie).
    """
    work = answers.sort_values(["rater", "batch", "pair_index", "position"])
    work = work.assign(twin=work.groupby(["rater", "batch", "pair_index"]).cumcount())
    keys = ["rater", "batch", "instruction", "condition", "pair_index"]
    t1 = work[work["twin"] == 0]
    t2 = work[work["twin"] == 1][[*keys, "choice", "cue_slot", "arrangement"]]
    twins = t1.merge(t2, on=keys, suffixes=("1", "2"))
    # The response chosen, in canonical terms: slot A holds resp_a when the arrangement is "ab".
    # A tie chose no slot and no response, so its ``chose_a`` is <NA>: read as a letter it
    # would be slot B under "ab" and slot A under "ba".
    for k in (1, 2):
        chose_a = (twins[f"choice{k}"] == CrowdChoice.A) == (twins[f"arrangement{k}"] == Arrangement.AB)
        twins[f"chose_a{k}"] = chose_a.astype("boolean").where(twins[f"choice{k}"].isin(LETTERS), pd.NA)
    return twins


def human_bias_records(answers: pd.DataFrame, *, denominator: str = "valid") -> pd.DataFrame:
    """Per rater x batch: hits and denominators of each bias, one row per bias.

    Columns: ``rater, batch, instruction, bias, hits, mirror, n``. For order, bandwagon and
    attentional ``n`` is the number of answered pairs (15 in CoBBLEr), pairs with a tie
    vote included: a tie is neither slot nor cue, so such a pair is neither a hit nor a
    mirror. For salience ``n`` is the consistent pairs: two letter votes choosing the same
    response (a tie chose no response). ``denominator`` is the profile's: ``valid``
    (default) also drops equal lengths from the salience n, like the judges' kept pairs;
    ``all`` (cobbler-paper) keeps the authors' n_c, where equal lengths count for neither side.
    ``mirror`` counts the same definition with the roles swapped (order_first: B twice;
    order_last: A twice; salience: the shorter chosen; bandwagon/attentional: the uncued
    letter both times), for the sign tests of docs/methods.md.
    """
    cols = ["rater", "batch", "instruction", "bias", "hits", "mirror", "n"]
    if answers.empty:
        return pd.DataFrame(columns=cols)
    twins = twin_frame(answers)
    keys = ["rater", "batch", "instruction"]
    names: list[str] = []
    rows: list[np.ndarray] = []
    counts: list[np.ndarray] = []

    def add(mask: pd.Series, hits: pd.Series, n: pd.Series, bias: str, mirror: pd.Series) -> None:
        picked = mask.to_numpy(dtype=bool)
        if picked.any():
            names.append(bias)
            rows.append(np.flatnonzero(picked))
            counts.append(np.column_stack([s.to_numpy()[picked] for s in (hits, mirror, n)]).astype(int))

    order = twins["condition"] == Condition.ORDER
    letters1, letters2 = twins["choice1"].isin(LETTERS), twins["choice2"].isin(LETTERS)
    # The same slot twice needs two letter votes: T/T chose no slot at all.
    same_slot = letters1 & letters2 & (twins["choice1"] == twins["choice2"])
    one = pd.Series(True, index=twins.index)
    first, last = same_slot & (twins["choice1"] == CrowdChoice.A), same_slot & (twins["choice1"] == CrowdChoice.B)
    add(order, first, one, "order_first", last)
    add(order, last, one, "order_last", first)
    # Salience: the same response chosen in both presentations (positions swapped); <NA>
    # (a tie) equals nothing, so a pair with a tie is never consistent.
    consistent = (twins["chose_a1"] == twins["chose_a2"]).fillna(False).astype(bool)
    chose_a = twins["chose_a1"].fillna(False).astype(bool)
    chosen_len = np.where(chose_a, twins["units_a"], twins["units_b"])
    other_len = np.where(chose_a, twins["units_b"], twins["units_a"])
    longer, shorter = consistent & (chosen_len > other_len), consistent & (chosen_len < other_len)
    # Equal lengths carry no length signal: out of n by default, in n (neither side) as the authors had it.
    kept = consistent if denominator == "all" else longer | shorter
    add(order, longer, kept, "salience_longer", shorter)
    for condition in CROWD_CUED:
        mask = twins["condition"] == condition
        # Both ways need two letter votes: a tie neither follows nor goes against the cue.
        followed = (
            letters1 & (twins["choice1"] == twins["cue_slot1"]) & letters2 & (twins["choice2"] == twins["cue_slot2"])
        )
        against = (
            letters1 & (twins["choice1"] != twins["cue_slot1"]) & letters2 & (twins["choice2"] != twins["cue_slot2"])
        )
        add(mask, followed, one, condition, against)
    if not names:
        return pd.DataFrame(columns=cols)
    # One groupby for every bias (a groupby per bias cost most of this function): ``part``
    # keeps the biases in the order added, each sorted by rater, batch, instruction.
    frame = twins[keys].iloc[np.concatenate(rows)].reset_index(drop=True)
    frame["part"] = np.repeat(np.arange(len(names)), [len(r) for r in rows])
    frame[["hits", "mirror", "n"]] = np.concatenate(counts)
    out = frame.groupby(["part", *keys], sort=True).sum().reset_index()
    out["bias"] = pd.array(np.array(names, dtype=object)[out["part"].to_numpy()], dtype="str")
    return out[cols]


def with_position_preference(records: pd.DataFrame) -> pd.DataFrame:
    """Add one ``position_preference`` record per order record: hits = A twice, mirror = B twice.

    Its per-record rate is (hits - mirror) / n, so its mean is order_first - order_last.
    """
    first = records[records["bias"] == "order_first"]
    if first.empty:
        return records
    return pd.concat([records, first.assign(bias="position_preference")], ignore_index=True)


def record_rates(records: pd.DataFrame) -> np.ndarray:
    """Each record's rate: hits / n (0 when n = 0), and (hits - mirror) / n for position_preference."""
    top = np.where(records["bias"] == "position_preference", records["hits"] - records["mirror"], records["hits"])
    n = records["n"].to_numpy()
    return np.where(n > 0, top / np.where(n > 0, n, 1), 0.0)


def human_bias_counts(records: pd.DataFrame, *, per_rater: bool) -> pd.DataFrame:
    """Aggregate rater records to one row per bias (subject "humans").

    ``per_rater``: the authors' mean of per-rater proportions (a record with
    n = 0 contributes 0, as a rate with nothing to count); otherwise pooled hits / n.
    A ``position_preference`` row is added from the order records.
    """
    cols = ["subject", "bias", "hits", "mirror", "n_all", "n_valid", "value_mean", "records"]
    if records.empty:
        return pd.DataFrame(columns=cols)
    records = with_position_preference(records)
    work = records.assign(rate=record_rates(records))
    out = (
        work.groupby("bias", sort=True)
        .agg(
            hits=("hits", "sum"),
            mirror=("mirror", "sum"),
            n_valid=("n", "sum"),
            value_mean=("rate", "mean"),
            records=("rate", "size"),
        )
        .reset_index()
    )
    out["n_all"] = out["n_valid"]
    out["subject"] = "humans"
    if not per_rater:
        signed = out["bias"] == "position_preference"
        top = out["hits"] - out["mirror"].where(signed, 0)
        out["value_mean"] = top / out["n_valid"]
    return out[cols]


def human_bias_units(records: pd.DataFrame, *, per_rater: bool) -> pd.DataFrame:
    """Bootstrap units: one row per rater record with ``num`` / ``den`` (value = sum num / sum den).

    Per-rater averaging: num = the record's rate, den = 1; pooled: num = hits (hits - mirror
    for position_preference), den = n. ``diff`` / ``size`` (hits - mirror, n) are the pieces
    of the tested effect. Clusters: ``rater`` and ``instruction``.
    """
    cols = ["subject", "bias", "rater", "instruction", "num", "den", "diff", "size"]
    if records.empty:
        return pd.DataFrame(columns=cols)
    records = with_position_preference(records)
    if per_rater:
        num, den = record_rates(records), np.ones(len(records))
    else:
        signed = (records["bias"] == "position_preference").to_numpy()
        num = np.where(signed, records["hits"] - records["mirror"], records["hits"]).astype(float)
        den = records["n"].to_numpy(dtype=float)
    # The tested effect (hits - mirror) / n is pooled whatever the averaging of the reported rate.
    diff = (records["hits"] - records["mirror"]).to_numpy(dtype=float)
    size = records["n"].to_numpy(dtype=float)
    return records.assign(subject="humans", num=num, den=den, diff=diff, size=size)[cols]
