"""The worker's path through a study: entry, qualification, claiming a batch, answering."""
from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, F, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotations import answers
from annotations.models import Assignment, Batch, Participant, QualificationItem, Study, Submission, Task
from annotations.pseudonyms import pseudonymise

logger = logging.getLogger(__name__)

_ID_RE = re.compile(r"^[A-Za-z0-9_.@:-]{1,128}$")
# MTurk shows a preview of the HIT with this placeholder before the worker accepts it.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


@dataclass(frozen=True)
class Entry:
    platform: str
    external_id: str
    session_id: str


def parse_entry(params: Mapping[str, str]) -> Entry:
    """Read the crowd platform's link parameters; ValidationError if none are usable."""

    def clean(name: str) -> str:
        value = (params.get(name) or "").strip()
        if value and not _ID_RE.match(value):
            raise ValidationError(f"The link parameter {name} is malformed.")
        return value

    if clean("PROLIFIC_PID"):
        return Entry(Participant.Platform.PROLIFIC, clean("PROLIFIC_PID"), clean("SESSION_ID"))
    if clean("workerId"):
        assignment_id = clean("assignmentId")
        if not assignment_id or assignment_id == MTURK_PREVIEW:
            raise ValidationError("Accept the HIT on MTurk first; this is only a preview.")
        return Entry(Participant.Platform.MTURK, clean("workerId"), assignment_id)
    if clean("code"):
        return Entry(Participant.Platform.CODE, clean("code"), "")
    raise ValidationError("This link has no participant id. Open the study from your crowd platform.")


def enter_study(*, study: Study, entry: Entry) -> tuple[Participant, str]:
    """Find or create the participant behind an entry; returns it and the session hash.

    Only keyed hashes are stored (annotations.pseudonyms). Idempotent: a returning
    worker (reload, second link click) gets the same participant.
    """
    external_hash = pseudonymise(entry.platform, entry.external_id)
    session_hash = pseudonymise(f"{entry.platform}-session", entry.session_id) if entry.session_id else ""
    try:
        participant, _ = Participant.objects.get_or_create(
            study=study,
            platform=entry.platform,
            external_hash=external_hash,
            defaults={"label": f"p-{external_hash[:10]}"},
        )
    except IntegrityError:  # two first requests at once: the other one created it
        participant = Participant.objects.get(study=study, platform=entry.platform, external_hash=external_hash)
    return participant, session_hash


def give_consent(*, participant: Participant) -> None:
    """Idempotent: the first consent time is kept."""
    Participant.objects.filter(pk=participant.pk, consented_at__isnull=True).update(consented_at=timezone.now())
    participant.refresh_from_db(fields=["consented_at"])


def grade_qualification(*, participant: Participant, choices: Mapping[int, str]) -> list[QualificationItem]:
    """Grade one attempt; returns the items answered wrongly (empty: qualified).

    Raises ValidationError if an item is unanswered (that is not an attempt) or if
    the participant has no attempts left.
    """
    study = participant.study
    items = QualificationItem.for_study(study)
    if participant.qualified:
        return []
    if participant.qualification_attempts >= study.qualification_attempts_allowed:
        raise ValidationError("No qualification attempts left.")
    if any(choices.get(item.pk) not in ("A", "B") for item in items):
        raise ValidationError("Answer every question.")
    wrong = [item for item in items if choices[item.pk] != item.gold]
    # F() so two tabs submitting at once count two attempts, not one.
    Participant.objects.filter(pk=participant.pk).update(
        qualification_attempts=F("qualification_attempts") + 1, qualified=not wrong
    )
    participant.refresh_from_db(fields=["qualification_attempts", "qualified"])
    return wrong


def session_assignment(*, participant: Participant, session_hash: str) -> Assignment | None:
    """The assignment of this sitting (the latest one for the same platform session)."""
    return (
        participant.assignments.select_related("batch")
        .filter(external_session_hash=session_hash)
        .order_by("-started_at", "-pk")
        .first()
    )


