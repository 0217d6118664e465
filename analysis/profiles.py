"""Definition choices as configuration (README.md, "Reports"; each setting where it applies in docs/methods.md).

Every number in a report is computed under one profile, and the report prints
every choice in it, so a reader knows exactly which definition produced it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Profile:
    name: str
    rbo_variant: str  # "ext" (Webber's extrapolated) or "trunc" (CoBBLEr's truncated prefix sum)
    rbo_p: float
    tie_break: str  # "alpha" (T1: -wins, then name A-Z) | "canonical" (T2: stable, key order) | "tie-aware"
    denominator: str  # "all" (every comparison, as the authors) | "valid" (valid answers only)
    compassion: str  # "paper" (as coded: m1 named twice) | "positional" (same slot twice)
    length_unit: str  # "chars" | "words" | "tokens"
    pair_join: str  # "unordered" | "ordered"
    length_scope: str  # "judged-turn" | "conversation"
    human_length_unit: str  # unit for human salience (paper: regex word tokens)
    # Added by the bias metrics (defaults keep older constructors valid):
    human_average: str = "pooled"  # "pooled" (hits / pairs) | "per-rater" (mean of rater rates)
    egocentric: str = "consistent"  # "paper" (prompt 2 not the same slot) | "consistent" (own twice)
    correction: str = "holm"  # multiple comparisons across the bias table: "holm" | "bh"
    # Which human work counts, in every section (analysis.loaders.counted_work). Rejected never does.
    human_work: str = "approved"  # "approved" | "approved+pending" (submitted, not yet reviewed)
    # Judge rankings from single calls: "both" (wins / appearances over both presentations)
    # | "prompt1" (the authors' prompt-1 wins); docs/methods.md "Order run counterbalancing".
    judge_rankings: str = "both"
    # Work with a quality flag (annotations.quality, docs/methods.md "Crowd quality"): "keep"
    # (it counts like any other) | "exclude" (it does not count, in every section).
    flagged_work: str = "keep"
    # The alternative annotator test (docs/methods.md): the margin epsilon the study's annotators
    # call for (the paper: 0.2 experts, 0.15 skilled annotators, 0.1 crowd workers), the labels an
    # item needs to count and the items an annotator needs to be tested.
    alt_test_epsilon: float = 0.1
    alt_test_min_annotators: int = 2
    alt_test_min_items: int = 30

    def choices(self) -> dict[str, object]:
        return asdict(self)


DEFAULT = Profile(
    name="default",
    rbo_variant="ext",
    rbo_p=0.8,
    tie_break="tie-aware",
    denominator="valid",
    compassion="positional",
    length_unit="chars",
    pair_join="unordered",
    length_scope="judged-turn",
    human_length_unit="chars",
)

PROFILES: dict[str, Profile] = {
    "default": DEFAULT,
    # The authors' choices, quirks included (docs/methods.md, "Bias rates" and "Reproduction"), to reproduce their numbers.
    "cobbler-paper": replace(
        DEFAULT,
        name="cobbler-paper",
        rbo_variant="trunc",
        tie_break="canonical",
        denominator="all",
        compassion="paper",
        human_length_unit="tokens",
        human_average="per-rater",
        egocentric="paper",
        judge_rankings="prompt1",
    ),
    # The published length-control analysis: keys joined as written, whole-conversation lengths.
    "mtbench-post": replace(DEFAULT, name="mtbench-post", pair_join="ordered", length_scope="conversation"),
    # The default, counting only crowd work that raised no quality flag.
    "default-unflagged": replace(DEFAULT, name="default-unflagged", flagged_work="exclude"),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
