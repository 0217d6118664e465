"""The length_control section on DB rows: the worked example of test_length_builders, by hand.

Keys (unordered join; winner named by model). Votes per key, then the judge:
  Q1 x-y d=.50 (>30%):   x, x, tie          judge x
  Q2 x-z d=.05 (<10%):   z, z               judge z
  Q3 y-z d=.20 (10-30%): y, z, y            judge z
  Q4 x-y d=0   (<5%):    x                  judge tie
  Q5 x-z d=.02 (<5%):    x                  judge tie (inconsistent)
  Q6 y-z d=.20 (10-30%): z                  judge z
"""

from __future__ import annotations

import pytest

from analysis.profiles import get_profile
from analysis.sections import length_control
from tests.analysis.test_length_builders import (
    WORKED_ANSWERS,
    WORKED_SECOND_TURN,
    WORKED_VERDICTS,
    WORKED_VOTES,
    mtbench_study,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def worked_study():
    return mtbench_study(
        slug="worked",
        answers=WORKED_ANSWERS,
        votes=WORKED_VOTES,
        verdicts=WORKED_VERDICTS,
        second_turn=WORKED_SECOND_TURN,
    )


def _strata(section: dict) -> dict:
    return {r["bin"]: (r["judge_agreement"], r["judge_n"], r["null_agreement"], r["null_n"]) for r in section["strata"]}


def test_default_profile_unordered_judged_turn(worked_study):
    s = length_control.build(study=worked_study, profile=get_profile("default"))
    assert (s["unit"], s["join"], s["scope"]) == ("chars", "unordered", "judged-turn")
    assert s["counts"] == {
        "votes": 11,
        "decisive_votes": 10,
        "keys": 6,
        "majority_keys": 6,
        "judge_rows": 6,
        "judge_keys": 6,
    }
    (row,) = s["judge_vs_human"]
    # Judge decisive on Q1, Q2, Q3, Q6; it matches the majority on Q1, Q2, Q6: 3/4.
    assert (row["judge"], row["agreement"], row["n"]) == ("gpt-4", 0.75, 4)
    # S1: Q1 2/3 (the tie vote misses), Q2 2/2, Q3 1/3, Q4 0/1 and Q5 0/1 (judge tie), Q6 1/1 -> 6/11.
    assert (row["s1_agreement"], row["s1_n"]) == (pytest.approx(6 / 11), 11)
    # S2: decisive on both sides: Q1 2/2, Q2 2/2, Q3 1/3, Q6 1/1 -> 6/8.
    assert (row["s2_agreement"], row["s2_n"]) == (0.75, 8)
    # Null (longer wins) vs decisive votes, equal lengths (Q4) dropped:
    # Q1 2/2, Q2 0/2, Q3 1/3, Q5 1/1, Q6 0/1 -> 4/9.
    assert (s["null_vs_human"]["agreement"], s["null_vs_human"]["n"]) == (pytest.approx(4 / 9), 9)
    # Null vs decisive judge verdicts: Q1 yes, Q2 no, Q3 yes, Q6 no -> 2/4.
    assert [(r["agreement"], r["n"]) for r in s["null_vs_judge"]] == [(0.5, 4)]
    assert _strata(s) == {
        "<5%": (None, 0, 1.0, 1),  # judge: no decisive key; null: Q5 1/1
        "<10%": (1.0, 1, pytest.approx(1 / 3), 3),  # judge Q2; null Q2 0/2 + Q5 1/1
        "10-30%": (0.5, 2, 0.25, 4),  # judge Q3 no, Q6 yes; null Q3 1/3 + Q6 0/1
        ">30%": (1.0, 1, 1.0, 2),  # Q1
    }
    # Headline: (4/9 - .5) / (.75 - .5) = -2/9.
    assert row["headline_share"] == pytest.approx(-2 / 9)
    # One matched key: Wilson(1/1) = [.2065, 1], half-width .40 > .15.
    assert row["matched_ci95"][0] == pytest.approx(0.20654931, abs=1e-6)
    assert s["verdict"] == row["verdict"] == "inconclusive"


def test_mtbench_post_profile_ordered_whole_conversation(worked_study):
    s = length_control.build(study=worked_study, profile=get_profile("mtbench-post"))
    assert (s["join"], s["scope"]) == ("ordered", "conversation")
    (row,) = s["judge_vs_human"]
    # Ordered keys meet the judge only as written: Q1 (x,y) x/x, Q2 (x,z) z/z, Q3 (z,y) y vs z;
    # Q3 (y,z) has a 1-1 split, Q6's vote is (z,y) but the judge row is (y,z): 2/3.
    assert (row["agreement"], row["n"]) == (pytest.approx(2 / 3), 3)
    # S1 votes on keys with a judge row: Q1 (x,y) 1/2, Q2 (x,z) 1/1, Q3 (z,y) 0/1, Q4 0/1 -> 2/5.
    assert (row["s1_agreement"], row["s1_n"]) == (0.4, 5)
    assert (row["s2_agreement"], row["s2_n"]) == (pytest.approx(2 / 3), 3)
    # Whole conversation: Q1 is 110 vs 110, so the null drops its votes: Q2 0/2, Q3 1/3, Q5 1/1, Q6 0/1.
    assert (s["null_vs_human"]["agreement"], s["null_vs_human"]["n"]) == (pytest.approx(2 / 7), 7)
    assert [(r["agreement"], r["n"]) for r in s["null_vs_judge"]] == [(pytest.approx(1 / 3), 3)]
    assert _strata(s) == {
        "<5%": (1.0, 1, 1.0, 1),  # judge Q1 (now d=0); null Q5
        "<10%": (1.0, 2, pytest.approx(1 / 3), 3),  # judge Q1, Q2; null Q2 0/2 + Q5 1/1
        "10-30%": (0.0, 1, 0.25, 4),
        ">30%": (None, 0, None, 0),
    }
    assert row["headline_share"] == pytest.approx((2 / 7 - 0.5) / (2 / 3 - 0.5))


def test_rejected_work_and_unparseable_judgments_are_left_out(worked_study):
    from annotations.models import Assignment
    from judging.models import Judgment

    Assignment.objects.filter(participant__label="e3").update(review="rejected")
    # An unparseable judge answer is not a tie: it must vanish from S1 too.
    Judgment.objects.filter(raw_text="tie").update(raw_text="I cannot decide [[?]]")
    s = length_control.build(study=worked_study, profile=get_profile("default"))
    assert s["counts"]["votes"] == 9  # e3 voted on Q1 and Q3
    (row,) = s["judge_vs_human"]
    # S1 loses e3's two votes and Q4's vote: Q1 2/2, Q2 2/2, Q3 1/2, Q5 0/1, Q6 1/1 -> 6/8.
    assert (row["s1_agreement"], row["s1_n"]) == (0.75, 8)


def test_a_study_without_votes_gives_empty_lists_and_no_numbers(db):
    from annotations.models import Study

    s = length_control.build(study=Study.objects.create(slug="empty", name="Empty"), profile=get_profile("default"))
    assert s["judge_vs_human"] == s["strata"] == s["null_vs_judge"] == []
    assert s["null_vs_human"] == {"agreement": None, "n": 0, "ci95": None}
    assert s["verdict"] == "inconclusive"
