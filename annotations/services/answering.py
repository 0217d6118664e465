"""Answering one task: check what the worker posted against the task and the study, then store it.

The htmx view, the REST API and the crowd simulator all call ``submit_task``.
"""

from __future__ import annotations

import hmac
from dataclasses import replace

from annotations import answers
from annotations.models import Assignment, Submission, Task
from annotations.quality.flags import flag_closed_assignment


def submit_task(
    *,
    assignment: Assignment,
    task: Task,
    values: list[str],
    choice: str,
    token: str,
    client_ms: str | None,
    rationale: str | None = None,
    bar_placed: bool | None = None,
) -> Submission:
    """Check and store a worker's answer to one task (the htmx view and the API both call this).

    The study decides what an answer may hold: "T" (no preference) only with
    ``allow_ties``, a ``rationale`` as ``Study.rationale`` asks (required: not blank; at
    most answers.RATIONALE_MAX_CHARS), or on a cot task the required step-by-step reasoning
    (``answers.rationale_rule``). A ranking posted in the order shown is stored with
    ``untouched=True``. The worker page says whether the worker placed (or confirmed) the
    "acceptable" bar (``bar_placed``, answers.parse_ranking); None does not ask. Idempotent
    (see Assignment.record_answer). Raises ValidationError for a malformed or expired answer
    (nothing is stored) and LeaseLost when the lease is gone.
    """
    nonce, server_ms = answers.read_token(token, assignment_id=assignment.pk, task_id=task.pk)
    study = assignment.batch.study
    expected = task.expected_response_ids()
    shown = shown_order(assignment=assignment, task=task, expected=expected)
    if task.kind == Task.Kind.RANKING:
        answer = answers.parse_ranking(
            values, expected=expected, with_bar=task.show_threshold_bar, shown=shown, bar_placed=bar_placed
        )
    else:
        answer = answers.parse_choice(choice, slots=task.slot_response_ids(), allow_tie=study.allow_ties)
    rule = answers.rationale_rule(study_mode=study.rationale, condition=task.condition)
    answer = replace(answer, rationale=answers.parse_rationale(rationale, mode=rule.mode, min_chars=rule.min_chars))
    key = answers.idempotency_key(assignment_id=assignment.pk, task_id=task.pk, nonce=nonce)
    submission, stored = assignment.record_answer(
        task=task,
        answer=answer,
        idempotency_key=key,
        server_ms=server_ms,
        client_ms=answers.parse_client_ms(client_ms),
    )
    if stored:
        close_if_complete(assignment=assignment)
    return submission


def close_if_complete(*, assignment: Assignment) -> bool:
    """Close the assignment once every task has an answer, and flag it with its batch-mates if
    this call closed it (flags never fail a worker's submit). True if this call closed it."""
    closed = assignment.finish_if_complete()
    if closed:
        flag_closed_assignment(assignment)
    return closed


def answered_by_another_page(*, submission: Submission, token: str) -> bool:
    """Whether the stored answer came from another rendering of the task than this form's token.

    A double click or a retried POST carries the same token (same idempotency key) and is
    the same answer; another key means a second tab (or a window kept open) answered first,
    and this form's answer was not stored (first answer wins, Assignment.record_answer).
    """
    nonce, _ms = answers.read_token(token, assignment_id=submission.assignment_id, task_id=submission.task_id)
    key = answers.idempotency_key(assignment_id=submission.assignment_id, task_id=submission.task_id, nonce=nonce)
    return not hmac.compare_digest(key, submission.idempotency_key)


def shown_order(*, assignment: Assignment, task: Task, expected: list[int]) -> list[int]:
    """Response ids in display order: shuffled per participant for rankings, the designed slots for pairs."""
    if task.kind == Task.Kind.PAIRWISE:
        return expected
    return answers.display_order(participant_id=assignment.participant_id, task_id=task.pk, response_ids=expected)
