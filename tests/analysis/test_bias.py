"""Bias rates on synthetic judgment frames whose right answers are known by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.metrics.bias import judge_bias_counts, judge_bias_units
from analysis.metrics.bias_rows import finish_rows, judge_units, rates
from analysis.metrics.cluster_tests import DRAWS
from analysis.metrics.human_bias import human_bias_counts, human_bias_records, word_tokens
from analysis.metrics.stats import benjamini_hochberg, holm, wilson
from analysis.profiles import get_profile

PAPER, DEFAULT = get_profile("cobbler-paper"), get_profile("default")
KEYS = ["vicuna", "gpt4", "llama", "llamav2", "alpaca"]


def make_judgments(answer, *, condition="order", judge="j", self_key="", n_inst=4, lengths=None):
    """Every pair of KEYS for n_inst instructions, both presentations, answered by ``answer``.

    ``answer(pair_no, presentation, slot1_is_a, cue_slot)`` returns "first", "second" or "" (invalid).
    """
    rows, pair_no = [], 0
    for inst in range(n_inst):
        for i, a in enumerate(KEYS):
            for b in KEYS[i + 1 :]:
                len_a, len_b = lengths(a, b) if lengths else (100 + 10 * i, 100)
                for pres in (1, 2):
                    if condition in ("order", "compassion"):
                        slot1_is_a, cue = pres == 1, None
                    else:  # one arrangement, the cue moves (Judgment docstring)
                        slot1_is_a, cue = pair_no % 2 == 0, ("first" if pres == 1 else "second")
                    choice = answer(pair_no, pres, slot1_is_a, cue)
                    rows.append(
                        {
                            "judge": judge,
                            "self_key": self_key,
                            "job": 1,
                            "instruction": inst,
                            "pair": pair_no,
                            "cand_a": a,
                            "cand_b": b,
                            "len_a": len_a,
                            "len_b": len_b,
                            "condition": condition,
                            "presentation": pres,
                            "slot1_is_a": slot1_is_a,
                            "choice": choice,
                            "chosen_is_a": bool(choice) and ((choice == "first") == slot1_is_a),
                            "valid": bool(choice),
                            "cue_slot": cue,
                        }
                    )
                pair_no += 1
    return pd.DataFrame(rows)


def table(frame, profile):
    counts = rates(judge_bias_counts(frame, profile=profile), denominator=profile.denominator)
    return counts.set_index("bias")


def test_a_first_slot_judge_is_always_order_biased_first():
    frame = make_judgments(lambda *_: "first")
    got = table(frame, PAPER)
    assert got.loc["order_first", "value"] == 1.0 and got.loc["order_first", "n"] == 40
    assert got.loc["order_last", "value"] == 0.0
    # Every pair is order-biased, so salience keeps nothing and is undefined.
    assert got.loc["salience_longer", "n"] == 0 and np.isnan(got.loc["salience_longer", "value"])


def test_paper_divides_by_all_comparisons_default_by_valid_ones():
    # Prompt 2 invalid on every other pair; otherwise a first-slot judge.
    frame = make_judgments(lambda n, pres, *_: "" if (pres == 2 and n % 2) else "first")
    paper, default = table(frame, PAPER), table(frame, DEFAULT)
    assert paper.loc["order_first", "value"] == 0.5 and paper.loc["order_first", "n"] == 40
    assert default.loc["order_first", "value"] == 1.0 and default.loc["order_first", "n"] == 20
    assert default.loc["order_first", "value_all"] == 0.5
    assert paper.loc["order_first", "valid_rate"] == 1.0  # prompt 1 always answered


def test_compassion_as_coded_counts_a_consistent_m1_preference():
    # Always names m1 (response a), which moves from slot 1 to slot 2 between prompts.
    frame = make_judgments(lambda n, pres, slot1_is_a, cue: "first" if slot1_is_a else "second", condition="compassion")
    assert table(frame, PAPER).loc["compassion_first", "value"] == 1.0
    positional = table(frame, DEFAULT)
    assert positional.loc["compassion_first", "value"] == 0.0
    assert positional.loc["compassion_last", "value"] == 0.0


def test_egocentric_matches_self_exactly_not_by_substring():
    # llamav2 always picks llamav2 when present, else slot 1; "llama" must not count as self.
    frame = make_judgments(lambda *_: "first", judge="llamav2", self_key="llamav2")
    own_is_a = frame["cand_a"] == "llamav2"
    frame["choice"] = np.where(
        frame["cand_a"].eq("llamav2") | frame["cand_b"].eq("llamav2"),
        np.where(own_is_a == frame["slot1_is_a"], "first", "second"),
        "first",
    )
    frame["chosen_is_a"] = (frame["choice"] == "first") == frame["slot1_is_a"]
    paper, default = table(frame, PAPER), table(frame, DEFAULT)
    assert paper.loc["egocentric", "n"] == 4 * 4  # 4 self pairs per instruction, not 7
    assert paper.loc["egocentric", "value"] == 1.0  # consistent self-choice: prompt 2 moved slot
    assert default.loc["egocentric", "value"] == 1.0


def test_salience_credits_length_ties_to_m2_only_in_the_paper_profile():
    # Consistently picks response b (never order-biased); lengths equal for every pair.
    frame = make_judgments(
        lambda n, pres, slot1_is_a, cue: "second" if slot1_is_a else "first", lengths=lambda a, b: (50, 50)
    )
    assert table(frame, PAPER).loc["salience_longer", "value"] == 1.0  # tie -> m2 = b "longer"
    assert table(frame, DEFAULT).loc["salience_longer", "n"] == 0  # ties carry no length signal


def test_bandwagon_counts_following_the_cue_both_times():
    follow = make_judgments(lambda n, pres, slot1_is_a, cue: cue, condition="bandwagon")
    stubborn = make_judgments(lambda *_: "first", condition="bandwagon")
    assert table(follow, PAPER).loc["bandwagon", "value"] == 1.0
    assert table(stubborn, PAPER).loc["bandwagon", "value"] == 0.0


def test_a_position_biased_judge_is_flagged_by_position_preference():
    # 60% of pairs first twice, 40% last twice: order_first 0.6, order_last 0.4, preference 0.2.
    biased = make_judgments(lambda n, *_: "first" if n % 10 < 6 else "second", n_inst=60)
    observed = rates(judge_bias_counts(biased, profile=PAPER), denominator="all")
    units = judge_units(judge_bias_units(biased, profile=PAPER), denominator="all")
    rows = {r["bias"]: r for r in finish_rows(observed, units, correction="holm")}
    assert rows["order_first"]["value"] == pytest.approx(0.6)
    assert rows["order_first"]["p_value"] is None  # tested by position_preference, not alone
    pref = rows["position_preference"]
    assert pref["value"] == pytest.approx(0.2) and (pref["hits"], pref["mirror"]) == (360, 240)
    # Every one of the 60 instructions leans first: the sign-flip test's floor, 1 / (1 + draws),
    # and Holm within this judge's claimed rows (position_preference alone here).
    assert pref["p_value"] == pytest.approx(1 / (1 + DRAWS)) and pref["p_adjusted"] == pref["p_value"]
    assert pref["ci95"][0] < 0.2 < pref["ci95"][1]
    assert pref["ci95"] == pref["effect_ci95"]
    assert rows["order_first"]["ci95"][0] < 0.6 < rows["order_first"]["ci95"][1]
    assert "Holm" in pref["method"] and "random" not in pref["method"]
    assert rows["order_first"]["random"] == 0.25 and rows["salience_longer"]["random"] == 0.5
    assert pref["random"] == 0.0


def test_intervals_and_corrections_match_hand_values():
    lo, hi = wilson(0.5, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.4038, 0.5962)
    p = np.array([0.01, 0.04, 0.03, np.nan])
    assert holm(p)[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(holm(p)[3])
    assert benjamini_hochberg(p)[:3] == pytest.approx([0.03, 0.04, 0.04])


def _twin_answers(choose):
    """One rater, 15 pairs x 2 presentations per condition; ``choose(condition, pair, twin)`` -> A/B."""
    rows = []
    for condition in ("order", "bandwagon", "attentional"):
        for pair in range(15):
            for twin in range(2):
                pres = ("ab", "ba")[twin] if condition == "order" else "ab"
                cue = None if condition == "order" else ("A", "B")[twin]
                rows.append(
                    {
                        "rater": 1,
                        "batch": condition,
                        "instruction": 0,
                        "condition": condition,
                        "pair_index": pair,
                        "position": 2 * pair + twin,
                        "pair": pair,
                        "resp_a": 2 * pair,
                        "resp_b": 2 * pair + 1,
                        "arrangement": pres,
                        "cue_slot": cue,
                        "choice": choose(condition, pair, twin),
                        "units_a": 10 + pair % 2,
                        "units_b": 10,
                    }
                )
    return pd.DataFrame(rows)


def test_human_bias_per_rater_definitions():
    # Order: A twice on pairs 0-5 (first), B twice on 6-8 (last), else the same response (a).
    def choose(condition, pair, twin):
        if condition == "order":
            if pair < 6:
                return "A"
            if pair < 9:
                return "B"
            return ("A", "B")[twin]  # response a both times (it moved to slot B)
        return ("A", "B")[twin] if pair < 12 else "A"  # follows the cue on 12 of 15

    records = human_bias_records(_twin_answers(choose), denominator="all")  # the authors' rules (cobbler-paper)
    counts = human_bias_counts(records, per_rater=True).set_index("bias")
    assert counts.loc["order_first", "value_mean"] == pytest.approx(6 / 15)
    assert counts.loc["order_last", "value_mean"] == pytest.approx(3 / 15)
    # Salience: 6 consistent pairs (9-14), response a longer on odd pairs (9, 11, 13).
    assert counts.loc["salience_longer", "n_valid"] == 6
    assert counts.loc["salience_longer", "value_mean"] == pytest.approx(3 / 6)
    # By default equal lengths (the even pairs) leave n, as for the judges: 3 of 3 kept pairs.
    default = human_bias_counts(human_bias_records(_twin_answers(choose)), per_rater=True).set_index("bias")
    assert default.loc["salience_longer", "n_valid"] == 3
    assert default.loc["salience_longer", "value_mean"] == pytest.approx(3 / 3)
    assert counts.loc["bandwagon", "value_mean"] == pytest.approx(12 / 15)
    assert counts.loc["attentional", "value_mean"] == pytest.approx(12 / 15)


def test_word_tokens_follow_treebank_conventions():
    assert word_tokens('I can\'t say "no".') == ["I", "ca", "n't", "say", "``", "no", "''", "."]
    assert word_tokens("an 'R' to 3,000 well-known cats: e.g.\nyes") == [
        "an",
        "'",
        "R",
        "'",
        "to",
        "3,000",
        "well-known",
        "cats",
        ":",
        "e.g.yes",
    ]


def test_egocentric_in_the_compassion_run_as_coded_and_corrected():
    # gpt4 names itself in prompt 1 only; in prompt 2 (roles swapped) it keeps the slot.
    frame = make_judgments(lambda n, pres, *_: "first", judge="gpt4", self_key="gpt4", condition="compassion")
    has_self = frame["cand_a"].eq("gpt4") | frame["cand_b"].eq("gpt4")
    self_pairs = frame[has_self & (frame["presentation"] == 1)]
    own_first = ((self_pairs["cand_a"] == "gpt4") == self_pairs["slot1_is_a"]).mean()
    paper, default = table(frame, PAPER), table(frame, DEFAULT)
    # As coded: self in prompt 1 and not again after the swap = every self pair where gpt4 sat first.
    assert paper.loc["egocentric_comp", "value"] == own_first
    # Corrected: a first-slot judge never names itself twice when the names move.
    assert default.loc["egocentric_comp", "value"] == 0.0
