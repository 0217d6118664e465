"""Rankings from pairwise outcomes and scores, with the authors' two tie rules and a tie-aware one.

Tie rules (``Profile.tie_break``):
- ``alpha`` (T1): sort by (-score, candidate key A-Z).
- ``canonical`` (T2): stable sort by -score, so ties keep the study's candidate order.
- ``tie-aware``: equal scores form one tied group (a frozenset), for the tie-aware RBO
  of ``analysis.metrics.rbo`` (Corsi & Urbano's ``a`` treatment by default).
A ranking is a list of candidate keys, best first (tied groups as frozensets).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

TIE_RULES = ("alpha", "canonical", "tie-aware")

# The order the authors used to break ties between equal selection ratios (wins /
# appearances per rater) in the human bias study.
HUMAN_BIAS_TIE_ORDER = (
    "gpt4",
    "chatgpt",
    "instructgpt",
    "llama",
    "cohere",
    "falcon",
    "alpaca",
    "vicuna",
    "openassist",
    "dolly",
    "baize",
    "koala",
    "wizardlm",
    "mpt",
    "redpajama",
)


def rank(keys: Sequence[str], scores: Sequence[float], *, tie_break: str, order: Sequence[str] | None = None) -> list:
    """Candidates best first by ``scores`` (higher is better).

    ``order`` is the canonical order used by ``canonical`` ties (defaults to ``keys`` as given;
    keys missing from ``order`` go last, alphabetically).
    """
    if tie_break not in TIE_RULES:
        raise ValueError(f"unknown tie rule {tie_break!r}; choose one of {', '.join(TIE_RULES)}")
    if len(keys) != len(scores):
        raise ValueError("keys and scores differ in length")
    frame = pd.DataFrame({"key": list(keys), "score": np.asarray(scores, dtype=float)})
    if tie_break == "alpha":
        return frame.sort_values(["score", "key"], ascending=[False, True])["key"].tolist()
    position = {k: i for i, k in enumerate(order if order is not None else keys)}
    frame["pos"] = [position.get(k, len(position)) for k in frame["key"]]
    frame = frame.sort_values(["score", "pos", "key"], ascending=[False, True, True], kind="stable")
    if tie_break == "canonical":
        return frame["key"].tolist()
    out: list = []
    for _score, group in frame.groupby("score", sort=False):
        members = group["key"].tolist()
        out.append(members[0] if len(members) == 1 else frozenset(members))
    return out


def rankings_by(
    frame: pd.DataFrame, *, group: list[str], tie_break: str, order: Sequence[str] | None = None
) -> pd.Series:
    """One ranking per group of a tidy (``group`` ..., ``candidate``, ``score``) frame.

    Vectorised: one sort of the whole frame, then one pass over the sorted rows (a
    per-group ``rank`` call costs a DataFrame sort each; a report makes ~850 of them).
    """
    if frame.empty:
        return pd.Series(dtype=object)
    if tie_break == "tie-aware":
        return _tie_aware_rankings(frame, group=group, order=order)
    work = frame[[*group, "candidate", "score"]].copy()
    if tie_break == "alpha":
        work["tie"] = work["candidate"]
    else:
        position = {k: i for i, k in enumerate(order)} if order is not None else {}
        work["tie"] = work["candidate"].map(position).fillna(len(position))
    # Rows whose group key is missing belong to no group (as groupby drops them); the rest,
    # sorted by group first, are cut into one list per group: ``agg(list)`` would call
    # Python once per group.
    work = work.dropna(subset=group).sort_values(
        [*group, "score", "tie", "candidate"], ascending=[*([True] * len(group)), False, True, True]
    )
    sizes = work.groupby(group, sort=True).size()
    candidates = work["candidate"].tolist()
    ends = np.cumsum(sizes.to_numpy())
    lists = [candidates[end - size : end] for end, size in zip(ends.tolist(), sizes.tolist(), strict=True)]
    return pd.Series(lists, index=sizes.index, dtype=object, name="candidate")


def _tie_aware_rankings(frame: pd.DataFrame, *, group: list[str], order: Sequence[str] | None) -> pd.Series:
    """``rank(..., tie_break="tie-aware")`` for every group at once, with the same result.

    Like ``rank``: members of a tied group are listed by canonical position, then key;
    without ``order`` a group's own row order is the canonical order; candidates with a
    NaN score are left out (``rank`` groups by score, and groupby drops NaN keys), so a
    group with only NaN scores gets an empty ranking.
    """
    work = frame[[*group, "candidate", "score"]].copy()
    work["score"] = work["score"].astype(float)
    if order is not None:
        position = {k: i for i, k in enumerate(order)}
        work["pos"] = work["candidate"].map(position).fillna(len(position)).astype(np.int64)
    else:
        work["pos"] = work.groupby(group, sort=False).cumcount()
    work = work.dropna(subset=group)
    if work.empty:
        return pd.Series(dtype=object)
    work = work.sort_values(
        [*group, "score", "pos", "candidate"], ascending=[*([True] * len(group)), False, True, True], kind="stable"
    )
    keys = work[group[0]].tolist() if len(group) == 1 else list(work[group].itertuples(index=False, name=None))
    rankings: list[list] = []
    index: list = []
    members: list = []
    last_key: object = object()
    last_score = float("nan")

    def close_tie() -> None:
        if members:
            rankings[-1].append(members[0] if len(members) == 1 else frozenset(members))

    for key, candidate, score in zip(keys, work["candidate"].tolist(), work["score"].tolist(), strict=True):
        if key != last_key:
            close_tie()
            members = []
            rankings.append([])
            index.append(key)
            last_key = key
        elif score != last_score:
            close_tie()
            members = []
        if score != score:  # NaN: sorted last, never ranked
            continue
        members.append(candidate)
        last_score = score
    close_tie()
    if len(group) == 1:
        idx = pd.Index(index, name=group[0], dtype=work[group[0]].dtype)
    else:
        idx = pd.MultiIndex.from_tuples(index, names=group)
    return pd.Series(rankings, index=idx, dtype=object)


PRESENTATION_RULES = ("both", "prompt1")


def wins_from_judgments(judgments: pd.DataFrame, *, presentations: str = "both") -> pd.DataFrame:
    """Wins over appearances per (judge, condition, instruction, candidate).

    ``presentations`` (``Profile.judge_rankings``):
    - ``both``: every presentation counts (both prompts of the order run, each showing
      the pair once in each arrangement), so a position-biased judge's wins are split
      evenly and never follow the order the pairs were listed in;
    - ``prompt1``: prompt 1 only, the authors' rule (docs/methods.md, "Order run counterbalancing").
    score = wins / appearances. Invalid answers give nobody a win but still count as an
    appearance, so a judge that rarely answers ranks everything near zero (and the tie
    rule decides its "ranking").
    """
    if presentations not in PRESENTATION_RULES:
        raise ValueError(f"unknown presentation rule {presentations!r}; use {', '.join(PRESENTATION_RULES)}")
    used = judgments if presentations == "both" else judgments[judgments["presentation"] == 1]
    cols = ["judge", "condition", "instruction"]
    appear = (
        pd.concat(
            [
                used[[*cols, "cand_a"]].rename(columns={"cand_a": "candidate"}),
                used[[*cols, "cand_b"]].rename(columns={"cand_b": "candidate"}),
            ]
        )
        .value_counts()
        .rename("appearances")
    )
    chosen = used[used["valid"].astype(bool)]
    winner = np.where(chosen["chosen_is_a"], chosen["cand_a"], chosen["cand_b"])
    wins = chosen[cols].assign(candidate=winner).value_counts().rename("wins")
    out = pd.concat([appear, wins], axis=1).fillna({"wins": 0}).reset_index()
    out["score"] = out["wins"] / out["appearances"]
    return out
