"""Realistic times for simulated work, written after the answers went through the services.

The services measure a task's time from its signed render token, so answers given in a loop
look instant (and every quality rule on speed would fire). Here each simulated worker gets
a plausible history instead: they arrived some time in the last days, consented, then did
their batches one after another with breaks, spending seconds per task as their pace says
(``behaviour.task_seconds``). Only simulated rows are touched, with bulk UPDATEs.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.utils import timezone

from annotations.models import Assignment, Participant, Submission
from annotations.simulation.behaviour import task_seconds
from annotations.simulation.sittings import Sitting

# Arrivals spread over the days before the seeding, as a study left open over a weekend.
ARRIVAL_WINDOW = timedelta(hours=40)
EARLIEST_ARRIVAL = timedelta(days=3)


def backdate(
    *, sittings: list[Sitting], participants: Iterable[Participant], seed: int, lease_minutes: int, since: datetime
) -> None:
    """Rewrite the times of this run's simulated work; participants who entered at or after
    ``since`` get an arrival and consent time too."""
    now = timezone.now()
    arrivals = {}
    entered = []
    for participant in participants:
        rng = random.Random(f"{seed}:{participant.label}:arrival")
        arrivals[participant.label] = now - EARLIEST_ARRIVAL + ARRIVAL_WINDOW * rng.random()
        if participant.created_at >= since:
            participant.consented_at = arrivals[participant.label] - timedelta(seconds=rng.uniform(15, 50))
            participant.created_at = participant.consented_at - timedelta(seconds=rng.uniform(20, 90))
            entered.append(participant)
    Participant.objects.bulk_update(entered, ["created_at", "consented_at"])
    cursor = dict(arrivals)
    assignments, submissions = [], []
    for sitting in sittings:
        worker = sitting.worker
        batch = sitting.assignment.batch
        rng = random.Random(f"{seed}:{worker.label}:times:{batch.condition}:{batch.index}")
        started = cursor[worker.label]
        moment = started + timedelta(seconds=rng.uniform(2, 5) if worker.is_careless else rng.uniform(15, 60))
        assignment = sitting.assignment
        assignment.started_at, assignment.opened_at = started, moment
        for pk, is_ranking in sitting.submissions:
            shown_ms = int(task_seconds(worker, ranking=is_ranking, rng=rng) * 1000)
            # The server's span also holds the page load and the POST, so it is a little longer.
            server_ms = shown_ms + int(rng.uniform(150, 900))
            moment += timedelta(milliseconds=server_ms)
            submissions.append(Submission(pk=pk, time_on_task_ms=shown_ms, server_time_ms=server_ms, created_at=moment))
        assignment.submitted_at = moment
        assignment.work_seconds = int((moment - started).total_seconds())
        assignment.leased_until = started + timedelta(minutes=lease_minutes)
        assignments.append(assignment)
        cursor[worker.label] = moment + timedelta(minutes=rng.uniform(3, 45))
    Submission.objects.bulk_update(submissions, ["time_on_task_ms", "server_time_ms", "created_at"], batch_size=500)
    Assignment.objects.bulk_update(
        assignments, ["started_at", "opened_at", "submitted_at", "work_seconds", "leased_until"], batch_size=500
    )
