"""The one writer of imported human work: batches, tasks, participants, assignments, submissions.

Every importer that brings crowd or annotator work (CoBBLEr's bias and ranking studies,
MT-Bench's human votes, the generic format's votes and rankings) describes it as plain rows
(``HumanWork``) and hands them to ``write_human_work``. The rows refer to each other by
natural keys: a batch by (condition, index), a task by its batch and position, a worker by
the raw platform id. The writer pseudonymises the worker ids (``annotations.pseudonyms``; the
raw ids are never stored), writes each table with one ``bulk_create`` per BATCH_SIZE rows,
reads the new primary keys back with one query per table, and writes every table's rows in
the order given, so their primary keys follow the importer's order.

What happens to a row that is already stored is the importer's choice (``OnConflict``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import models

from annotations.importers.base import BATCH_SIZE, upsert
from annotations.models import Assignment, Batch, Participant, Submission, Task
from annotations.pseudonyms import pseudonymise

if TYPE_CHECKING:
    from annotations.models import Study

BatchKey = tuple[str, int]  # (condition, index): a batch's natural key within its study
SESSION_PLATFORM = "mturk-session"  # the pseudonym namespace of a platform's session (assignment) ids


class OnConflict(enum.Enum):
    """What a row whose natural key is already stored becomes (participants aside, see ``relabel``)."""

    FAIL = "fail"  # plain INSERTs: the importer removed its earlier rows, a clash is an IntegrityError
    KEEP = "keep"  # the stored row stays as it is (MT-Bench: the first vote stored wins)
    UPDATE = "update"  # the stored row takes the new values (CoBBLEr: a re-import corrects them)


# The columns an UPDATE rewrites: every column the rows below set, apart from the natural keys
# (a task's or answer's columns of the other kind, pairwise or ranking, are rewritten to their defaults).
UPDATE_FIELDS: dict[type[models.Model], tuple[str, ...]] = {
    Batch: ("label",),
    Task: (
        "kind",
        "condition",
        "instruction",
        "pair",
        "arrangement",
        "cue",
        "pair_index",
        "response_ids",
        "show_threshold_bar",
    ),
    Assignment: ("status", "review", "review_note", "external_session_hash", "submitted_at", "work_seconds"),
    Submission: ("choice", "chosen_response", "ranking", "bar_position", "display_order"),
}


@dataclass(frozen=True)
class BatchRow:
    condition: str
    index: int
    label: str
    overlap: int | None = None

    @property
    def key(self) -> BatchKey:
        return (self.condition, self.index)


@dataclass(frozen=True)
class TaskRow:
    """One task; its condition is its batch's."""

    batch: BatchKey
    position: int
    kind: str
    instruction_id: int
    pair_id: int | None = None
    arrangement: str = ""
    cue: dict[str, Any] = field(default_factory=dict)
    pair_index: int | None = None
    response_ids: list[int] = field(default_factory=list)
    show_threshold_bar: bool = False


@dataclass(frozen=True)
class WorkerRow:
    """A participant: ``worker`` is the raw platform id, which only its pseudonym outlives."""

    worker: str
    label: str
    qualified: bool = False


@dataclass(frozen=True)
class AssignmentRow:
    """A worker's submitted sitting of a batch."""

    batch: BatchKey
    worker: str
    review: str = Assignment.Review.APPROVED
    review_note: str = ""
    session: str | None = None  # the platform's raw session id (MTurk AssignmentId), stored pseudonymised
    submitted_at: datetime | None = None
    work_seconds: int | None = None


@dataclass(frozen=True)
class SubmissionRow:
    """One answer: the task at ``position`` of ``batch``, in ``worker``'s assignment of that batch."""

    batch: BatchKey
    worker: str
    position: int
    idempotency_key: str
    display_order: list[int]
    choice: str = ""
    chosen_response_id: int | None = None
    ranking: list[int] | None = None
    bar_position: int | None = None


@dataclass
class HumanWork:
    """The rows of human work one import writes, each table in the order its rows should get ids."""

    platform: str  # Participant.Platform of every worker
    workers: list[WorkerRow] = field(default_factory=list)
    batches: list[BatchRow] = field(default_factory=list)
    tasks: list[TaskRow] = field(default_factory=list)
    assignments: list[AssignmentRow] = field(default_factory=list)
    submissions: list[SubmissionRow] = field(default_factory=list)


def worker_hash(platform: str, worker: str) -> str:
    """The stored pseudonym of a raw worker id (importers fold it into idempotency keys)."""
    return pseudonymise(platform, worker)


