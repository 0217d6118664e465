"""The report's ``bt_rankings``: Bradley-Terry scores of the candidate systems per subject, with intervals.

One row per subject (the humans, then each judge by name) from its un-cued pairwise outcomes
(plain and order conditions; every vote and every call is one comparison), with Davidson ties,
a paired bootstrap clustered by instruction, each judge's Kendall tau and RBO against the
humans, and the same with the length covariate (style control). Definitions:
``analysis.metrics.bradley_terry`` and docs/methods.md ("Rankings with uncertainty").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from analysis import loaders
from analysis.metrics import bradley_terry as bt
from analysis.metrics.agreement import TIE, vote_outcomes
from analysis.profiles import Profile
from annotations.models import Study
from annotations.vocabulary import Condition, JudgeSlot
from judging.vocabulary import TIE as VERDICT_TIE

HUMANS = "humans"
RUNS = (Condition.PLAIN, Condition.ORDER)  # un-cued: the cue of every other condition is what it measures
SLOTS = (JudgeSlot.FIRST, JudgeSlot.SECOND)
# 500, not 1000: the length-controlled refits cost about a second per 1000 replicates and 1000
# comparisons (CoBBLEr's humans: 2250 comparisons, 4 s at 1000 on a busy 2-core machine); 500
# draws still place the 2.5% and 97.5% points to a few Elo points (docs/methods.md, "Speed").
# The same draws serve every subject (paired).
REPLICATES = 500
SEED = 21
RBO_TIES = "a"  # Corsi & Urbano's expected RBO over random tie breaking (BT scores rarely tie)
Compare = Callable[[bt.Scores, bt.Scores], dict | None]  # bt.agreement with the profile's RBO settings


def build(*, study: Study, profile: Profile) -> list[dict]:
    votes = loaders.human_pairwise_frame(study, profile=profile)
    return from_frames(
        votes,
        loaders.judgments_frame(study),
        loaders.responses_frame(study) if not votes.empty else None,
        loaders.candidate_order(study),
        profile=profile,
    )


def human_comparisons(votes: pd.DataFrame, responses: pd.DataFrame | None) -> pd.DataFrame:
    """``pair, instruction, winner, loser, tie, len_w, len_l``: one row per un-cued human vote (a "T" is a tie)."""
    votes = votes[votes["condition"].isin(RUNS)] if not votes.empty else votes
    if votes.empty or responses is None:
        return _empty()
    key = responses.set_index("response")["candidate"]
    size = responses.set_index("response")["text"].str.len()
    outcome = vote_outcomes(votes["choice"], votes["arrangement"])
    votes = votes[outcome.notna()]
    a_won = (outcome[outcome.notna()] != "b").to_numpy()  # a tie keeps the pair's own order
    winner = np.where(a_won, votes["resp_a"], votes["resp_b"])
    loser = np.where(a_won, votes["resp_b"], votes["resp_a"])
    return pd.DataFrame(
        {
            "pair": votes["pair"].to_numpy(),
            "instruction": votes["instruction"].to_numpy(),
            "winner": key.reindex(winner).to_numpy(),
            "loser": key.reindex(loser).to_numpy(),
            "tie": (outcome[outcome.notna()] == TIE).to_numpy(),
            "len_w": size.reindex(winner).to_numpy(dtype=float),
            "len_l": size.reindex(loser).to_numpy(dtype=float),
        }
    )


def judge_comparisons(calls: pd.DataFrame) -> pd.DataFrame:
    """The same columns from one judge's calls: a chosen slot is a win, a "tie" verdict a tie, anything else dropped."""
    calls = calls[calls["condition"].isin(RUNS)]
    decisive = calls["valid"].astype(bool) & calls["choice"].isin(SLOTS)
    calls = calls[decisive | (calls["verdict"] == VERDICT_TIE)]
    if calls.empty:
        return _empty()
    a_won = (calls["chosen_is_a"].astype(bool) | (calls["verdict"] == VERDICT_TIE)).to_numpy()
    return pd.DataFrame(
        {
            "pair": calls["pair"].to_numpy(),
            "instruction": calls["instruction"].to_numpy(),
            "winner": np.where(a_won, calls["cand_a"], calls["cand_b"]),
            "loser": np.where(a_won, calls["cand_b"], calls["cand_a"]),
            "tie": (calls["verdict"] == VERDICT_TIE).to_numpy(),
            "len_w": np.where(a_won, calls["len_a"], calls["len_b"]).astype(float),
            "len_l": np.where(a_won, calls["len_b"], calls["len_a"]).astype(float),
        }
    )


def _empty() -> pd.DataFrame:
    return pd.DataFrame(columns=["pair", "instruction", "winner", "loser", "tie", "len_w", "len_l"])


def length_scale(subjects: dict[str, pd.DataFrame]) -> float:
    """Root mean square of the relative length difference over the distinct pairs any subject compared."""
    rows = pd.concat(list(subjects.values()), ignore_index=True).drop_duplicates("pair")
    relative = bt.length_covariate(rows["len_w"].to_numpy(), rows["len_l"].to_numpy(), scale=1.0)
    return float(np.sqrt(np.mean(relative**2))) if len(relative) else 0.0


