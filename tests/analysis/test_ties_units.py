"""Ties and agreement units, by hand (docs/methods.md "Ties and agreement units").

Outcomes: a vote names the pair's response_a ("a"), response_b ("b") or a tie, never a slot
for a tie. Units: (condition, pair, cued response), split by presentation for twin tasks.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from django.core.management import call_command

from analysis.metrics.agreement import (
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    rater_units,
    vote_outcomes,
)
from analysis.profiles import get_profile
from analysis.sections import agreement
from annotations.models import Study
from tests.conftest import SAMPLES_DIR


def _answers(rows):
    """rows: (rater, instruction, pair, presentation, choice[, cue_slot]) under condition plain."""
    out = []
    for i, row in enumerate(rows):
        rater, instruction, pair, presentation, choice, *cue = row
        out.append(
            {
                "rater": rater,
                "batch": 1,
                "position": i,
                "instruction": instruction,
                "condition": "plain",
                "pair": pair,
                "arrangement": presentation,
                "choice": choice,
                "cue_slot": cue[0] if cue else None,
            }
        )
    return pd.DataFrame(out)


def test_a_tie_is_a_tie_whatever_the_presentation():
    got = vote_outcomes(
        pd.Series(["A", "B", "A", "B", "T", "T", "?"]), pd.Series(["ab", "ab", "ba", "ba", "ab", "ba", "ab"])
    )
    assert got.tolist() == ["a", "b", "b", "a", "tie", "tie", None]


# P: r1 A/ab -> a, r2 B/ba -> a, r3 T -> tie.  Q: r1 A/ab -> a, r2 B/ab -> b, r3 B/ba -> a.
# R: r1 only (one vote: not pairable).
HAND = [
    ("r1", 0, "P", "ab", "A"),
    ("r2", 0, "P", "ba", "B"),
    ("r3", 0, "P", "ab", "T"),
    ("r1", 1, "Q", "ab", "A"),
    ("r2", 1, "Q", "ab", "B"),
    ("r3", 1, "Q", "ba", "B"),
    ("r1", 2, "R", "ab", "A"),
]


def test_units_are_pairs_across_presentations():
    tidy = rater_units(_answers(HAND))
    by_unit = tidy.groupby("unit")["value"].apply(sorted).to_dict()
    assert by_unit == {"plain:P:-": ["a", "a", "tie"], "plain:Q:-": ["a", "a", "b"], "plain:R:-": ["a"]}


def test_ties_as_a_third_class_by_hand():
    tidy = rater_units(_answers(HAND))
    # Percent: rater pairs that agree / rater pairs. P: (r1, r2) of 3; Q: (r1, r3) of 3 -> 2/6.
    pct = percent_agreement(tidy, replicates=0)
    assert (pct.value, pct.n) == (pytest.approx(1 / 3), 2)
    # Alpha (nominal). Coincidences: P o_aa = 1, o_a,tie = o_tie,a = 1; Q o_aa = 1, o_ab = o_ba = 1.
    # n_a = 4, n_b = 1, n_tie = 1, n = 6; D_o = 4; D_e = 2 (4*1 + 4*1 + 1*1) = 18;
    # alpha = 1 - (n - 1) D_o / D_e = 1 - 5 * 4 / 18 = -1/9.
    alpha = krippendorff_alpha(tidy, level="nominal", replicates=0)
    assert (alpha.value, alpha.n) == (pytest.approx(-1 / 9), 2)
    # Fleiss (3 raters; R has one vote and is not pairable): P_i = (2^2 + 1 - 3) / 6 = 1/3 both units;
    # p = (4/6, 1/6, 1/6), P_e = 1/2; kappa = (1/3 - 1/2) / (1/2) = -1/3.
    kappa = fleiss_kappa(tidy, replicates=0)
    assert (kappa.value, kappa.n) == (pytest.approx(-1 / 3), 2)


def test_ties_excluded_by_hand():
    tidy = rater_units(_answers(HAND))
    tidy = tidy[tidy["value"] != "tie"]
    # P {a, a}: 1/1; Q {a, b, a}: 1/3 -> 2/4.
    assert percent_agreement(tidy, replicates=0).value == pytest.approx(0.5)
    # o_aa = 2 + 1, o_ab = o_ba = 1; n_a = 4, n_b = 1, n = 5; D_o = 2, D_e = 8; alpha = 1 - 4 * 2 / 8 = 0.
    assert krippendorff_alpha(tidy, level="nominal", replicates=0).value == pytest.approx(0.0)


def test_twin_tasks_split_a_unit_by_presentation_and_cues_name_a_response():
    rows = [
        ("r1", 0, "X", "ab", "A"),
        ("r1", 0, "X", "ba", "A"),  # r1 saw both orders: twins
        ("r2", 0, "X", "ab", "A"),
        # Bandwagon-like cue: slot B in "ab" and slot A in "ba" both cue response_b.
        ("r1", 0, "Y", "ab", "B", "B"),
        ("r2", 0, "Y", "ba", "A", "A"),
        ("r3", 0, "Y", "ab", "B", "A"),
    ]
    tidy = rater_units(_answers(rows))
    units = tidy.groupby("unit")["rater"].apply(sorted).to_dict()
    assert units == {
        "plain:X:-:ab": ["r1", "r2"],
        "plain:X:-:ba": ["r1"],
        "plain:Y:a": ["r3"],
        "plain:Y:b": ["r1", "r2"],
    }
    assert tidy.set_index(["unit", "rater"]).loc[("plain:Y:b", "r2"), "value"] == "b"


@pytest.mark.django_db
def test_mtbench_sample_rater_agreement_and_ties_against_the_judge():
    """The shared sample: only (901, turn 1, x-y) has several votes: expert_1 x, expert_2 x
    (voted as y-x), author_1 tie. gpt-4 is decisive on 901/1, 901/2, 902/2, 903/1 x-z (all x)."""
    call_command("import_mtbench", str(SAMPLES_DIR / "mtbench_sample.jsonl"), "--study", "ties", verbosity=0)
    rows = agreement.build(study=Study.objects.get(slug="ties"), profile=get_profile("default"))
    iaa = {(r["metric"], r["ties"]): r for r in rows if r["kind"] == "inter_annotator"}
    # Ties a third class: one unit {a, a, tie}. Percent 1/3. Alpha: o_aa = 1, o_a,tie = o_tie,a = 1,
    # n = 3, D_o = 2, D_e = 2 * 2 * 1 = 4: alpha = 1 - 2 * 2 / 4 = 0. Fleiss: P_i = 1/3,
    # P_e = (2/3)^2 + (1/3)^2 = 5/9: kappa = (1/3 - 5/9) / (4/9) = -1/2.
    assert (iaa["percent", "third-class"]["value"], iaa["percent", "third-class"]["n"]) == (pytest.approx(1 / 3), 1)
    assert iaa["krippendorff_alpha", "third-class"]["value"] == pytest.approx(0.0)
    assert iaa["fleiss_kappa", "third-class"]["value"] == pytest.approx(-0.5)
    # Ties left out: {a, a}: percent 1; alpha and kappa undefined (no expected disagreement).
    assert iaa["percent", "excluded"]["value"] == 1.0
    assert iaa["krippendorff_alpha", "excluded"]["value"] is None
    assert iaa["fleiss_kappa", "excluded"]["value"] is None
    vs = {(r["metric"], r["ties"]): r for r in rows if r["kind"] == "human_vs_judge" and r["a"] == "humans:plain"}
    # S1: six votes meet a decisive gpt-4 verdict (901/1 x3, 901/2, 902/2, 903/1 x-z); only the tie misses: 5/6.
    # Before, the tie (shown as x-y, "ab") was read as slot B, a vote for y.
    assert (vs["percent", "third-class"]["value"], vs["percent", "third-class"]["n"]) == (pytest.approx(5 / 6), 6)
    # Cohen: human (5 a, 1 tie) vs judge (6 a): p_o = 5/6 = p_e, kappa 0.
    assert vs["cohen_kappa", "third-class"]["value"] == pytest.approx(0.0)
    assert (vs["percent", "excluded"]["value"], vs["percent", "excluded"]["n"]) == (1.0, 5)
    per_rater = {
        r["a"]: r
        for r in rows
        if r["kind"] == "human_vs_judge" and r["metric"] == "percent" and r["ties"] == "third-class"
    }
    assert per_rater["author_1"]["value"] == 0.0 and per_rater["author_1"]["n"] == 1
    assert all(r["ties_rule"] for r in rows if r["kind"] != "judge_vs_judge" and "ties" in r)
    assert not any(isinstance(r["value"], float) and math.isnan(r["value"]) for r in rows)
