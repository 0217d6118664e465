"""The report's ``length_control`` section (docs/methods.md, "Length control") for one study."""

from __future__ import annotations

from analysis.length import DEFAULT_RESAMPLES, DEFAULT_SEED, length_control_table
from analysis.length.stats import CLUSTER_RESAMPLES, CLUSTER_SEED
from analysis.loaders.length import load_verdicts, load_votes, response_lengths
from analysis.profiles import Profile
from annotations.models import Study


def build(*, study: Study, profile: Profile) -> dict:
    """Every length-control number, with the profile choices that produced it.

    With no pairwise human votes the lists are empty and the verdict is
    ``inconclusive`` (the rule's first branch: no interval on matched pairs).
    """
    responses = response_lengths(study=study, profile=profile)
    votes = load_votes(study=study, responses=responses, profile=profile)
    verdicts = load_verdicts(study=study, responses=responses)
    table = length_control_table(
        votes, verdicts, join=profile.pair_join, seed=DEFAULT_SEED, resamples=DEFAULT_RESAMPLES
    )
    return {
        "unit": profile.length_unit,
        "join": profile.pair_join,
        "scope": profile.length_scope,
        # Every agreement (and so the verdict's overlap rule): Wilson at n / design effect, the
        # design effect from a cluster bootstrap over questions (docs/methods.md, Length control).
        "interval": f"wilson95 at the effective n (cluster bootstrap over questions, {CLUSTER_RESAMPLES} resamples, "
        f"seed {CLUSTER_SEED})",
        "difference_interval": f"bootstrap95 over questions, {DEFAULT_RESAMPLES} resamples",
        "seed": DEFAULT_SEED,
        **table,
    }
