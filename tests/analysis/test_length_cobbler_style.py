"""The length_control section on a CoBBLEr-style study (issue 6, item 1), computed by hand.

Study: candidates m1, m2, m3 (positions 0, 1, 2, so pair.response_a is the lower one and the
unordered join's alphabetical key order is the same). Five canonical pairs ("keys"), lengths in
characters (default profile: chars, unordered join, judged turn); d = |la - lb| / max(la, lb):

  K1 i1 m1-m2  100 vs 50   d=.50 (>30%)     longer m1
  K2 i2 m1-m3  100 vs 96   d=.04 (<5%)      longer m1
  K3 i3 m2-m3   80 vs 100  d=.20 (10-30%)   longer m3
  K4 i4 m1-m2  100 vs 92   d=.08 (<10%)     longer m1
  K5 i1 m1-m3  100 vs 75   d=.25 (10-30%)   longer m1

Humans, condition "order": every pair is a task twice (presentation "ab", then its swapped twin
"ba"; same pair_index). Votes named by the winning candidate (T = tie), approved raters only:

  K1  h1: m1 m1   h2: m2 m1   -> 3-1, majority m1    null (m1) 3/4
  K2  h1: m3 m3   h2: T  m3   -> 0-3, majority m3    null (m1) 0/3 (the tie is not decisive)
  K3  h1: m2 m3   h2: m2 m2   -> 3-1, majority m2    null (m3) 1/4
  K4  h1: m1 m2               -> 1-1, no majority    null (m1) 1/2
  K5  h1: m1 m1               -> majority m1         null (m1) 2/2
  h3 (review rejected) votes "A" on all ten tasks; none of it may count.

Judge, condition "order": presentation 1 puts response_a in slot 1, presentation 2 response_b.
The section merges the two presentations: equal winners stand, anything else is a tie.

  K1 p1 m1, p2 m1 -> m1       K2 p1 m3, p2 m3 -> m3       K3 p1 m3, p2 m3 -> m3
  K4 p1 m1, p2 m1 -> m1       K5 p1 "first" (m1), p2 "first" (m3) -> tie (position-bound)
"""

from __future__ import annotations

import itertools

import pytest

from analysis.profiles import get_profile
from analysis.sections import length_control
from annotations.models import (
    Assignment,
    Batch,
    Candidate,
    Instruction,
    Pair,
    Participant,
    Response,
    Study,
    Submission,
    Task,
)
from judging.models import JudgeJob, Judgment, RegisteredModel

pytestmark = pytest.mark.django_db

_ids = itertools.count()

LENGTHS = {
    ("i1", "m1"): 100,
    ("i1", "m2"): 50,
    ("i1", "m3"): 75,
    ("i2", "m1"): 100,
    ("i2", "m3"): 96,
    ("i3", "m2"): 80,
    ("i3", "m3"): 100,
    ("i4", "m1"): 100,
    ("i4", "m2"): 92,
}
PAIRS = [("i1", "m1", "m2"), ("i2", "m1", "m3"), ("i3", "m2", "m3"), ("i4", "m1", "m2"), ("i1", "m1", "m3")]
# Per pair index: {rater: (winner in "ab", winner in "ba")}; "T" is a tie vote.
VOTES = {
    0: {"h1": ("m1", "m1"), "h2": ("m2", "m1")},
    1: {"h1": ("m3", "m3"), "h2": ("T", "m3")},
    2: {"h1": ("m2", "m3"), "h2": ("m2", "m2")},
    3: {"h1": ("m1", "m2")},
    4: {"h1": ("m1", "m1")},
}
# Per pair index: the slot the judge chose in presentations 1 and 2.
VERDICTS = {
    0: ("first", "second"),
    1: ("second", "first"),
    2: ("second", "first"),
    3: ("first", "second"),
    4: ("first", "first"),
}