def write_human_work(*, study: Study, work: HumanWork, on_conflict: OnConflict, relabel: bool = False) -> None:
    """Write ``work`` into ``study`` (inside the caller's transaction).

    A participant already stored keeps its label (that of the study or run that first
    imported it) unless ``relabel``. Every worker and batch a row names must be in ``work``;
    a submission's task may also be one an earlier import stored (MT-Bench adds a judge's new
    tasks after the stored ones and answers both).
    """
    hashes = {row.worker: worker_hash(work.platform, row.worker) for row in work.workers}
    _write(
        Participant,
        (
            Participant(
                study=study,
                platform=work.platform,
                external_hash=hashes[row.worker],
                label=row.label,
                qualified=row.qualified,
            )
            for row in work.workers
        ),
        unique_fields=("study", "platform", "external_hash"),
        update_fields=("label",),
        on_conflict=OnConflict.UPDATE if relabel else OnConflict.KEEP,
    )
    participant_ids = dict(
        study.participants.filter(platform=work.platform, external_hash__in=hashes.values()).values_list(
            "external_hash", "pk"
        )
    )

    wanted = {row.key for row in work.batches}
    _write(
        Batch,
        (
            Batch(study=study, condition=row.condition, index=row.index, label=row.label, overlap=row.overlap)
            for row in work.batches
        ),
        unique_fields=("study", "condition", "index"),
        update_fields=UPDATE_FIELDS[Batch],
        on_conflict=on_conflict,
    )
    stored = _ids(study.batches.filter(condition__in={condition for condition, _index in wanted}), "condition", "index")
    batch_ids = {key: pk for key, pk in stored.items() if key in wanted}

    _write(
        Task,
        (
            Task(
                batch_id=batch_ids[row.batch],
                position=row.position,
                kind=row.kind,
                condition=row.batch[0],
                instruction_id=row.instruction_id,
                pair_id=row.pair_id,
                arrangement=row.arrangement,
                cue=row.cue,
                pair_index=row.pair_index,
                response_ids=row.response_ids,
                show_threshold_bar=row.show_threshold_bar,
            )
            for row in work.tasks
        ),
        unique_fields=("batch", "position"),
        update_fields=UPDATE_FIELDS[Task],
        on_conflict=on_conflict,
    )
    task_ids = _ids(Task.objects.filter(batch__in=batch_ids.values()), "batch_id", "position")

    def participant(worker: str) -> int:
        """The pk of a worker of ``work.workers`` (every assignment's and submission's worker is one)."""
        return participant_ids[hashes[worker]]

    _write(
        Assignment,
        (
            Assignment(
                batch_id=batch_ids[row.batch],
                participant_id=participant(row.worker),
                status=Assignment.Status.SUBMITTED,
                review=row.review,
                review_note=row.review_note,
                external_session_hash="" if row.session is None else pseudonymise(SESSION_PLATFORM, row.session),
                submitted_at=row.submitted_at,
                work_seconds=row.work_seconds,
            )
            for row in work.assignments
        ),
        unique_fields=("batch", "participant"),
        update_fields=UPDATE_FIELDS[Assignment],
        on_conflict=on_conflict,
    )
    assignment_ids = _ids(Assignment.objects.filter(batch__in=batch_ids.values()), "batch_id", "participant_id")

    _write(
        Submission,
        (
            Submission(
                assignment_id=assignment_ids[(batch_ids[row.batch], participant(row.worker))],
                task_id=task_ids[(batch_ids[row.batch], row.position)],
                choice=row.choice,
                chosen_response_id=row.chosen_response_id,
                ranking=row.ranking,
                bar_position=row.bar_position,
                display_order=row.display_order,
                source=Submission.Source.IMPORT,
                idempotency_key=row.idempotency_key,
            )
            for row in work.submissions
        ),
        unique_fields=("idempotency_key",),
        update_fields=UPDATE_FIELDS[Submission],
        on_conflict=on_conflict,
    )


def _ids(rows: models.QuerySet, *key: str) -> dict[tuple, int]:
    """Natural key (the values of the ``key`` columns) -> pk, for every row of ``rows``: one query."""
    return {tuple(values): pk for pk, *values in rows.values_list("pk", *key)}


def _write(
    model: type[models.Model],
    objs: Iterable[models.Model],
    *,
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
    on_conflict: OnConflict,
) -> None:
    """One bulk INSERT per BATCH_SIZE rows, ``on_conflict`` deciding what a clash does."""
    if on_conflict is OnConflict.FAIL:
        model._default_manager.bulk_create(list(objs), batch_size=BATCH_SIZE)
    else:
        upsert(
            model,
            objs,
            unique_fields=unique_fields,
            update_fields=update_fields if on_conflict is OnConflict.UPDATE else (),
        )
