"""The alternative annotator test (alt-test; Calderon, Reichart and Dror, ACL 2025), as pure DataFrame code.

Question: does a judge represent the annotators at least as well as one of them does? Leave one
annotator j out at a time; on each item, score the judge's and j's agreement with the remaining
annotators, and test whether j's advantage is smaller than a margin epsilon. Definitions in
docs/methods.md, "The alternative annotator test".

- **Labels.** The item is a pair (of one instruction). A subject's label combines its
  presentations of the pair in the un-cued runs (plain, order): the same response chosen in
  every presentation gives that response (``a`` / ``b``), anything else (a tie verdict, or
  choices that disagree) gives ``tie``; an output with no verdict is dropped.
- **Scores.** S_judge(i) and S_j(i): the share of the other annotators of item i whose label
  equals the judge's / j's (accuracy, ties a class). W_judge = 1[S_judge >= S_j],
  W_j = 1[S_j >= S_judge], d = W_j - W_judge.
- **Test.** H0: mean(d) >= epsilon, one-sided one-sample t-test of d - epsilon on n - 1 df.
  Benjamini-Yekutieli at q across the tested annotators; winning rate = share rejected,
  advantage probability = mean over them of rho_j = mean(W_judge); passed = winning rate >= 0.5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from analysis.metrics.agreement import TIE, vote_outcomes
from annotations.vocabulary import Condition

# The un-cued runs: a cue (bandwagon, attentional, names ...) is what those runs measure, not a label.
UNCUED = (Condition.PLAIN, Condition.ORDER)
LABEL_COLUMNS = ["subject", "item", "label"]
PASS_RATE = 0.5  # the paper's rule: the judge wins against at least half the annotators


def combined_label(outcomes: Sequence[str]) -> str:
    """One label from a subject's readable outcomes of one item: the one response, else a tie."""
    distinct = set(outcomes)
    return next(iter(distinct)) if len(distinct) == 1 else TIE


def judge_labels(judgments: pd.DataFrame) -> pd.DataFrame:
    """``subject`` (the judge), ``item`` (the pair), ``label`` from ``loaders.judgments_frame``.

    A call with a verdict chose ``a`` or ``b``; a tie verdict (``valid`` False, ``verdict``
    "tie") is ``tie``; any other call has no verdict and is dropped.
    """
    calls = judgments[judgments["condition"].isin(UNCUED)]
    if calls.empty:
        return pd.DataFrame(columns=LABEL_COLUMNS)
    valid = calls["valid"].astype(bool)
    outcome = [
        ("a" if chosen_a else "b") if ok else (TIE if verdict == TIE else None)
        for ok, chosen_a, verdict in zip(valid, calls["chosen_is_a"].astype(bool), calls["verdict"], strict=True)
    ]
    return _combined(calls.assign(subject=calls["judge"], item=calls["pair"], outcome=outcome))


def human_labels(answers: pd.DataFrame) -> pd.DataFrame:
    """``subject`` (the annotator's pseudonym), ``item``, ``label`` from ``loaders.human_pairwise_frame``.

    Each annotator's own votes on the pair in the un-cued conditions; "T" is a tie.
    """
    votes = answers[answers["condition"].isin(UNCUED)]
    if votes.empty:
        return pd.DataFrame(columns=LABEL_COLUMNS)
    # The pseudonym the reports print (Participant.label), else the participant id.
    name = votes["rater_label"].where(votes["rater_label"].fillna("") != "", votes["rater"].astype(str))
    outcome = vote_outcomes(votes["choice"], votes["arrangement"])
    return _combined(votes.assign(subject=name, item=votes["pair"], outcome=outcome))


