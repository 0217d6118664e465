"""Play a seeded, simulated crowd through the real worker services, so the demo has people.

Every answer goes the way a browser's does: enter by a ``?code=`` link, consent, the
qualification round (with its retries), a claimed batch (``next_step`` leases it, balanced
across conditions), one signed render token per task and ``submit_task``. Only what a loop
cannot produce honestly is written afterwards, on the simulated rows alone: the times
(``annotations.simulation.timeline``), then the quality flags and the review.

Idempotent: a worker who already holds work enters the same participant again, and a batch
with all its places taken is never claimed, so a second run adds nothing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.test.utils import override_settings
from django.utils import timezone

from annotations import answers, services
from annotations.models import Assignment, Batch, Pair, Participant, Response, Study, Task
from annotations.services.crowd import Entry
from annotations.simulation import timeline
from annotations.simulation.behaviour import (
    DEMO_QUALITY,
    SimWorker,
    choose_pair,
    item_quality,
    make_crowd,
    qualification_choices,
    rank_answers,
    reasoning,
)
from annotations.simulation.sittings import Sitting
from annotations.vocabulary import Condition, CrowdChoice

CROWD_SIZE = 120
CARELESS = 4
# A simulated worker may hold this many batches (real workers: CROWD_MAX_BATCHES_PER_WORKER,
# default 1). 120 people (115 careful and qualified) x 3 covers the demo's 333 places (111
# batches: 3 ranking, 12 for each of 9 pair conditions, x overlap 3) with room to spare; careless
# workers stop after one batch, like drive-by participants.
BATCHES_PER_WORKER = 3


@dataclass(frozen=True)
class CrowdSummary:
    workers: int
    qualified: int
    sittings: int
    submissions: int
    approved: int
    pending: int
    flagged: int | None  # None: the quality flags module is not available

    def describe(self) -> str:
        if not self.sittings:
            return (
                f"simulated crowd: every batch already has its raters ({self.workers} simulated workers); nothing added"
            )
        flags = (
            "quality flags not computed (annotations.quality.flags missing)"
            if self.flagged is None
            else f"{self.flagged} flagged"
        )
        return (
            f"simulated crowd: {self.workers} workers ({self.qualified} qualified), {self.sittings} batches "
            f"answered ({self.submissions} answers), {self.approved} approved, {self.pending} left pending "
            f"for review, {flags}"
        )


def open_places(study: Study) -> int:
    """Places still free over the study's batches: the target overlap minus live work."""
    live = dict(
        Assignment.objects.live()
        .filter(batch__study=study)
        .values("batch")
        .annotate(n=Count("pk"))
        .values_list("batch", "n")
    )
    return sum(
        max(0, (overlap or study.overlap) - live.get(pk, 0))
        for pk, overlap in Batch.objects.filter(study=study).values_list("pk", "overlap")
    )


def simulate_crowd(
    *,
    study: Study,
    seed: int,
    size: int = CROWD_SIZE,
    careless: int = CARELESS,
    quality: Mapping[str, float] = DEMO_QUALITY,
) -> CrowdSummary:
    """Fill every free place of ``study``'s batches with simulated workers (one transaction)."""
    crowd = make_crowd(seed=seed, size=size, careless=careless)
    since = timezone.now()
    if not open_places(study):
        return _summary(study, [], flagged=0)
    # The cap keeps real raters independent; a small simulated crowd must answer several batches.
    with transaction.atomic(), override_settings(CROWD_MAX_BATCHES_PER_WORKER=BATCHES_PER_WORKER):
        participants = {worker.label: _enter_and_qualify(study, worker, seed) for worker in crowd}
        content = _Content.load(study, seed, quality)
        sittings: list[Sitting] = []
        for round_ in range(BATCHES_PER_WORKER):
            order = [w for w in crowd if participants[w.label].qualified and (round_ == 0 or not w.is_careless)]
            random.Random(f"{seed}:claim-round:{round_}").shuffle(order)
            done = [s for w in order if (s := _sit(participants[w.label], w, seed, content))]
            sittings += done
            if not done:
                break
        timeline.backdate(
            sittings=sittings,
            participants=participants.values(),
            seed=seed,
            lease_minutes=study.lease_minutes,
            since=since,
        )
        flagged = _flag(sittings)
        for sitting in sittings:
            if not sitting.worker.is_careless:  # careless work waits for a researcher's review
                services.review_assignment(
                    assignment=sitting.assignment,
                    decision=Assignment.Review.APPROVED,
                    note="simulated worker: approved automatically by seed_demo",
                )
    return _summary(study, sittings, flagged=flagged)


def _enter_and_qualify(study: Study, worker: SimWorker, seed: int) -> Participant:
    participant, _session = services.enter_study(study=study, entry=Entry(Participant.Platform.CODE, worker.label, ""))
    Participant.objects.filter(pk=participant.pk).update(label=worker.label, simulated=True)
    participant.label, participant.simulated = worker.label, True
    services.give_consent(participant=participant)
    rng = random.Random(f"{seed}:{worker.label}:qualification")
    while not participant.qualified and participant.qualification_attempts < study.qualification_attempts_allowed:
        items = services.qualification_draw(participant=participant)  # each attempt draws from the pool
        picks = qualification_choices(
            worker, gold=[item.gold for item in items], attempt=participant.qualification_attempts, rng=rng
        )
        services.grade_qualification(
            participant=participant, choices={item.pk: pick for item, pick in zip(items, picks, strict=True)}
        )
    return participant