def cobbler_study(*, slug: str = "cobbler-len", h3_review: str = "rejected") -> Study:
    study = Study.objects.create(slug=slug, name=slug, source=Study.Source.COBBLER)
    cands = {k: Candidate.objects.create(study=study, key=k, position=i) for i, k in enumerate(("m1", "m2", "m3"))}
    items = {
        q: Instruction.objects.create(study=study, index=i, external_id=q, text=f"instruction {q}")
        for i, q in enumerate(("i1", "i2", "i3", "i4"))
    }
    responses = {
        (q, m): Response.objects.create(instruction=items[q], candidate=cands[m], text="x" * n)
        for (q, m), n in LENGTHS.items()
    }
    pairs = [
        Pair.objects.create(instruction=items[q], response_a=responses[q, a], response_b=responses[q, b])
        for q, a, b in PAIRS
    ]

    batch = Batch.objects.create(study=study, condition="order", index=0)
    tasks = {}
    for index, pair in enumerate(pairs):
        for twin, presentation in enumerate(("ab", "ba")):
            tasks[index, presentation] = Task.objects.create(
                batch=batch,
                position=2 * index + twin,
                kind="pairwise",
                condition="order",
                instruction=pair.instruction,
                pair=pair,
                arrangement=presentation,
                pair_index=index,
            )
    assignments = {}
    for rater, review in (("h1", "approved"), ("h2", "approved"), ("h3", h3_review)):
        participant = Participant.objects.create(
            study=study, platform="code", external_hash=f"hash-{rater}", label=rater
        )
        assignments[rater] = Assignment.objects.create(
            batch=batch, participant=participant, status="submitted", review=review
        )

    def vote(rater: str, task: Task, choice: str) -> None:
        slot_a, slot_b = task.slot_responses()
        chosen = {"A": slot_a, "B": slot_b, "T": None}[choice]
        Submission.objects.create(
            assignment=assignments[rater],
            task=task,
            choice=choice,
            chosen_response=chosen,
            idempotency_key=f"lcc{next(_ids)}",
        )

    for index, by_rater in VOTES.items():
        for rater, winners in by_rater.items():
            for presentation, winner in zip(("ab", "ba"), winners, strict=True):
                task = tasks[index, presentation]
                slot_a, _ = task.slot_responses()
                vote(rater, task, "T" if winner == "T" else ("A" if slot_a.candidate.key == winner else "B"))
    for task in tasks.values():
        vote("h3", task, "A")

    judge, _ = RegisteredModel.objects.get_or_create(
        name="lcc-judge",
        defaults={"kind": RegisteredModel.Kind.BASELINE, "baseline": RegisteredModel.Baseline.FIRST_SLOT},
    )
    job = JudgeJob.objects.create(study=study, judge=judge, conditions=["order"], status="completed")
    for index, pair in enumerate(pairs):
        for presentation, choice in zip((1, 2), VERDICTS[index], strict=True):
            slots = (pair.response_a, pair.response_b) if presentation == 1 else (pair.response_b, pair.response_a)
            Judgment.objects.create(
                job=job,
                pair=pair,
                condition="order",
                presentation=presentation,
                slot1_response=slots[0],
                raw_text=f"[[{choice}]]",
                choice=choice,
                chosen_response=slots[0 if choice == "first" else 1],
                valid=True,
                status="done",
            )
    return study


def test_verdict_table_matches_the_hand_merge():
    # Guard on the fixture itself: the slot choices above name the winners the docstring lists.
    study = cobbler_study()
    got = {}
    for j in Judgment.objects.filter(job__study=study).select_related("chosen_response__candidate", "pair"):
        got.setdefault(j.pair.pk, []).append(j.chosen_response.candidate.key)
    assert sorted(tuple(v) for v in got.values()) == sorted(
        [("m1", "m1"), ("m3", "m3"), ("m3", "m3"), ("m1", "m1"), ("m1", "m3")]
    )


