"""annotations.importers.human_work: the one writer of imported human work, on a tiny study."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from annotations.importers.human_work import (
    AssignmentRow,
    BatchRow,
    HumanWork,
    OnConflict,
    SubmissionRow,
    TaskRow,
    WorkerRow,
    write_human_work,
)
from annotations.models import (
    Assignment,
    Batch,
    Candidate,
    Condition,
    Instruction,
    Pair,
    Participant,
    Response,
    Study,
    Submission,
    Task,
)
from annotations.pseudonyms import pseudonymise

pytestmark = pytest.mark.django_db
MTURK = Participant.Platform.MTURK


@pytest.fixture
def study() -> Study:
    return Study.objects.create(slug="hw", name="human work", source=Study.Source.MANUAL)


def _pair(study: Study) -> tuple[Instruction, Pair]:
    instruction = Instruction.objects.create(study=study, index=0, text="Q?")
    a, b = (Candidate.objects.create(study=study, key=key, name=key, position=n) for n, key in enumerate("ab"))
    ra, rb = (Response.objects.create(instruction=instruction, candidate=c, text=c.key) for c in (a, b))
    return instruction, Pair.objects.create(instruction=instruction, response_a=ra, response_b=rb)


def _work(study: Study, *, n_tasks: int = 2, choice: str = "A", label: str = "w1") -> HumanWork:
    """Two workers in two plain batches (given index 1 first), ``n_tasks`` answered tasks each."""
    instruction, pair = (
        _pair(study) if not study.instructions.exists() else (study.instructions.get(), Pair.objects.get())
    )
    slots = [pair.response_a_id, pair.response_b_id]
    work = HumanWork(platform=MTURK, workers=[WorkerRow("WORKER-RAW-1", label), WorkerRow("WORKER-RAW-2", "w2")])
    for index, worker in ((1, "WORKER-RAW-1"), (0, "WORKER-RAW-2")):
        batch = (Condition.PLAIN, index)
        work.batches.append(BatchRow(Condition.PLAIN, index, f"batch {index}"))
        work.assignments.append(AssignmentRow(batch, worker, session=f"SESSION-{worker}", work_seconds=60))
        for position in range(n_tasks):
            work.tasks.append(TaskRow(batch, position, Task.Kind.PAIRWISE, instruction.pk, pair_id=pair.pk))
            key = f"hw-{index}-{position}"
            work.submissions.append(
                SubmissionRow(
                    batch, worker, position, key, display_order=slots, choice=choice, chosen_response_id=slots[0]
                )
            )
    return work


def test_it_writes_linked_rows_in_the_given_order_and_keeps_no_raw_id(study):
    write_human_work(study=study, work=_work(study), on_conflict=OnConflict.KEEP)

    # pk order follows the input order (index 1 was given first), not the natural key's.
    assert list(Batch.objects.order_by("pk").values_list("index", flat=True)) == [1, 0]
    people = {p.label: p for p in Participant.objects.all()}
    assert people["w1"].external_hash == pseudonymise(MTURK, "WORKER-RAW-1")
    assert people["w2"].study == study and people["w2"].platform == MTURK
    stored = [str(row) for model in (Participant, Assignment) for row in model.objects.values_list()]
    assert not any("RAW" in text or "SESSION-" in text for text in stored)

    assignment = Assignment.objects.get(participant=people["w1"])
    assert assignment.batch.index == 1 and assignment.status == Assignment.Status.SUBMITTED
    assert assignment.review == Assignment.Review.APPROVED and assignment.work_seconds == 60
    assert assignment.external_session_hash == pseudonymise("mturk-session", "SESSION-WORKER-RAW-1")
    for submission in Submission.objects.select_related("task", "assignment"):
        assert submission.task.batch_id == submission.assignment.batch_id
        assert submission.idempotency_key == f"hw-{submission.task.batch.index}-{submission.task.position}"
        assert submission.source == Submission.Source.IMPORT and submission.choice == "A"
    assert Task.objects.filter(condition=Condition.PLAIN).count() == 4


def test_keep_leaves_stored_rows_be_and_update_rewrites_them(study):
    write_human_work(study=study, work=_work(study), on_conflict=OnConflict.KEEP)
    write_human_work(study=study, work=_work(study, choice="B", label="renamed"), on_conflict=OnConflict.KEEP)
    assert set(Submission.objects.values_list("choice", flat=True)) == {"A"}
    assert Submission.objects.count() == 4

    write_human_work(study=study, work=_work(study, choice="B", label="renamed"), on_conflict=OnConflict.UPDATE)
    assert set(Submission.objects.values_list("choice", flat=True)) == {"B"}
    assert Submission.objects.count() == 4
    # A participant keeps its first label unless the importer asks to relabel.
    assert Participant.objects.filter(label="renamed").count() == 0
    write_human_work(study=study, work=_work(study, label="renamed"), on_conflict=OnConflict.UPDATE, relabel=True)
    assert Participant.objects.filter(label="renamed").count() == 1
    assert Participant.objects.count() == 2


def test_fail_refuses_a_row_that_is_already_stored(study):
    write_human_work(study=study, work=_work(study), on_conflict=OnConflict.FAIL)
    with pytest.raises(IntegrityError), transaction.atomic():
        write_human_work(study=study, work=_work(study), on_conflict=OnConflict.FAIL)


@pytest.mark.parametrize("on_conflict", list(OnConflict))
def test_its_queries_do_not_grow_with_the_rows(study, on_conflict):
    def queries(n_tasks: int) -> int:
        Batch.objects.all().delete()
        Participant.objects.all().delete()
        work = _work(study, n_tasks=n_tasks)
        with CaptureQueriesContext(connection) as captured:
            write_human_work(study=study, work=work, on_conflict=on_conflict)
        return len(captured)

    # 2 and 60 rows a table: one statement each on SQLite too (999 parameters a statement).
    assert queries(1) == queries(30)
