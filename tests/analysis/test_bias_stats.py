"""Hand-worked checks of every new bias statistic (docs/methods.md, "Bias rates").

Each frame is small enough to count on paper; the expected numbers are derived in the comments.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.length.stats import cluster_rate
from analysis.metrics.bias import judge_bias_counts, judge_bias_units
from analysis.metrics.bias_rows import finish_rows, human_units, judge_units, rates
from analysis.metrics.cluster_tests import tango_paired
from analysis.metrics.human_bias import human_bias_counts, human_bias_records, human_bias_units
from analysis.metrics.stats import (
    bootstrap_weights,
    cluster_weights,
    cluster_wilson,
    design_effect,
    ratio_replicates,
    sign_test,
    wilson,
)
from analysis.profiles import get_profile

DEFAULT = get_profile("default")


def test_sign_test_matches_hand_binomial_tails():
    # k = 0 of m = 5: P(X <= 0) = 1/32, two-sided 2/32 = 0.0625.
    assert sign_test(0, 5) == pytest.approx(0.0625)
    assert sign_test(5, 5) == pytest.approx(0.0625)
    # k = 1 of 6: P(X <= 1) = (1 + 6) / 64 = 7/64, two-sided 14/64 = 0.21875.
    assert sign_test(1, 6) == pytest.approx(14 / 64)
    # k = 3 of 6: the middle, 2 * P(X <= 3) = 2 * 42/64 > 1, so 1.
    assert sign_test(3, 6) == 1.0
    # 10 of 10: 2 / 1024.
    assert sign_test(10, 10) == pytest.approx(2 / 1024)
    assert sign_test(0, 0) == 1.0  # no discordant pair: no evidence
    with pytest.raises(ValueError):
        sign_test(3, 2)


def test_sign_test_equals_scipy_binomtest():
    from scipy.stats import binomtest

    for k, m in ((0, 1), (2, 9), (7, 9), (13, 40), (30, 31), (50, 100)):
        assert sign_test(k, m) == pytest.approx(binomtest(k, m, 0.5).pvalue, rel=1e-12)


def test_design_effect_and_cluster_wilson_by_hand():
    # Replicates 0.4, 0.6 (var with ddof=1: ((-.1)^2 + .1^2) / 1 = 0.02); binomial var at
    # 0.5 over n = 100 is 0.0025, so deff = 8 and the effective n is 12.5.
    reps = np.array([0.4, 0.6])
    assert design_effect(0.5, 100, reps) == pytest.approx(8.0)
    assert cluster_wilson(0.5, 100, reps) == pytest.approx(wilson(0.5, 12.5))
    # Less spread than binomial: floored at 1, i.e. Wilson at n.
    assert design_effect(0.5, 100, np.array([0.5, 0.5001])) == 1.0
    assert cluster_wilson(0.5, 100, np.array([0.5, 0.5001])) == pytest.approx(wilson(0.5, 100))
    # A rate of 0 has no binomial variance: deff 1, and Wilson's [0, 1.96^2/(n + 1.96^2)].
    lo, hi = cluster_wilson(0.0, 40, np.zeros(5))
    assert lo == 0.0 and hi == pytest.approx(1.959964**2 / (40 + 1.959964**2), rel=1e-5)


def test_cluster_weights_multiply_the_two_clusterings():
    # Units (rater, instruction): (0,0), (0,1), (1,1). Weight = rater multiplicity x instruction's.
    codes = [np.array([0, 0, 1]), np.array([0, 1, 1])]
    w = cluster_weights(codes, replicates=4, seed=9)
    r = bootstrap_weights(2, replicates=4, seed=9)
    i = bootstrap_weights(2, replicates=4, seed=10)
    assert w == pytest.approx(np.column_stack([r[:, 0] * i[:, 0], r[:, 0] * i[:, 1], r[:, 1] * i[:, 1]]))
    # Ratio of weighted sums: with weights (2, 0, 1) and num (1, 5, 3) over den (2, 2, 4):
    # (2*1 + 0*5 + 1*3) / (2*2 + 0 + 1*4) = 5 / 8.
    got = ratio_replicates(np.array([1, 5, 3]), np.array([2, 2, 4]), np.array([[2.0, 0.0, 1.0]]))
    assert got == pytest.approx([5 / 8])


def _order_frame(outcomes: list[tuple[int, str, str]]) -> pd.DataFrame:
    """Order-run calls: (instruction, prompt-1 slot, prompt-2 slot) per pair, "" = invalid."""
    rows = []
    for pair, (inst, o1, o2) in enumerate(outcomes):
        for pres, o in ((1, o1), (2, o2)):
            slot1_is_a = pres == 1
            rows.append(
                {
                    "judge": "j",
                    "self_key": "",
                    "job": 1,
                    "instruction": inst,
                    "pair": pair,
                    "cand_a": "x",
                    "cand_b": "y",
                    "len_a": 10 + pair,
                    "len_b": 5,
                    "condition": "order",
                    "presentation": pres,
                    "slot1_is_a": slot1_is_a,
                    "choice": o,
                    "chosen_is_a": bool(o) and ((o == "first") == slot1_is_a),
                    "valid": bool(o),
                    "cue_slot": None,
                }
            )
    return pd.DataFrame(rows)


def _rows(frame: pd.DataFrame, profile=DEFAULT) -> dict[str, dict]:
    observed = rates(judge_bias_counts(frame, profile=profile), denominator=profile.denominator)
    units = judge_units(judge_bias_units(frame, profile=profile), denominator=profile.denominator)
    return {r["bias"]: r for r in finish_rows(observed, units, correction="holm")}


def test_position_preference_by_hand():
    # 10 pairs over 2 instructions: 5 first twice (FF), 1 last twice (SS), 3 consistent (FS/SF:
    # the same response twice), 1 with prompt 2 invalid (dropped under "valid").
    ff, ss = ("first", "first"), ("second", "second")
    outcomes = [
        (0, *ff),
        (0, *ff),
        (0, *ff),
        (0, *ss),
        (0, "first", "second"),
        (1, *ff),
        (1, *ff),
        (1, "second", "first"),
        (1, "first", "second"),
        (1, "first", ""),
    ]
    rows = _rows(_order_frame(outcomes))
    pref = rows["position_preference"]
    # n = 9 pairs with both prompts valid; first 5/9, last 1/9, preference 4/9.
    assert pref["n"] == 9 and (pref["hits"], pref["mirror"]) == (5, 1)
    assert pref["value"] == pytest.approx(4 / 9)
    assert rows["order_first"]["value"] - rows["order_last"]["value"] == pytest.approx(4 / 9)
    # Sign-flip test over the 2 instructions: per-instruction hits - mirror = 3 - 1 and 2 - 0;
    # of the 4 sign patterns, +-(2 + 2) are as extreme as the observed 4: p = 2 / 4.
    assert pref["p_value"] == pytest.approx(0.5)
    assert pref["null_value"] == 0.0 and pref["random"] == 0.0
    # Tango's interval at the effective n contains the one at n (the design effect is >= 1).
    lo, hi = pref["ci95"]
    at_n = tango_paired(5, 1, 9)
    assert lo <= at_n[0] + 1e-9 and hi >= at_n[1] - 1e-9 and lo < 4 / 9 < hi
    # order_first / order_last are descriptive: no test of their own.
    assert rows["order_first"]["p_value"] is None and rows["order_last"]["p_value"] is None
    # Holm within the judge's claimed rows: position_preference alone (salience is descriptive).
    assert pref["p_adjusted"] == pytest.approx(pref["p_value"])
    assert rows["salience_longer"]["p_adjusted"] is None and rows["salience_longer"]["role"] == "descriptive"


def test_bandwagon_follow_twice_against_twice_by_hand():
    # Same arrangement (a first) in both prompts, cue on slot 1 then slot 2.
    # Pairs: 4 follow twice (first, second), 1 against twice (second, first), 3 consistent.
    outcomes = [("first", "second")] * 4 + [("second", "first")] + [("first", "first")] * 2 + [("second", "second")]
    rows = []
    for pair, (o1, o2) in enumerate(outcomes):
        for pres, o, cue in ((1, o1, "first"), (2, o2, "second")):
            rows.append(
                {
                    "judge": "j",
                    "self_key": "",
                    "job": 1,
                    "instruction": pair % 2,
                    "pair": pair,
                    "cand_a": "x",
                    "cand_b": "y",
                    "len_a": 10,
                    "len_b": 5,
                    "condition": "bandwagon",
                    "presentation": pres,
                    "slot1_is_a": True,
                    "choice": o,
                    "chosen_is_a": o == "first",
                    "valid": True,
                    "cue_slot": cue,
                }
            )
    row = _rows(pd.DataFrame(rows))["bandwagon"]
    assert row["value"] == pytest.approx(4 / 8) and (row["hits"], row["mirror"]) == (4, 1)
    # Sign-flip over the 2 instructions (pair % 2): hits - mirror = 2 - 1 and 2 - 0; of the 4
    # sign patterns, +-(1 + 2) are as extreme as the observed 3: p = 2 / 4.
    assert row["p_value"] == pytest.approx(0.5)
    # Expected follow-twice rate if the cue did nothing: (4 + 1) / 2 / 8 = 0.3125.
    assert row["null_value"] == pytest.approx(5 / 16)
    # Per prompt, cued slot chosen: 4 pairs x 2 + 1 x 0 + 3 x 1 = 11 of 16 = 1/2 + (4 - 1)/16.
    assert row["cue_following"] == pytest.approx(11 / 16) and row["no_cue_agreement"] == 0.5
    assert row["random"] == 0.25  # reference column only


def _human_answers() -> pd.DataFrame:
    """Two raters x two instructions x 2 order pairs (twin tasks ab / ba)."""
    rows = []
    # (rater, instruction, pair, choice twin 1, choice twin 2)
    plan = [
        (1, 0, 0, "A", "A"),
        (1, 0, 1, "A", "B"),
        (1, 1, 0, "A", "A"),
        (1, 1, 1, "B", "B"),
        (2, 0, 0, "A", "A"),
        (2, 0, 1, "A", "A"),
        (2, 1, 0, "B", "A"),
        (2, 1, 1, "A", "B"),
    ]
    for rater, inst, pair, c1, c2 in plan:
        for twin, (pres, c) in enumerate((("ab", c1), ("ba", c2))):
            rows.append(
                {
                    "rater": rater,
                    "batch": inst,
                    "instruction": inst,
                    "condition": "order",
                    "pair_index": pair,
                    "position": 2 * pair + twin,
                    "pair": pair,
                    "resp_a": 10 * inst + 2 * pair,
                    "resp_b": 10 * inst + 2 * pair + 1,
                    "arrangement": pres,
                    "cue_slot": None,
                    "choice": c,
                    "units_a": 5 + pair,
                    "units_b": 5,
                }
            )
    return pd.DataFrame(rows)


def test_human_position_preference_and_two_way_units_by_hand():
    records = human_bias_records(_human_answers())
    # A twice: r1i0p0, r1i1p0, r2i0p0, r2i0p1 = 4; B twice: r1i1p1 = 1; 8 pairs.
    pooled = human_bias_counts(records, per_rater=False).set_index("bias")
    assert pooled.loc["position_preference", ["hits", "mirror", "n_valid"]].tolist() == [4, 1, 8]
    assert pooled.loc["position_preference", "value_mean"] == pytest.approx(3 / 8)
    # Per rater x instruction record rates of (A twice - B twice) / 2: r1i0 1/2, r1i1 0, r2i0 1, r2i1 0.
    per = human_bias_counts(records, per_rater=True).set_index("bias")
    assert per.loc["position_preference", "value_mean"] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    units = human_units(human_bias_units(records, per_rater=True))
    pref = units[units["bias"] == "position_preference"].sort_values(["c0", "c1"])
    assert pref["num"].tolist() == pytest.approx([0.5, 0.0, 1.0, 0.0]) and pref["den"].tolist() == [1, 1, 1, 1]
    assert pref[["c0", "c1"]].values.tolist() == [[1, 0], [1, 1], [2, 0], [2, 1]]  # rater, instruction


def test_cluster_rate_for_length_control_by_hand():
    # Question q1: 3 agreements of 3; q2: 0 of 3. Pooled 3/6 = 0.5. Resampling questions gives
    # replicate rates 1, 0.5 or 0 (both q1, one each, both q2): far more spread than binomial,
    # so the interval is much wider than Wilson's on 6 independent votes.
    got = cluster_rate(np.array([1, 1, 1, 0, 0, 0]), np.array(["q1", "q1", "q1", "q2", "q2", "q2"]))
    assert got["agreement"] == 0.5 and got["n"] == 6
    w_lo, w_hi = wilson(0.5, 6)
    assert got["ci95"][0] < w_lo and got["ci95"][1] > w_hi
    # One vote per question: no clustering, Wilson at n (deff floored at 1, up to bootstrap noise).
    flat = cluster_rate(np.array([1, 0, 1, 0, 1, 0, 1, 0]), np.arange(8))
    assert flat["ci95"][0] <= wilson(0.5, 8)[0] + 1e-12
    assert cluster_rate(np.array([]), np.array([]))["ci95"] is None


def _human_units(diffs: dict[tuple[str, int], int]) -> pd.DataFrame:
    """One unit per (rater, instruction) with its hits - mirror; 15 pairs each."""
    return pd.DataFrame(
        [
            {
                "subject": "humans",
                "bias": "position_preference",
                "c0": r,
                "c1": i,
                "num": 0,
                "den": 15,
                "diff": d,
                "size": 15,
            }
            for (r, i), d in diffs.items()
        ]
    )


def test_one_raters_habit_is_not_peoples_bias():
    """One rater always picking the first slot on 20 instructions: 20 instructions agree, one person does."""
    from analysis.metrics.bias_rows import inference
    from analysis.metrics.cluster_tests import sign_flip_p

    diffs = {("habit", i): 6 for i in range(20)}
    diffs |= {(f"r{k}", i): (1 if (k + i) % 2 else -1) for k in range(9) for i in range(20)}
    units = _human_units(diffs)
    hits = sum(max(d, 0) for d in diffs.values())
    mirror = sum(max(-d, 0) for d in diffs.values())
    result = inference(units, hits, mirror, 15 * len(diffs), two_way=True)
    per_instruction = units.groupby("c1")["diff"].sum().to_numpy()
    assert sign_flip_p(per_instruction) < 0.001  # instructions alone would call it a bias
    assert result["p_value"] > 0.05  # ten raters, one of them leaning: no claim
    assert "per-rater (10)" in result["test"] and "larger p-value" in result["test"]


def test_peoples_shared_lean_is_found_on_both_clusterings():
    from analysis.metrics.bias_rows import inference

    diffs = {(f"r{k}", i): 2 for k in range(12) for i in range(12) if (k + i) % 3 == 0}
    units = _human_units(diffs)
    hits = sum(diffs.values())
    result = inference(units, hits, 0, 15 * len(diffs), two_way=True)
    assert result["p_value"] < 0.001
    assert result["effect_ci95"][0] > 0