def test_order_condition_numbers_by_hand():
    s = length_control.build(study=cobbler_study(), profile=get_profile("default"))
    assert (s["unit"], s["join"], s["scope"]) == ("chars", "unordered", "judged-turn")
    # 16 approved votes (h1 10, h2 6), one tie; 5 keys, K4 split 1-1; 10 judgments merge to 5 keys.
    assert s["counts"] == {
        "votes": 16,
        "decisive_votes": 15,
        "keys": 5,
        "majority_keys": 4,
        "judge_rows": 10,
        "judge_keys": 5,
    }
    (row,) = s["judge_vs_human"]
    assert (row["judge"], row["condition"]) == ("lcc-judge", "order")
    # Keys with a majority and a decisive judge: K1 yes, K2 yes, K3 no (K4 no majority, K5 judge tie): 2/3.
    assert (row["agreement"], row["n"]) == (pytest.approx(2 / 3), 3)
    # S1, every vote vs the merged verdict, ties a class: K1 3/4, K2 3/4, K3 1/4, K4 1/2, K5 0/2 -> 8/16.
    assert (row["s1_agreement"], row["s1_n"]) == (0.5, 16)
    # S2 drops tie votes and the judge's tie key: K1 3/4, K2 3/3, K3 1/4, K4 1/2 -> 8/13.
    assert (row["s2_agreement"], row["s2_n"]) == (pytest.approx(8 / 13), 13)
    # Null vs decisive votes: K1 3/4, K2 0/3, K3 1/4, K4 1/2, K5 2/2 -> 7/15.
    assert (s["null_vs_human"]["agreement"], s["null_vs_human"]["n"]) == (pytest.approx(7 / 15), 15)
    assert [(r["condition"], r["n"]) for r in s["null_vs_human_by_condition"]] == [("order", 15)]
    assert row["null_agreement"] == pytest.approx(7 / 15)
    # Null vs decisive merged verdicts: K1 m1 yes, K2 m3 no, K3 m3 yes, K4 m1 yes -> 3/4.
    assert [(r["condition"], r["agreement"], r["n"]) for r in s["null_vs_judge"]] == [("order", 0.75, 4)]
    strata = {
        r["bin"]: (r["condition"], r["judge_agreement"], r["judge_n"], r["null_agreement"], r["null_n"])
        for r in s["strata"]
    }
    assert strata == {
        "<5%": ("order", 1.0, 1, 0.0, 3),  # judge K2; null K2 0/3
        "<10%": ("order", 1.0, 1, pytest.approx(0.2), 5),  # judge K2 (K4 has no majority); null K2 0/3 + K4 1/2
        "10-30%": ("order", 0.0, 1, 0.5, 6),  # judge K3 (K5 is a judge tie); null K3 1/4 + K5 2/2
        ">30%": ("order", 1.0, 1, 0.75, 4),  # K1
    }
    diffs = {(r["subject"], r["a"], r["b"]): r["difference"] for r in s["strata_differences"]}
    assert diffs == {
        ("judge", "<10%", "10-30%"): 1.0,
        ("judge", "<10%", ">30%"): 0.0,
        ("judge", "10-30%", ">30%"): -1.0,
        ("null", "<10%", "10-30%"): pytest.approx(-0.3),
        ("null", "<10%", ">30%"): pytest.approx(-0.55),
        ("null", "10-30%", ">30%"): pytest.approx(-0.25),
    }
    # Headline: (7/15 - .5) / (2/3 - .5) = (-1/30) / (1/6) = -0.2.
    assert row["headline_share"] == pytest.approx(-0.2)
    # Matched (<10%): judge 1/1, Wilson [.2065, 1] is wider than +-15 points -> inconclusive.
    assert (row["matched_agreement"], row["matched_n"]) == (1.0, 1)
    assert row["matched_ci95"][0] == pytest.approx(0.20654931, abs=1e-6)
    assert (row["matched_null_agreement"], row["matched_null_n"]) == (pytest.approx(0.2), 5)
    assert s["verdict"] == row["verdict"] == "inconclusive"
    assert (s["verdict_judge"], s["verdict_condition"]) == ("lcc-judge", "order")


def test_rejected_assignment_votes_are_excluded():
    rejected = length_control.build(study=cobbler_study(), profile=get_profile("default"))
    # The same study with h3 approved: its ten "A" votes (all decisive) now count.
    approved = length_control.build(
        study=cobbler_study(slug="cobbler-len-all", h3_review="approved"), profile=get_profile("default")
    )
    assert (rejected["counts"]["votes"], approved["counts"]["votes"]) == (16, 26)
    # h3's "A" picks response_a on "ab" and response_b on "ba": against the longer answer on
    # K1..K5 it agrees 1 + 1 + 1 + 1 + 1 = 5 times, so the null moves from 7/15 to 12/25.
    assert rejected["null_vs_human"]["n"] == 15
    assert (approved["null_vs_human"]["agreement"], approved["null_vs_human"]["n"]) == (pytest.approx(12 / 25), 25)
