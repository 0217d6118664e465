"""Workers who answer a batch through the real services, at a chosen speed and with a chosen strategy."""

from __future__ import annotations

import time
from collections.abc import Callable
from unittest import mock

from annotations import answers, services
from annotations.models import Assignment, Pair, Participant, Study, Submission, Task
from annotations.services.crowd import Entry

Strategy = Callable[[Task], str]


def new_worker(study: Study, code: str, *, attempts: int = 1) -> Participant:
    participant, _ = services.enter_study(study=study, entry=Entry(Participant.Platform.CODE, code, ""))
    services.give_consent(participant=participant)
    Participant.objects.filter(pk=participant.pk).update(qualified=True, qualification_attempts=attempts)
    participant.refresh_from_db()
    return participant


def _token(assignment: Assignment, task: Task, seconds: float) -> str:
    """A task form rendered ``seconds`` ago (the clock is the edge we move)."""
    now = time.time()
    with mock.patch.object(answers.time, "time", return_value=now - seconds):
        return answers.issue_token(assignment_id=assignment.pk, task_id=task.pk)


def work(participant: Participant, strategy: Strategy, *, seconds: float = 0.0) -> Assignment:
    """Claim a batch and answer every task with ``strategy`` (a slot), ``seconds`` per task."""
    assignment = services.claim_batch(participant=participant, session_hash="")
    assert assignment is not None, "no batch left to claim"
    for task in assignment.batch.tasks.select_related("pair").order_by("position"):
        services.submit_task(
            assignment=assignment,
            task=task,
            values=[],
            choice=strategy(task),
            token=_token(assignment, task, seconds),
            client_ms=None,
        )
    assignment.refresh_from_db()
    return assignment


def careful(task: Task) -> str:
    """Passes every check; on items prefers the earlier candidate (consistent across presentations)."""
    if task.role != Task.Role.ITEM:
        return task.expects["slot"]
    return "A" if task.arrangement == Task.Arrangement.AB else "B"


def contrarian(task: Task) -> str:
    """The opposite of the careful worker everywhere."""
    return "B" if careful(task) == "A" else "A"


def always_a(task: Task) -> str:
    return "A"


def codes(assignment: Assignment) -> set[str]:
    return {flag["code"] for flag in assignment.flags}


def set_gold(study: Study, first_key: str, second_key: str, gold_key: str) -> Pair:
    """Store the pair of two candidates' answers to instruction 0 with a gold answer."""
    responses = {r.candidate.key: r for r in study.instructions.get(index=0).responses.select_related("candidate")}
    a, b = sorted((responses[first_key], responses[second_key]), key=lambda r: r.candidate.position)
    return Pair.objects.create(
        instruction_id=a.instruction_id, response_a=a, response_b=b, gold_response=responses[gold_key]
    )


def submissions_of(assignment: Assignment) -> list[Submission]:
    return list(assignment.submissions.select_related("task").order_by("task__position"))