@dataclass(frozen=True)
class _Content:
    """What the workers judge, read once: each response's quality as the crowd sees it, and the pairs."""

    quality: dict[int, float]
    pairs: dict[int, Pair]

    @classmethod
    def load(cls, study: Study, seed: int, quality: Mapping[str, float]) -> _Content:
        rows = Response.objects.filter(instruction__study=study).values_list(
            "pk", "instruction__index", "candidate__key"
        )
        return cls(
            quality={
                pk: item_quality(seed=seed, quality=quality, instruction=index, system=key) for pk, index, key in rows
            },
            pairs=Pair.objects.filter(instruction__study=study).in_bulk(),
        )


def _sit(participant: Participant, worker: SimWorker, seed: int, content: _Content) -> Sitting | None:
    """One sitting in a fresh platform session: lease a batch (if any is left) and answer it all."""
    session_id = f"sitting-{participant.assignments.count()}"
    entry = Entry(Participant.Platform.CODE, worker.label, session_id)
    participant, session_hash = services.enter_study(study=participant.study, entry=entry)
    step = services.next_step(participant=participant, session_hash=session_hash)
    if step.name != "task":
        return None  # no batch left with a free place for this worker
    assignment, task = step.assignment, step.task
    assert assignment is not None  # a task step carries its assignment
    sitting = Sitting(worker=worker, assignment=assignment)
    rng = random.Random(f"{seed}:{worker.label}:{assignment.batch.condition}:{assignment.batch.index}")
    reasons = random.Random(f"{seed}:{worker.label}:reasons:{assignment.batch.index}")  # its own stream
    while task is not None:
        if task.pair_id:  # the services read task.pair: one query for all pairs, not one per task
            task.pair = content.pairs[task.pair_id]
        assignment.mark_opened()  # as the task page does when it is shown
        token = answers.issue_token(assignment_id=assignment.pk, task_id=task.pk)
        values, choice = _answer(worker, assignment, task, content.quality, rng)
        stored = services.submit_task(
            assignment=assignment,
            task=task,
            values=values,
            choice=choice,
            token=token,
            client_ms=None,
            rationale=_rationale(task, content.quality, reasons),
        )
        sitting.submissions.append((stored.pk, task.kind == Task.Kind.RANKING))
        # The page asks next_step; within one lease the next open task is all that can change.
        task = services.first_open_task(assignment)
    step = services.next_step(participant=participant, session_hash=session_hash, claim=False)
    if step.name != "completed":
        raise ValidationError(
            f"simulated worker {worker.label} ended on {step.name!r}, not 'completed' "
            "(a study with surveys needs the simulation to answer them)"
        )
    assignment.refresh_from_db()
    return sitting


def _answer(
    worker: SimWorker, assignment: Assignment, task: Task, response_quality: dict[int, float], rng: random.Random
) -> tuple[list[str], str]:
    """What the worker posts: (ranking values, "") for a ranking, ([], slot) for a pair."""
    if task.kind == Task.Kind.RANKING:
        shown = services.shown_order(assignment=assignment, task=task, expected=task.expected_response_ids())
        ranking, acceptable = rank_answers(worker, shown=shown, quality_of=response_quality, rng=rng)
        values = [str(pk) for pk in ranking]
        if task.show_threshold_bar:
            values.insert(acceptable, answers.BAR)
        return values, ""
    expected_slot = (task.expects or {}).get("slot")
    if task.role != Task.Role.ITEM and expected_slot in (CrowdChoice.A, CrowdChoice.B) and not worker.is_careless:
        return [], str(expected_slot)  # a careful worker reads the check and does what it asks
    slot_a, slot_b = task.slot_response_ids()
    choice = choose_pair(
        worker,
        quality_a=response_quality[slot_a],
        quality_b=response_quality[slot_b],
        cue=task.cue or {},
        rng=rng,
        condition=task.condition,
    )
    return [], choice


def _rationale(task: Task, response_quality: dict[int, float], rng: random.Random) -> str | None:
    """The written reasoning a cot task requires (annotations.biases.cot); None elsewhere (the
    simulated crowd answers studies that ask for no rationale)."""
    if task.condition != Condition.COT or task.kind != Task.Kind.PAIRWISE:
        return None
    slot_a, slot_b = task.slot_response_ids()
    return reasoning(quality_a=response_quality[slot_a], quality_b=response_quality[slot_b], rng=rng)


def _flag(sittings: list[Sitting]) -> int | None:
    """Recompute the quality flags now that the times are realistic; None without the module."""
    try:
        from annotations.quality.flags import reflag_batch
    except ImportError:
        return None
    # reflag_batch runs flag_assignment on every submitted assignment of the batch (a new rater
    # moves the majority), so each batch once covers every sitting.
    for batch in {sitting.assignment.batch_id: sitting.assignment.batch for sitting in sittings}.values():
        reflag_batch(batch)
    return Assignment.objects.filter(pk__in=[s.assignment.pk for s in sittings]).exclude(flags=[]).count()


def _summary(study: Study, sittings: list[Sitting], *, flagged: int | None) -> CrowdSummary:
    simulated = Participant.objects.filter(study=study, simulated=True)
    work = Assignment.objects.filter(participant__in=simulated, status=Assignment.Status.SUBMITTED)
    return CrowdSummary(
        workers=simulated.count(),
        qualified=simulated.filter(qualified=True).count(),
        sittings=len(sittings),
        submissions=sum(len(s.submissions) for s in sittings),
        approved=work.filter(review=Assignment.Review.APPROVED).count(),
        pending=work.filter(review=Assignment.Review.PENDING).count(),
        flagged=flagged,
    )
