"""Validity of the verdict claims, in small: benchmarks/validity.py on one simulated study size.

The harness simulates studies (quality-driven judges and people, no database), runs the frames
through the report's own code (``analysis.sections.bias``, the agreement section and
``analysis.summary.build_summary``) and counts the claims the cards make. Here: 40 replicates at
750 pairs (50 instructions, 45 raters) of a study where longer answers are better (length and
quality correlate at 0.4) and the judges' own system is the best of the six, judged by a
realistic judge, a judge that follows quality more closely than people, a judge with a
per-instruction slot preference of mean 0, a coin-flipping judge
and a judge with an injected 20% first-slot preference, beside people with no bias at all.
Nobody prefers length or their own answers: every length or self-preference claim is false.

The bounds are loose on purpose (40 replicates: a true 5% false-claim rate gives more than
6 of 40 about 4% of the time); the full harness measures the rates themselves
(``.venv/bin/python -m benchmarks.validity``, docs in its docstring).
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from benchmarks import validity as v

pytestmark = pytest.mark.slow

SIZE = 750
REPLICATES = 40
EXTRAS = 3  # replicates that also build the (slow) agreement section for the coin
PANEL = v.Panel(
    "suite",
    v.StudySpec(rho=0.4, means=(0.5, 0.3, 0.1, -0.1, -0.3, -0.5)),
    (
        v.JudgeSpec("a-realistic"),
        v.JudgeSpec("sharp", tau_scale=0.5),
        v.JudgeSpec("f-slot-pull", slot_pull_sd=0.15),
        v.JudgeSpec(v.COIN, kind="coin"),
        v.JudgeSpec("position-20", bias="position", beta=0.20),
    ),
    extras=True,
)
# Where longer and own answers are better, a judge that follows quality less closely than people
# (the coin; the 20% first-slot judge, whose quality share is diluted) picks them less often than
# people do. Before the reference claims were made in the "more than people" direction only, the
# coin was told "biased toward shorter answers, more than people" in 37 of 40 replicates and
# "toward other models' answers" in 27, and the first-slot judge in 15 of 40; these tests were
# strict xfails then.
# A judge that follows quality more closely than people (the sharp one, tau 0.72 against people's
# 1.2) picks longer and own answers *more* often than people: compared with people on raw rates
# (analysis/metrics/reference.py before quality_matched) it was told "biased toward longer
# answers, more than people" in 5 of these 40 replicates and "toward its own answers" in 2; at
# equal quality, 1 of 40. The full harness's sharp-as-one-rater judge at 5,250 pairs: 56% before.
NULL_SUBJECTS = ("humans", "a-realistic", "sharp", "f-slot-pull", v.COIN)


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    tasks = v.plan({SIZE: v.Counts(REPLICATES, REPLICATES, EXTRAS)}, panels=(PANEL,))
    tasks = [replace(t, paper=False) for t in tasks]  # the default profile only
    records = v.run(tasks, jobs=min(2, os.cpu_count() or 1))
    entries = v.aggregate(records, panels=(PANEL,))
    return {e["subject"]: e for e in entries if e["profile"] == "default"}


@pytest.mark.parametrize("subject", NULL_SUBJECTS)
def test_no_bias_makes_few_false_claims(results, subject):
    # Before commit 2f5a4b1 (length and self-preference claimed only against people on the same
    # pairs, cluster-level tests) this failed: raw rates tested against 1/2 called people and
    # quality-driven judges "biased toward longer answers" and judges "toward their own answers".
    entry = results[subject]
    assert entry["replicates"] == REPLICATES
    assert entry["family_wise_false"]["rate"] <= 0.15, entry["rows"]


@pytest.mark.parametrize("subject", NULL_SUBJECTS)
def test_position_interval_covers_zero(results, subject):
    coverage = results[subject]["rows"]["position_preference"]["coverage"]
    assert coverage["n"] == REPLICATES
    assert coverage["rate"] >= 0.80, coverage


def test_injected_position_bias_is_found(results):
    entry = results["position-20"]
    assert entry["power"]["rate"] >= 0.90, entry["power"]
    # Its true effect is the injected share (a pair judged twice: beta, whatever the answers).
    row = entry["rows"]["position_preference"]
    assert row["truth"] == pytest.approx(0.20, abs=1e-9)
    assert row["coverage"]["rate"] >= 0.80, row["coverage"]


def test_injected_position_bias_is_all_that_is_claimed(results):
    entry = results["position-20"]
    assert entry["family_wise_false"]["rate"] <= 0.15, entry["rows"]


def test_a_coin_never_agrees_with_people(results):
    # Weak by necessity (3 seeded replicates: the agreement section is slow). The rate is measured
    # apart: with each condition's claim its own interval test (three per judge, no correction) a
    # coin "agreed" somewhere in 35 of 400 simulated reports at 750 pairs; with the judge's
    # conditions one Holm family, in 5 of 400 (docs/methods.md "Agreement claims"). Before the
    # chance-level reading of percent agreement (commit 0ce23bf) every coin "agreed".
    agree = results[v.COIN]["says_agreement"]
    assert agree["n"] == EXTRAS
    assert agree["k"] == 0


def test_people_with_habits_of_their_own_get_no_claim():
    """Every rater leans to one slot (mean 0): across 60 people-only replicates the Humans card
    claims nothing about position. The two-way t test it replaced claimed position bias on
    people about 1.5 times too often without any habit."""
    panel = next(p for p in v.PANELS if p.name == "h-rater-pull")
    tasks = v.plan({SIZE: v.Counts(60, 0, 0)}, panels=(panel,), humans_only=True)
    records = v.run(tasks, jobs=min(2, os.cpu_count() or 1))
    assert {r["subject"] for r in records} == {"humans"}
    [people] = v.aggregate(records, panels=(panel,))
    position = people["rows"]["position_preference"]
    assert position["false_claims"]["k"] <= 2  # 60 replicates at 1-2%: 0-2 expected
    assert people["family_wise_false"]["rate"] <= 0.10
