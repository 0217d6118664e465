"""LLMJob.complete_if_done(): the one completion of judge and generation jobs, race-safe."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from judging import services
from judging.generate.services import start_generation_job
from judging.models import Generation, GenerationJob, JudgeJob, Judgment, RegisteredModel
from tests.conftest import purge_broker
from tests.judging.conftest import build_study

Status = JudgeJob.Status


def judge_job() -> JudgeJob:
    job = services.start_judge_job(
        study=build_study(), judge=services.ensure_baseline_judge(name="random"), condition_names=["order"]
    )
    return JudgeJob.objects.get(pk=job.pk)


def finish_rows(job: JudgeJob, *, keep_pending: int = 0) -> None:
    ids = list(job.judgments.order_by("pk").values_list("pk", flat=True))
    Judgment.objects.filter(pk__in=ids[keep_pending:]).update(status=Judgment.Status.DONE)


@pytest.mark.django_db
def test_it_waits_for_the_last_pending_row_then_completes_once():
    job = judge_job()
    finish_rows(job, keep_pending=1)
    assert job.complete_if_done() is False
    assert job.status == Status.RUNNING and job.finished_at is None

    Judgment.objects.filter(job=job, status=Judgment.Status.PENDING).update(status=Judgment.Status.FAILED)
    assert job.complete_if_done() is True
    assert job.status == Status.COMPLETED and job.finished_at is not None
    finished_at = job.finished_at
    assert job.complete_if_done() is False  # the second caller loses
    assert job.finished_at == finished_at


@pytest.mark.django_db
def test_a_budget_stop_with_the_last_call_is_a_completion():
    job = judge_job()
    finish_rows(job)
    JudgeJob.objects.filter(pk=job.pk).update(status=Status.BUDGET_EXHAUSTED)
    assert job.complete_if_done() is True and job.status == Status.COMPLETED


@pytest.mark.django_db
@pytest.mark.parametrize("status", [Status.QUEUED, Status.PAUSED, Status.CANCELLED, Status.FAILED])
def test_a_job_not_running_never_completes_here(status):
    # QUEUED: its rows are still being written; the others were stopped by someone.
    job = judge_job()
    finish_rows(job)
    JudgeJob.objects.filter(pk=job.pk).update(status=status)
    assert job.complete_if_done() is False
    job.refresh_from_db()
    assert job.status == status


@pytest.mark.django_db
def test_a_generation_job_completes_on_its_own_rows():
    study = build_study()
    model = RegisteredModel.objects.create(
        name="gen", kind=RegisteredModel.Kind.OPENAI, base_url="http://127.0.0.1:9/v1", model="sim:"
    )
    job = start_generation_job(study=study, generator=model)
    assert GenerationJob.row_model() is Generation and JudgeJob.row_model() is Judgment
    assert job.complete_if_done() is False
    job.generations.update(status=Generation.Status.DONE)
    assert job.complete_if_done() is True and job.status == GenerationJob.Status.COMPLETED


@pytest.mark.django_db(transaction=True)
def test_of_many_callers_at_once_exactly_one_completes():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite serialises writers anyway")
    job = judge_job()  # outside a transaction its chunks are sent: nobody runs them
    purge_broker()
    finish_rows(job)
    start, results = threading.Barrier(8), []

    def call() -> None:
        try:
            start.wait()
            results.append(JudgeJob.objects.get(pk=job.pk).complete_if_done())
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]
