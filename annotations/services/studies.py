"""Researcher workflows: setting up a study, watching it, reviewing and exporting its work."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Avg, Count, Q

from annotations.models import (
    Assignment,
    Batch,
    Candidate,
    Instruction,
    Pair,
    RejectReason,
    Response,
    ReviewDecision,
    Study,
    Submission,
)
from cobbler_site.foundation.csv_safety import safe_cell

# A taken slug, whoever holds it: saying "exists" would confirm another researcher's private study.
SLUG_NOT_AVAILABLE = "This slug is not available; choose another."

EXPORT_FIELDS = (
    "submission_id",
    "study",
    "condition",
    "batch",
    "participant",
    "platform",
    "assignment",
    "assignment_status",
    "review",
    "task_position",
    "task_kind",
    "instruction_index",
    "pair_id",
    "pair_index",
    "presentation",
    "cue",
    "slot_a_response",
    "slot_b_response",
    "choice",
    "chosen_response",
    "ranking",
    "bar_position",
    "display_order",
    "time_on_task_ms",
    "server_time_ms",
    "created_at",
    # Appended (issue 12): the review, the quality flags, the worker's reason and survey, the task's role.
    "review_reason",
    "review_note",
    "reviewed_at",
    "flags",
    "rationale",
    "untouched",
    "survey",
    "task_role",
)


@transaction.atomic
def create_study(
    *,
    slug: str,
    name: str,
    created_by: Any = None,  # the researcher (request.user), as the judging services take it
    from_study: Study | None = None,
    overlap: int = 3,
    bandwagon_percent: int = 85,
    lease_minutes: int = 90,
    consent_text: str = "",
    instructions_text: str = "",
) -> Study:
    """A new crowd study, optionally with a copy of another study's content (imported or demo).

    Copies instructions, candidates, responses and pairs, never batches or crowd work.
    Raises ValidationError (nothing stored) when the slug is taken or a number is out of range.
    """
    if Study.objects.filter(slug=slug).exists():
        # The same words whoever holds the slug: another researcher's private study stays unseen.
        raise ValidationError(SLUG_NOT_AVAILABLE)
    if not 1 <= overlap <= 50 or not 0 <= bandwagon_percent <= 100 or lease_minutes < 1:
        raise ValidationError("overlap must be 1-50, bandwagon_percent 0-100, lease_minutes >= 1.")
    study = Study.objects.create(
        slug=slug,
        name=name,
        created_by=created_by,
        overlap=overlap,
        bandwagon_percent=bandwagon_percent,
        lease_minutes=lease_minutes,
        consent_text=consent_text,
        instructions_text=instructions_text,
        source=from_study.source if from_study else Study.Source.MANUAL,
    )
    if from_study is not None:
        _copy_content(source=from_study, target=study)
    return study


def _copy_content(*, source: Study, target: Study) -> None:
    candidates = {
        c.pk: Candidate.objects.create(study=target, key=c.key, name=c.name, position=c.position)
        for c in source.candidates.all()
    }
    instructions = {
        i.pk: Instruction.objects.create(
            study=target,
            index=i.index,
            external_id=i.external_id,
            turn=i.turn,
            kind=i.kind,
            text=i.text,
            reference=i.reference,
        )
        for i in source.instructions.all()
    }
    responses = {}
    for r in Response.objects.filter(instruction__study=source):
        responses[r.pk] = Response.objects.create(
            instruction=instructions[r.instruction_id],
            candidate=candidates[r.candidate_id],
            text=r.text,
            conversation=r.conversation,
        )
    Pair.objects.bulk_create(
        Pair(
            instruction=instructions[p.instruction_id],
            response_a=responses[p.response_a_id],
            response_b=responses[p.response_b_id],
        )
        for p in Pair.objects.filter(instruction__study=source)
    )


@dataclass(frozen=True)
class BatchProgress:
    batch: Batch
    tasks: int
    target: int
    active: int
    submitted: int
    rejected: int
    answers: int
    mean_task_seconds: float | None

    @property
    def complete(self) -> bool:
        return self.submitted - self.rejected >= self.target


def batch_progress(*, study: Study) -> list[BatchProgress]:
    """Per batch: places taken, work submitted and rejected, answers and time per task (3 queries)."""
    A = Assignment.Status
    batches = list(
        Batch.objects.filter(study=study)
        .annotate(
            n_tasks=Count("tasks", distinct=True),
            n_active=Count("assignments", filter=Q(assignments__status=A.ACTIVE), distinct=True),
            n_submitted=Count("assignments", filter=Q(assignments__status=A.SUBMITTED), distinct=True),
            n_rejected=Count("assignments", filter=Q(assignments__review=Assignment.Review.REJECTED), distinct=True),
        )
        .order_by("condition", "index")
    )
    answers = {
        row["assignment__batch"]: row
        for row in Submission.objects.filter(assignment__batch__study=study)
        .values("assignment__batch")
        .annotate(n=Count("pk"), ms=Avg("time_on_task_ms"))
    }
    return [
        BatchProgress(
            batch=b,
            tasks=b.n_tasks,
            target=b.overlap or study.overlap,
            active=b.n_active,
            submitted=b.n_submitted,
            rejected=b.n_rejected,
            answers=answers.get(b.pk, {}).get("n", 0),
            mean_task_seconds=(
                answers[b.pk]["ms"] / 1000 if b.pk in answers and answers[b.pk]["ms"] is not None else None
            ),
        )
        for b in batches
    ]


@transaction.atomic
def review_assignment(
    *,
    assignment: Assignment,
    decision: str,
    note: str = "",
    reason: str = "",
    change_reason: str = "",
    reviewer: Any = None,
) -> Assignment:
    """Approve or reject one worker's submitted batch, kept in its review history with
    ``reviewer``. Repeating the current decision changes nothing; rejection frees the place.

    A rejection needs a reason from RejectReason ("other" also needs a note), as Prolific asks;
    an approval clears any earlier reason and note. Changing a decided submission needs
    ``change_reason`` (DecisionChangeNeedsReason otherwise). Raises ValidationError, changing
    nothing, on bad input.
    """
    check_decision(decision=decision, reason=reason, note=note)
    if decision != Assignment.Review.REJECTED:
        reason = ""
    ReviewDecision.objects.record(
        assignment=assignment,
        decision=decision,
        reason=reason,
        note=note,
        change_reason=change_reason,
        reviewer=reviewer,
    )
    return assignment


def check_decision(*, decision: str, reason: str, note: str) -> None:
    """The reviewer's side of a decision: a rejection says why. Raises ValidationError."""
    if decision == Assignment.Review.REJECTED:
        if reason not in RejectReason.values:
            raise ValidationError("Choose a reason for the rejection.")
        if reason == RejectReason.OTHER and not note.strip():
            raise ValidationError('Say why in the note when the reason is "Other".')


