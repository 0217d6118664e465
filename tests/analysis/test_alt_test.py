"""The alternative annotator test (docs/methods.md, "The alternative annotator test").

A worked example by hand, a second implementation on random data, the report's rows through
the real report code, the untestable reasons, and a null simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_1samp

from analysis.exporters import validate
from analysis.metrics.alt_test import (
    alt_test,
    benjamini_yekutieli,
    human_labels,
    judge_labels,
    leave_one_out,
    one_sided_t,
)
from analysis.services import compose_report
from judging.models import Judgment
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study


def _humans(table: dict[str, dict[int, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(who, item, label) for who, labels in table.items() for item, label in labels.items()],
        columns=["subject", "item", "label"],
    )


# --- (1) The worked example -------------------------------------------------------------------
#
# item | h1  | h2 | h3 | judge
#   1  | a   | a  | a  | a
#   2  | a   | a  | b  | a
#   3  | b   | b  | b  | b
#   4  | a   | b  | b  | b
#   5  | tie | a  | a  | a
#   6  | b   | b  | -  | b
#   7  | a   | -  | a  | b
#   8  | a   | a  | a  | -      (no judge label: not in the test)
#   9  | a   | -  | -  | a      (one annotator: nobody remains when h1 is left out)
#
# S = share of the other annotators with the same label; W_judge = [S_judge >= S_j],
# W_j = [S_j >= S_judge]; d = W_j - W_judge.
# h1 out:  1: others a,a  S_J 1,   S_h1 1   d 0
#          2: others a,b  S_J 1/2, S_h1 1/2 d 0
#          3: others b,b  1, 1              d 0
#          4: others b,b  S_J 1, S_h1 0     d -1
#          5: others a,a  S_J 1, S_h1 0     d -1 (tie is a class of its own)
#          6: others b    1, 1              d 0
#          7: others a    S_J 0, S_h1 1     d +1  (W_judge 0)
#   d = [0,0,0,-1,-1,0,1], n 7, mean -1/7; sum d^2 = 3, sum of squared deviations 3 - 1/7 = 20/7,
#   var 20/42 = 10/21, se = sqrt(10/21)/sqrt(7) = 0.260820; at epsilon 0.1:
#   t = (-1/7 - 0.1)/0.260820 = -0.931128, p = T_6 cdf(t) = 0.193859. rho = 6/7.
# h2 out:  1: a,a 1,1 d 0 | 2: a,b 1/2,1/2 d 0 | 3: 1,1 d 0 | 4: others a,b: S_J 1/2, S_h2 1/2 d 0
#          5: others tie,a: S_J 1/2, S_h2 1/2 d 0 | 6: others b: 1,1 d 0
#   d = [0]*6: zero variance, mean 0 < 0.1: p = 0 (documented rule; scipy gives the same). rho = 1.
# h3 out:  1: 1,1 d 0 | 2: others a,a: S_J 1, S_h3 0 d -1 | 3: d 0 | 4: others a,b: 1/2,1/2 d 0
#          5: others tie,a: 1/2,1/2 d 0 | 7: others a: S_J 0, S_h3 1 d +1
#   d = [0,-1,0,0,0,1], n 6, mean 0, var 2/5, se = sqrt(0.4)/sqrt(6) = 0.258199,
#   t = -0.1/0.258199 = -0.387298, p = T_5 cdf(t) = 0.357236. rho = 5/6.
# BY, m = 3: c(3) = 1 + 1/2 + 1/3 = 11/6, m c(m) = 5.5; thresholds k q / 5.5 = 0.00909, 0.01818,
#   0.02727. Sorted p: h2 0 (<= 0.00909: reject), h1 0.193859 (> 0.01818), h3 0.357236: only h2.
#   Adjusted: h3 0.357236 * 5.5/3 = 0.654933; h1 min(0.193859 * 5.5/2, 0.654933) = 0.533113; h2 0.
# winning rate 1/3, not passed; advantage (6/7 + 1 + 5/6)/3 = 113/126.
WORKED_HUMANS = {
    "h1": {1: "a", 2: "a", 3: "b", 4: "a", 5: "tie", 6: "b", 7: "a", 8: "a", 9: "a"},
    "h2": {1: "a", 2: "a", 3: "b", 4: "b", 5: "a", 6: "b", 8: "a"},
    "h3": {1: "a", 2: "b", 3: "b", 4: "b", 5: "a", 7: "a", 8: "a"},
}
WORKED_JUDGE = {1: "a", 2: "a", 3: "b", 4: "b", 5: "a", 6: "b", 7: "b", 9: "a"}


def test_the_worked_example_by_hand():
    comparisons = leave_one_out(pd.Series(WORKED_JUDGE), _humans(WORKED_HUMANS))
    by_name = {c.annotator: c for c in comparisons}
    assert by_name["h1"].items == [1, 2, 3, 4, 5, 6, 7]
    assert by_name["h1"].differences.tolist() == [0, 0, 0, -1, -1, 0, 1]
    assert by_name["h2"].differences.tolist() == [0] * 6
    assert by_name["h3"].items == [1, 2, 3, 4, 5, 7]
    assert by_name["h3"].differences.tolist() == [0, -1, 0, 0, 0, 1]

    result = alt_test(comparisons, epsilon=0.1, q=0.05)
    tests = {t.annotator: t for t in result.tests}
    assert tests["h1"].t == pytest.approx(-0.931128, abs=1e-6)
    assert tests["h1"].p == pytest.approx(0.193859, abs=1e-6)
    assert tests["h2"].t is None and tests["h2"].p == 0.0
    assert tests["h3"].t == pytest.approx(-0.387298, abs=1e-6)
    assert tests["h3"].p == pytest.approx(0.357236, abs=1e-6)
    assert [tests[a].rejected for a in ("h1", "h2", "h3")] == [False, True, False]
    assert tests["h1"].p_adjusted == pytest.approx(0.533113, abs=1e-6)
    assert tests["h2"].p_adjusted == 0.0
    assert tests["h3"].p_adjusted == pytest.approx(0.654933, abs=1e-6)
    assert (tests["h1"].rho, tests["h2"].rho, tests["h3"].rho) == pytest.approx((6 / 7, 1.0, 5 / 6))
    assert result.winning_rate == pytest.approx(1 / 3)
    assert result.advantage_prob == pytest.approx(113 / 126)
    assert result.passed is False


def test_zero_variance_at_or_above_epsilon_is_never_rejected():
    assert one_sided_t(np.array([1.0, 1.0, 1.0]), 0.1) == (None, 1.0)
    assert one_sided_t(np.zeros(4), 0.0) == (None, 1.0)  # mean(d) = epsilon: H0 holds
    with pytest.raises(ValueError):
        one_sided_t(np.array([0.0]), 0.1)


def test_labels_combine_the_uncued_presentations():
    calls = pd.DataFrame(
        [
            # judge, pair, condition, valid, chosen_is_a, verdict
            ("j", 1, "order", True, True, "first"),
            ("j", 1, "order", True, True, "second"),  # a twice -> a
            ("j", 2, "order", True, True, "first"),
            ("j", 2, "order", True, False, "first"),  # a then b -> tie
            ("j", 3, "order", True, True, "first"),
            ("j", 3, "order", False, False, "tie"),  # a and a tie verdict -> tie
            ("j", 4, "order", True, False, "second"),
            ("j", 4, "order", False, False, ""),  # b and no verdict -> b
            ("j", 5, "plain", False, False, ""),  # no verdict at all -> no label
            ("j", 6, "plain", True, True, "first"),
            ("j", 6, "bandwagon", True, False, "first"),  # a cued run never counts -> a
        ],
        columns=["judge", "pair", "condition", "valid", "chosen_is_a", "verdict"],
    )
    assert judge_labels(calls).set_index("item")["label"].to_dict() == {1: "a", 2: "tie", 3: "tie", 4: "b", 6: "a"}
    votes = pd.DataFrame(
        [
            # rater, rater_label, pair, condition, arrangement, choice
            (7, "", 1, "order", "ab", "A"),
            (7, "", 1, "order", "ba", "B"),  # a twice -> a; no pseudonym: the participant id
            (8, "annotator-1", 1, "plain", "ba", "A"),  # A shown b first -> b
            (8, "annotator-1", 2, "order", "ab", "T"),
            (8, "annotator-1", 2, "order", "ba", "B"),  # tie and a -> tie
            (8, "annotator-1", 3, "attentional", "ab", "A"),  # cued: dropped
        ],
        columns=["rater", "rater_label", "pair", "condition", "arrangement", "choice"],
    )
    labels = {(r.subject, r.item): r.label for r in human_labels(votes).itertuples()}
    assert labels == {("7", 1): "a", ("annotator-1", 1): "b", ("annotator-1", 2): "tie"}


# --- (2) A second implementation: plain loops, scipy's t-test, BY step-up by hand ----------------


def _reference(judge: dict, humans: dict[str, dict], epsilon: float, min_items: int, q: float = 0.05) -> dict:
    raw = {}
    rho = {}
    for j in sorted(humans):
        d, w_judge = [], []
        for item, mine in humans[j].items():
            others = [humans[k][item] for k in humans if k != j and item in humans[k]]
            if item not in judge or not others:
                continue
            s_judge = sum(judge[item] == o for o in others) / len(others)
            s_mine = sum(mine == o for o in others) / len(others)
            d.append(int(s_mine >= s_judge) - int(s_judge >= s_mine))
            w_judge.append(int(s_judge >= s_mine))
        if len(d) < min_items:
            continue
        result = ttest_1samp(np.array(d, dtype=float), epsilon, alternative="less")
        raw[j] = float(result.pvalue)
        rho[j] = sum(w_judge) / len(w_judge)
    m = len(raw)
    c_m = sum(1 / k for k in range(1, m + 1))
    ordered = sorted(raw, key=lambda name: raw[name])
    largest = 0
    for k, name in enumerate(ordered, start=1):
        if raw[name] <= k * q / (m * c_m):
            largest = k
    rejected = {name: k <= largest for k, name in enumerate(ordered, start=1)}
    return {
        "p": raw,
        "rejected": rejected,
        "winning_rate": sum(rejected.values()) / m,
        "advantage": sum(rho.values()) / m,
    }


@pytest.mark.parametrize("seed", range(8))
def test_it_matches_a_second_implementation_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n_items, n_people = 60, int(rng.integers(3, 7))
    truth = rng.choice(["a", "b"], n_items)
    # People follow each item's truth with their own accuracy, tie now and then; some skip items.
    humans = {}
    for k in range(n_people):
        accuracy = rng.uniform(0.55, 0.9)
        labels = {}
        for i in range(n_items):
            if rng.random() < 0.2:
                continue
            u = rng.random()
            labels[i] = truth[i] if u < accuracy else ("tie" if u > 0.95 else {"a": "b", "b": "a"}[truth[i]])
        humans[f"p{k}"] = labels
    # The judge: its own accuracy, any label otherwise, no verdict on some items.
    judge_accuracy = rng.uniform(0.5, 0.95)
    judge = {
        i: truth[i] if rng.random() < judge_accuracy else str(rng.choice(["a", "b", "tie"]))
        for i in range(n_items)
        if rng.random() > 0.1
    }
    comparisons = [c for c in leave_one_out(pd.Series(judge), _humans(humans)) if len(c.items) >= 30]
    for epsilon in (0.05, 0.1, 0.2, 0.3):
        want = _reference(judge, humans, epsilon, min_items=30)
        got = alt_test(comparisons, epsilon=epsilon)
        assert {t.annotator: t.p for t in got.tests} == pytest.approx(want["p"], abs=1e-12)
        assert {t.annotator: t.rejected for t in got.tests} == want["rejected"]
        assert got.winning_rate == pytest.approx(want["winning_rate"])
        assert got.advantage_prob == pytest.approx(want["advantage"])


def test_benjamini_yekutieli_adjusted_values_agree_with_the_step_up_rule():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        p = rng.uniform(0, 0.05, m) ** rng.uniform(0.5, 2)
        adjusted, rejected = benjamini_yekutieli(p.tolist(), 0.05)
        c_m = sum(1 / k for k in range(1, m + 1))
        ranked = np.sort(p)
        hits = [k for k in range(1, m + 1) if ranked[k - 1] <= k * 0.05 / (m * c_m)]
        cutoff = ranked[max(hits) - 1] if hits else -1.0
        assert rejected == [bool(v <= cutoff) for v in p]
        assert all(a >= v for a, v in zip(adjusted, p, strict=True))


# --- (3) and (4) Through the real report -----------------------------------------------------

N_QUESTIONS = 32


def _three_rater_study(slug: str):
    """32 questions, one pair each (x vs y); raters e1-e3 vote on all, e4 on three; the judge
    labels each pair like the majority of e1-e3, and says "tie" on the last one."""
    rng = np.random.default_rng(11)
    answers = {(q, m): m * (10 if m == "x" else 12) for q in range(1, N_QUESTIONS + 1) for m in ("x", "y")}
    votes, verdicts, truth = [], [], {}
    for q in range(1, N_QUESTIONS + 1):
        winner = "model_a" if rng.random() < 0.5 else "model_b"
        said = []
        for rater in ("e1", "e2", "e3"):
            flip = rng.random() < 0.2
            vote = {"model_a": "model_b", "model_b": "model_a"}[winner] if flip else winner
            said.append(vote)
            votes.append((q, "x", "y", vote, rater))
        if q <= 3:
            votes.append((q, "x", "y", winner, "e4"))
        majority = max(set(said), key=said.count)
        verdicts.append((q, "x", "y", "tie" if q == N_QUESTIONS else majority))
        truth[q] = majority
    study = mtbench_study(slug=slug, answers=answers, votes=votes, verdicts=verdicts)
    # The imported fixture stores a tie as "no verdict"; a judge that said tie stores verdict "tie".
    Judgment.objects.filter(job__study=study, raw_text="tie").update(verdict="tie")
    return study, votes, verdicts


@pytest.mark.django_db
def test_the_report_rows_and_the_card_line():
    study, votes, verdicts = _three_rater_study("alt3")
    report = compose_report(study=study, profile="default")  # schema-checked
    validate(report)
    rows = [r for r in report["alt_test"] if r["subject"] == "gpt-4"]
    assert [r["epsilon"] for r in rows] == [0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    assert [r["profile_epsilon"] for r in rows] == [False, True, False, False, False, False]
    assert rows[1]["annotator_kind"] == "crowd workers"
    assert rows[0]["skipped"] == [{"annotator": "e4", "items": 3}]
    # The same data as label frames, straight from the tuples: x is response a (candidate order).
    label = {"model_a": "a", "model_b": "b", "tie": "tie"}
    humans = pd.DataFrame([(rater, q, label[w]) for q, _, _, w, rater in votes], columns=["subject", "item", "label"])
    pair_of = {int(q): pk for pk, q in study.instructions.values_list("pairs__pk", "external_id")}
    humans["item"] = humans["item"].map(pair_of)
    judge = pd.Series({pair_of[q]: label[w] for q, _, _, w in verdicts})
    tested = [c for c in leave_one_out(judge, humans) if len(c.items) >= 30]
    for row in rows:
        want = alt_test(tested, epsilon=row["epsilon"])
        assert row["testable"] is True and row["reason"] is None
        assert (row["n_annotators"], row["n_items"]) == (3, N_QUESTIONS)
        assert row["winning_rate"] == pytest.approx(want.winning_rate)
        assert row["advantage_prob"] == pytest.approx(want.advantage_prob)
        assert row["passed"] == want.passed
        assert {a: v["p"] for a, v in row["p_values"].items()} == pytest.approx({t.annotator: t.p for t in want.tests})
    # The judge is the majority of the other two on every item but the tie: it passes at 0.1.
    at = rows[1]
    assert at["passed"] is True
    wins = sum(v["rejected"] for v in at["p_values"].values())
    card = next(c for c in report["summary"] if c["subject"] == "gpt-4")
    line = next(c for c in card["claims"] if c["kind"] == "alt_test")
    assert line["text"] == (
        f"could replace your annotators at epsilon = 0.1 (crowd workers): wins against {wins} of 3, "
        f"advantage {at['advantage_prob']:.2f} (alt-test on 32 items)"
    )
    assert line["verdict"] == "measured"


@pytest.mark.django_db
def test_a_study_that_cannot_test_says_why():
    # WORKED_VOTES: two or three raters on Q1-Q3; no annotator comes near 30 items.
    report = compose_report(
        study=mtbench_study(slug="altfew", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS),
        profile="default",
    )
    (row,) = report["alt_test"]
    assert (row["subject"], row["testable"], row["epsilon"], row["profile_epsilon"]) == ("gpt-4", False, 0.1, True)
    assert row["reason"] == (
        "needs 30 items per annotator shared with the judge and another annotator: the most any annotator has is 3"
    )
    assert (row["winning_rate"], row["advantage_prob"], row["passed"], row["p_values"]) == (None, None, None, {})
    assert {s["annotator"] for s in row["skipped"]} == {"e1", "e2", "e3"}
    # One rater per item: nothing to leave out.
    single = [v for v in WORKED_VOTES if v[4] == "e1"]
    report = compose_report(
        study=mtbench_study(slug="altone", answers=WORKED_ANSWERS, votes=single, verdicts=WORKED_VERDICTS),
        profile="default",
    )
    (row,) = report["alt_test"]
    assert row["reason"].startswith("needs 2 annotators per item")
    card = next(c for c in report["summary"] if c["subject"] == "gpt-4")
    line = next(c for c in card["claims"] if c["kind"] == "alt_test")
    assert line["verdict"] == "not_enough_data"
    assert line["text"].startswith("cannot be tested against your annotators (alt-test): needs 2 annotators per item")
    validate(report)


def test_a_judge_with_no_uncued_label_on_the_shared_items_says_why():
    from analysis.profiles import DEFAULT
    from analysis.sections.alt_test import from_frames

    calls = pd.DataFrame(
        [("cued-only", 1, "bandwagon", True, True, "first")],
        columns=["judge", "pair", "condition", "valid", "chosen_is_a", "verdict"],
    )
    votes = pd.DataFrame(
        [(7, "p7", 1, "plain", "ab", "A"), (8, "p8", 1, "plain", "ab", "B")],
        columns=["rater", "rater_label", "pair", "condition", "arrangement", "choice"],
    )
    (row,) = from_frames(calls, votes, DEFAULT)
    assert row["reason"] == "no label of this judge (plain or order run) on the 1 item with 2 or more annotators"
    assert row["skipped"] == [{"annotator": "p7", "items": 0}, {"annotator": "p8", "items": 0}]


# --- (5) Null simulation -------------------------------------------------------------------

SIM_LABELS = np.array(["a", "b", "tie"])


def _simulated(rng: np.random.Generator, *, items: int, people: int, judge: str) -> tuple[pd.Series, pd.DataFrame]:
    """Each item has a majority response (chosen with probability 0.55-0.95), the other response
    (70% of the rest) and tie; people draw independently. ``peer``: the judge draws like one more
    person; ``coin``: the judge picks a or b at random."""
    major = rng.integers(0, 2, items)
    p_major = rng.uniform(0.55, 0.95, items)[:, None]
    u = rng.random((items, people + 1))
    drawn = np.where(u < p_major, major[:, None], np.where(u < p_major + (1 - p_major) * 0.7, 1 - major[:, None], 2))
    labels = SIM_LABELS[drawn]
    judge_labels_ = labels[:, people] if judge == "peer" else SIM_LABELS[rng.integers(0, 2, items)]
    humans = pd.DataFrame(
        [(f"h{k}", i, labels[i, k]) for i in range(items) for k in range(people)], columns=["subject", "item", "label"]
    )
    return pd.Series(judge_labels_), humans


def _pass_rate(judge: str, epsilon: float, *, runs: int = 100, seed: int = 5) -> float:
    rng = np.random.default_rng(seed)
    passed = 0
    for _ in range(runs):
        judge_series, humans = _simulated(rng, items=100, people=4, judge=judge)
        passed += alt_test(leave_one_out(judge_series, humans), epsilon=epsilon).passed
    return passed / runs


def test_null_simulation_an_exchangeable_judge_passes_and_a_coin_does_not():
    # Measured (these 100 runs, 4 people, 100 items), pass rates at epsilon 0.05 / 0.1 / 0.15 / 0.2 /
    # 0.25 / 0.3: peer 0.08 / 0.38 / 0.76 / 0.92 / 0.99 / 0.99; coin 0 / 0 / 0 / 0.03 / 0.11 / 0.28.
    # A peer's mean d is 0, so its power grows with epsilon and n (0.1 is a hard margin at 100 items);
    # a coin's mean d is positive wherever people agree, but a wide margin forgives it.
    peer = {e: _pass_rate("peer", e) for e in (0.1, 0.15, 0.2)}
    coin = {e: _pass_rate("coin", e) for e in (0.1, 0.15, 0.2)}
    assert peer[0.2] >= 0.8 and peer[0.15] >= 0.5
    assert peer[0.1] > coin[0.1]
    assert max(coin.values()) <= 0.05
    assert not math.isnan(peer[0.1])