def _combined(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows[rows["outcome"].notna()]
    if rows.empty:
        return pd.DataFrame(columns=LABEL_COLUMNS)
    labels = rows.groupby(["subject", "item"], sort=True)["outcome"].agg(lambda v: combined_label(list(v)))
    return labels.rename("label").reset_index()[LABEL_COLUMNS]


@dataclass(frozen=True)
class Comparison:
    """One excluded annotator against the judge, on the items both can be scored on."""

    annotator: str
    items: list  # the item ids, in order
    judge_wins: np.ndarray  # W_judge(i)
    annotator_wins: np.ndarray  # W_j(i)

    @property
    def differences(self) -> np.ndarray:
        return self.annotator_wins - self.judge_wins  # d_i

    @property
    def rho(self) -> float:
        return float(self.judge_wins.mean()) if len(self.items) else math.nan


def leave_one_out(judge: pd.Series, humans: pd.DataFrame, *, min_annotators: int = 2) -> list[Comparison]:
    """A ``Comparison`` for every annotator in ``humans`` (by name), an empty one if nothing is shared.

    ``judge``: label by item; ``humans``: ``human_labels`` rows. Only items with labels from at
    least ``min_annotators`` annotators (and never fewer than 2: someone must remain) and from
    the judge count; on each, the annotator must have a label.
    """
    wide = humans.pivot(index="item", columns="subject", values="label")
    wide = wide[wide.notna().sum(axis=1) >= max(min_annotators, 2)]
    wide = wide[wide.index.isin(judge.index)]
    judge_label = judge.reindex(wide.index).to_numpy(dtype=object)
    labelled = wide.notna().to_numpy()
    values = wide.to_numpy(dtype=object)
    comparisons = []
    for j, annotator in enumerate(wide.columns):
        mine = labelled[:, j]
        others = np.delete(labelled, j, axis=1)[mine]
        other_values = np.delete(values, j, axis=1)[mine]
        count = others.sum(axis=1)  # >= 1: the item has at least 2 labels, one of them j's
        s_judge = ((other_values == judge_label[mine, None]) & others).sum(axis=1) / count
        s_annotator = ((other_values == values[mine, j, None]) & others).sum(axis=1) / count
        comparisons.append(
            Comparison(
                annotator=str(annotator),
                items=list(wide.index[mine]),
                judge_wins=(s_judge >= s_annotator).astype(float),
                annotator_wins=(s_annotator >= s_judge).astype(float),
            )
        )
    return sorted(comparisons, key=lambda c: c.annotator)


def one_sided_t(differences: np.ndarray, epsilon: float) -> tuple[float | None, float]:
    """(t, p) of H0 mean(d) >= epsilon against H1 mean(d) < epsilon, on n - 1 df (n >= 2).

    Zero variance (every d_i the same, so no t): p = 0 when that value is below epsilon (the
    limit of the t-test as the spread shrinks, and what scipy gives), else p = 1; t is None.
    """
    n = differences.size
    if n < 2:
        raise ValueError("the t-test needs at least 2 items")
    shift = float(differences.mean()) - epsilon
    sd = float(differences.std(ddof=1))
    if sd == 0.0:
        return None, 0.0 if shift < 0 else 1.0
    t = shift / (sd / math.sqrt(n))
    return t, float(student_t.cdf(t, n - 1))


def benjamini_yekutieli(p_values: Sequence[float], q: float) -> tuple[list[float], list[bool]]:
    """BY step-up adjusted p-values and rejections at FDR q, under any dependence.

    Rank the m p-values ascending; c(m) = sum_{k=1..m} 1/k; reject the k smallest for the
    largest k with p_(k) <= k q / (m c(m)). The adjusted value of p_(k) is
    min over l >= k of min(1, m c(m) p_(l) / l); it is <= q exactly when p_(k) is rejected.
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return [], []
    c_m = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m * c_m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return [float(a) for a in adjusted], [bool(a <= q) for a in adjusted]


@dataclass(frozen=True)
class AnnotatorTest:
    annotator: str
    items: int
    rho: float  # mean W_judge: how often the judge scored at least as well as this annotator
    annotator_rho: float  # mean W_j
    mean_d: float
    t: float | None
    p: float
    p_adjusted: float
    rejected: bool


@dataclass(frozen=True)
class AltTest:
    epsilon: float
    q: float
    tests: list[AnnotatorTest]
    winning_rate: float
    advantage_prob: float
    passed: bool


def alt_test(comparisons: Sequence[Comparison], *, epsilon: float, q: float = 0.05) -> AltTest:
    """The test over the given annotators (each with at least 2 items; choose them before)."""
    if not comparisons:
        raise ValueError("the alt-test needs at least one annotator")
    raw = [one_sided_t(c.differences, epsilon) for c in comparisons]
    adjusted, rejected = benjamini_yekutieli([p for _, p in raw], q)
    tests = [
        AnnotatorTest(
            annotator=c.annotator,
            items=len(c.items),
            rho=c.rho,
            annotator_rho=float(c.annotator_wins.mean()),
            mean_d=float(c.differences.mean()),
            t=t,
            p=p,
            p_adjusted=adj,
            rejected=rej,
        )
        for c, (t, p), adj, rej in zip(comparisons, raw, adjusted, rejected, strict=True)
    ]
    winning_rate = sum(rejected) / len(tests)
    return AltTest(
        epsilon=epsilon,
        q=q,
        tests=tests,
        winning_rate=winning_rate,
        advantage_prob=float(np.mean([c.rho for c in comparisons])),
        passed=winning_rate >= PASS_RATE,
    )