def submission_rows(*, study: Study) -> Iterator[dict]:
    """Raw submissions, one dict per answered task, with pseudonymous ids only."""
    qs = (
        Submission.objects.filter(assignment__batch__study=study)
        .select_related("assignment__batch", "assignment__participant", "task__instruction", "task__pair")
        .order_by("assignment__batch__condition", "assignment__batch__index", "assignment_id", "task__position")
    )
    for s in qs.iterator(chunk_size=2000):
        task, assignment = s.task, s.assignment
        slots = task.slot_response_ids() if task.pair_id else (None, None)
        yield {
            "submission_id": s.pk,
            "study": study.slug,
            "condition": task.condition,
            "batch": assignment.batch.index,
            "participant": assignment.participant.label,
            "platform": assignment.participant.platform,
            "assignment": assignment.pk,
            "assignment_status": assignment.status,
            "review": assignment.review,
            "task_position": task.position,
            "task_kind": task.kind,
            "instruction_index": task.instruction.index,
            "pair_id": task.pair_id,
            "pair_index": task.pair_index,
            "presentation": task.arrangement,
            "cue": task.cue,
            "slot_a_response": slots[0],
            "slot_b_response": slots[1],
            "choice": s.choice,
            "chosen_response": s.chosen_response_id,
            "ranking": s.ranking,
            "bar_position": s.bar_position,
            "display_order": s.display_order,
            "time_on_task_ms": s.time_on_task_ms,
            "server_time_ms": s.server_time_ms,
            "created_at": s.created_at.isoformat(),
            "review_reason": assignment.review_reason,
            "review_note": assignment.review_note,
            "reviewed_at": assignment.reviewed_at.isoformat() if assignment.reviewed_at else None,
            "flags": assignment.flags,
            "rationale": s.rationale,
            "untouched": s.untouched,
            "survey": assignment.survey,
            "task_role": task.role,
        }


def submissions_csv(*, study: Study) -> str:
    """The same rows as CSV; list and dict cells are JSON-encoded, and text a spreadsheet
    would run as a formula (=, +, -, @, tab, CR first) gets a leading "'" (cobbler_site.foundation.csv_safety)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS)
    writer.writeheader()
    for row in submission_rows(study=study):
        writer.writerow({k: json.dumps(v) if isinstance(v, list | dict) else safe_cell(v) for k, v in row.items()})
    return out.getvalue()