def from_frames(
    votes: pd.DataFrame,
    judgments: pd.DataFrame,
    responses: pd.DataFrame | None,
    order: list[str],
    *,
    profile: Profile,
    replicates: int = REPLICATES,
) -> list[dict]:
    """Rows from the loaders' frames: humans first, then judges by name; subjects with no comparison are left out."""
    subjects = {HUMANS: human_comparisons(votes, responses)}
    for judge in sorted(judgments["judge"].unique()) if not judgments.empty else []:
        subjects[judge] = judge_comparisons(judgments[judgments["judge"] == judge])
    subjects = {name: rows for name, rows in subjects.items() if not rows.empty}
    if not subjects:
        return []
    scale = length_scale(subjects)
    resampling = bt.Resampling.draw(
        pd.concat([rows["instruction"] for rows in subjects.values()]), replicates=replicates, seed=SEED
    )
    compare: Compare = partial(bt.agreement, p=profile.rbo_p, variant=profile.rbo_variant, ties=RBO_TIES)
    fits: dict[str, tuple[bt.Scores | None, bt.Scores | None]] = {}
    for name, rows in subjects.items():
        comparisons = rows.assign(x=bt.length_covariate(rows["len_w"], rows["len_l"], scale) if scale > 0 else 0.0)
        raw = bt.scores(comparisons, resampling, systems=order)
        controlled = bt.scores(comparisons, resampling, systems=order, covariate=True) if scale > 0 else None
        fits[name] = (raw, controlled)
    human_raw, human_controlled = fits.get(HUMANS, (None, None))
    out = []
    for name, (raw, controlled) in fits.items():
        if raw is None:
            continue
        vs = compare(human_raw, raw) if human_raw is not None and name != HUMANS else None
        row = {"subject": name, "kind": "humans" if name == HUMANS else "judge"} | _scores(raw) | {"vs_humans": vs}
        row["length_controlled"] = _controlled(name, raw, controlled, human_controlled, compare)
        row["method"] = _method(replicates, scale)
        out.append(row)
    return out


def _scores(fit: bt.Scores) -> dict:
    """Scores best first; a score only the ridge keeps finite (``Separation.held``) has no interval."""
    held = set(fit.held)
    systems = [
        {
            "system": system,
            "score": bt.elo(fit.theta[k]),
            "ci95": None if system in held or (ci := fit.interval(system)) is None else [bt.elo(v) for v in ci],
            "log_strength": float(fit.theta[k]),
            "n": int(fit.appearances[k]),
            "held_by_ridge": system in held,
        }
        for k, system in enumerate(fit.systems)
    ]
    return {
        "systems": sorted(systems, key=lambda s: (-s["score"], s["system"])),
        "n_comparisons": fit.n_comparisons,
        "n_ties": fit.n_ties,
        "n_instructions": fit.n_instructions,
        "tie_nu": fit.nu if fit.n_ties else None,
        "tie_nu_ci95": bt.interval95(fit.nu_reps) if fit.n_ties else None,
        "excluded": fit.excluded,
        "never_lost": fit.never_lost,
        "never_won": fit.never_won,
        "mle_exists": fit.mle_exists,
        "replicates_converged": fit.replicates_converged,
    }


def _controlled(
    name: str, raw: bt.Scores, controlled: bt.Scores | None, humans: bt.Scores | None, compare: Compare
) -> dict | None:
    """Scores with the length covariate, beta, agreement with the humans' controlled ranking, and the shift."""
    if controlled is None or controlled.beta is None or controlled.beta_reps is None:
        return None
    scores = _scores(controlled)
    return {
        "systems": scores["systems"],
        "beta": controlled.beta,
        # Length decided every decisive comparison: beta is unbounded, held by the ridge.
        "beta_ci95": None if controlled.beta_separated else bt.interval95(controlled.beta_reps),
        "beta_held_by_ridge": controlled.beta_separated,
        "tie_nu": scores["tie_nu"],
        "vs_humans": compare(humans, controlled) if humans is not None and name != HUMANS else None,
        # How far length control moves this subject's own ranking (same draws: paired).
        "vs_uncontrolled": compare(raw, controlled),
    }


def _method(replicates: int, scale: float) -> str:
    covariate = (
        f"length control adds beta * x to the logit, x = the winner's relative length advantage (w - l) / (w + l) "
        f"in characters divided by {scale:.4f}, its root mean square over the pairs compared"
        if scale > 0
        else "no length control (every compared pair has answers of equal length)"
    )
    return (
        "Bradley-Terry with Davidson ties (P(tie) = nu / (e^{d/2} + e^{-d/2} + nu), d the log-strength "
        f"difference), penalised maximum likelihood (ridge {bt.RIDGE} on log-strengths, log nu and beta), "
        "mean log-strength 0; score = 1000 + 400 / ln 10 * log-strength; "
        "comparisons: every un-cued human vote and judge call (plain and order conditions; a judge output "
        "without a verdict is dropped); "
        f"{covariate}; 95% percentile intervals from {replicates} bootstrap resamples of instructions "
        f"(seed {SEED}), the same resamples for every subject, so Kendall tau-b and RBO against the humans "
        "are paired"
    )
