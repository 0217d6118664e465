"""Builders for the verdict-summary tests (no tests here): the demo's 120 pairs judged by three hand-made judges,
plus crowd work (pairwise order twins and rankings) written straight into the database.

- ``first-judge``: 7 pairs in 10 answered with the first slot twice, the rest consistently
  (response A both times): position_preference = +0.70 on 120 pairs, a sure finding.
- ``fair-judge``: consistent, with one first-first and one last-last pair in every 10: 12
  against 12 discordant pairs, exact sign test p = 1, no evidence.
- ``tiny-judge``: the first slot twice on only 2 pairs: n = 2, below the minimum.
Raters r1-r3 are approved, r4 waits for review.
"""

from __future__ import annotations

import itertools

from annotations import services
from annotations.importers.demo import seed_demo_study
from annotations.models import Assignment, Pair, Participant, Study, Submission
from judging.models import JudgeJob, Judgment, RegisteredModel

_keys = itertools.count()


def judge_order_run(study: Study, name: str, pairs: list[Pair], pattern) -> JudgeJob:
    """A completed order job: ``pattern(i)`` gives the slot chosen in (prompt 1, prompt 2) for pair i,
    or "a" for response A both times (consistent)."""
    judge = RegisteredModel.objects.create(name=name, kind=RegisteredModel.Kind.BASELINE, baseline="first-slot")
    job = JudgeJob.objects.create(study=study, judge=judge, conditions=["order"], status="completed")
    rows = []
    for i, pair in enumerate(pairs):
        choice = pattern(i)
        for presentation, slots in ((1, (pair.response_a, pair.response_b)), (2, (pair.response_b, pair.response_a))):
            a_slot = "first" if slots[0] == pair.response_a else "second"
            slot = a_slot if choice == "a" else choice[presentation - 1]  # "a": response A wherever it is
            chosen = slots[0] if slot == "first" else slots[1]
            rows.append(
                Judgment(
                    job=job,
                    pair=pair,
                    condition="order",
                    presentation=presentation,
                    slot1_response=slots[0],
                    raw_text=slot,
                    choice=slot,
                    chosen_response=chosen,
                    valid=True,
                    status="done",
                )
            )
    Judgment.objects.bulk_create(rows)
    return job


FIRST_TWICE = ("first", "first")
LAST_TWICE = ("second", "second")


def first_judge(i: int):
    return FIRST_TWICE if i % 10 < 7 else "a"


def fair_judge(i: int):
    return {0: FIRST_TWICE, 1: LAST_TWICE}.get(i % 10, "a")


def summary_study(*, humans: bool = True) -> Study:
    study = seed_demo_study()
    pairs = list(
        Pair.objects.filter(instruction__study=study).select_related("response_a", "response_b").order_by("pk")
    )
    judge_order_run(study, "first-judge", pairs, first_judge)
    judge_order_run(study, "fair-judge", pairs, fair_judge)
    judge_order_run(study, "tiny-judge", pairs[:2], lambda _i: FIRST_TWICE)
    if humans:
        add_crowd(study)
    return study


def add_crowd(study: Study) -> None:
    order = services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=3)
    ranking = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=12)
    for r, review in enumerate(("approved", "approved", "approved", "pending")):
        p = Participant.objects.create(
            study=study, platform="code", external_hash=f"h{r}", label=f"r{r + 1}", qualified=True
        )
        for batch in [*order, *ranking]:
            a = Assignment.objects.create(batch=batch, participant=p, status="submitted", review=review)
            for task in batch.tasks.order_by("position"):
                answer(a, task, rater=r)


def answer(assignment: Assignment, task, *, rater: int) -> Submission:
    ids = task.expected_response_ids()
    if task.kind == "ranking":
        # Everyone ranks by candidate position, the last rater with the top two swapped.
        ranking = ids if rater % 2 == 0 else [ids[1], ids[0], *ids[2:]]
        return Submission.objects.create(
            assignment=assignment, task=task, ranking=ranking, idempotency_key=f"s{next(_keys)}"
        )
    # Pairwise: the response earlier in the study's order (consistent, no position bias).
    better = min(ids, key=lambda pk: (task.pair.response_a_id != pk, pk))
    choice = "A" if ids[0] == better else "B"
    return Submission.objects.create(
        assignment=assignment, task=task, choice=choice, chosen_response_id=better, idempotency_key=f"s{next(_keys)}"
    )