def claim_batch(*, participant: Participant, session_hash: str, rounds: int = 5) -> Assignment | None:
    """Lease a batch that still has fewer than K live workers; None when none is left.

    Safe under concurrency: the batch row is locked (SELECT ... FOR UPDATE SKIP LOCKED)
    and its live places recounted under the lock before the assignment is inserted, so
    K is never exceeded on PostgreSQL. SQLite runs writers one at a time (IMMEDIATE
    transactions), which gives the same guarantee there. SKIP LOCKED lets concurrent
    workers spread over batches instead of queueing on one.
    """
    study = participant.study
    Assignment.objects.filter(batch__study=study).expire_stale()
    live = (
        Assignment.objects.live()
        .filter(batch=OuterRef("pk"))
        .order_by()
        .values("batch")
        .annotate(n=Count("pk"))
        .values("n")
    )
    for _ in range(rounds):
        candidates = list(
            Batch.objects.filter(study=study)
            .exclude(assignments__participant=participant)
            .annotate(live=Coalesce(Subquery(live), Value(0)), target=Coalesce("overlap", Value(study.overlap)))
            .filter(live__lt=F("target"))
            .order_by("live", "condition", "index")
            .values_list("pk", flat=True)[:20]
        )
        if not candidates:
            return None
        for batch_id in candidates:
            assignment = _claim_one(participant=participant, batch_id=batch_id, session_hash=session_hash)
            if assignment is not None:
                return assignment
    return None


def _claim_one(*, participant: Participant, batch_id: int, session_hash: str) -> Assignment | None:
    study = participant.study
    with transaction.atomic():
        batch = Batch.objects.select_for_update(skip_locked=True).filter(pk=batch_id).first()
        if batch is None:
            return None  # another worker is claiming it right now; try the next one
        if Assignment.objects.live().filter(batch=batch).count() >= (batch.overlap or study.overlap):
            return None
        try:
            with transaction.atomic():
                return Assignment.objects.create(
                    batch=batch,
                    participant=participant,
                    external_session_hash=session_hash,
                    leased_until=timezone.now() + timezone.timedelta(minutes=study.lease_minutes),
                )
        except IntegrityError:
            return None  # this participant already holds (or held) it


def first_open_task(assignment: Assignment) -> Task | None:
    answered = Submission.objects.filter(assignment=assignment).values("task_id")
    return assignment.batch.tasks.exclude(pk__in=answered).order_by("position").first()


def submit_task(
    *, assignment: Assignment, task: Task, values: list[str], choice: str, token: str, client_ms: str | None
) -> Submission:
    """Check and store a worker's answer to one task (the htmx view and the API both call this).

    Idempotent (see Assignment.record_answer). Raises ValidationError for a malformed or
    expired answer (nothing is stored) and LeaseLost when the lease is gone.
    """
    nonce, server_ms = answers.read_token(token)
    expected = task.expected_response_ids()
    shown = shown_order(assignment=assignment, task=task, expected=expected)
    if task.kind == Task.Kind.RANKING:
        answer = answers.parse_ranking(values, expected=expected, with_bar=task.show_threshold_bar, shown=shown)
    else:
        answer = answers.parse_choice(choice, slots=task.slot_response_ids())
    key = answers.idempotency_key(assignment_id=assignment.pk, task_id=task.pk, nonce=nonce)
    return assignment.record_answer(
        task=task,
        answer=answer,
        idempotency_key=key,
        server_ms=server_ms,
        client_ms=answers.parse_client_ms(client_ms),
    )


def shown_order(*, assignment: Assignment, task: Task, expected: list[int]) -> list[int]:
    """Response ids in display order: shuffled per participant for rankings, the designed slots for pairs."""
    if task.kind == Task.Kind.PAIRWISE:
        return expected
    return answers.display_order(participant_id=assignment.participant_id, task_id=task.pk, response_ids=expected)


@dataclass(frozen=True)
class Step:
    """Where a worker stands: consent, qualify, failed_qualification, task, no_work, completed, timed_out."""

    name: str
    assignment: Assignment | None = None
    task: Task | None = None


def next_step(*, participant: Participant, session_hash: str, claim: bool = True) -> Step:
    """Decide the worker's next screen, leasing a batch when they are ready for one.

    Resuming is this function: a reload lands on the first unanswered task of the
    sitting's assignment.
    """
    if participant.consented_at is None:
        return Step("consent")
    if not participant.qualified:
        if participant.qualification_attempts >= participant.study.qualification_attempts_allowed:
            return Step("failed_qualification")
        return Step("qualify")
    assignment = session_assignment(participant=participant, session_hash=session_hash)
    if assignment is None:
        assignment = claim_batch(participant=participant, session_hash=session_hash) if claim else None
        if assignment is None:
            return Step("no_work")
    assignment.expire_if_stale()
    if assignment.status in (Assignment.Status.EXPIRED, Assignment.Status.RETURNED):
        return Step("timed_out", assignment)
    if assignment.status == Assignment.Status.SUBMITTED:
        return Step("completed", assignment)
    task = first_open_task(assignment)
    if task is None:
        assignment.finish_if_complete()
        return Step("completed" if assignment.status == Assignment.Status.SUBMITTED else "timed_out", assignment)
    return Step("task", assignment, task)
