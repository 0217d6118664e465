"""Isolation and exact accounting, with a real Celery worker and real HTTP to the simulator."""

from __future__ import annotations

import signal
import socket
import time

import pytest
from django.db.models import Sum

from judging import services
from judging.models import Judgment, RegisteredModel
from tests.conftest import wait_until
from tests.judging.conftest import sweep_until_finished, worker_environment

pytestmark = [pytest.mark.worker, pytest.mark.slow]


@pytest.fixture
def slow_retry_worker(start_worker, monkeypatch):
    """A worker (4 slots) whose retries wait seconds, as real backoff does: under the old runner
    a failing model's chunks slept through them holding every slot."""
    worker_environment(
        monkeypatch,
        JUDGING_LEASE_SECONDS="3",
        JUDGING_BACKOFF_BASE_MS="2000",
        JUDGING_BACKOFF_CAP_MS="8000",
        JUDGING_CHUNK_SIZE="10",
    )
    return start_worker


def _refreshed(job):
    job.refresh_from_db()
    return job


def test_a_failing_endpoint_does_not_starve_a_healthy_one(
    study, make_sim_judge, simulator, slow_retry_worker, settings
):
    """Job 1's model answers 500 to everything; job 2 (another model, healthy) starts after it.

    Bound: job 2 alone needs 36 calls x 0.1 s / 4 in flight ~ 1 s; we allow 15 s for worker
    start-up and scheduling. Job 1's 144 rows each retry for ~2+4+8+8+8 s (backoff 2 s doubling,
    capped at 8 s): holding a slot through that, its 15 chunks would keep job 2 waiting far
    beyond 15 s, and job 1 must indeed still be running when job 2 is done.
    """
    settings.JUDGING_CHUNK_SIZE = 10
    failing = make_sim_judge(name="failing", knobs="error_rate=1,errors=500", max_concurrency=8)
    healthy = make_sim_judge(name="healthy", knobs="latency_ms=100,seed=5", max_concurrency=4)
    worker = slow_retry_worker()
    assert worker.wait_ready(), worker.log()[-3000:]  # the clock measures scheduling, not start-up
    job1 = services.start_judge_job(
        study=study, judge=failing, condition_names=["order", "compassion", "bandwagon", "attentional"]
    )
    assert wait_until(lambda: _refreshed(job1).calls >= 16, timeout=30), worker.log()[-3000:]
    started = time.monotonic()
    job2 = services.start_judge_job(study=study, judge=healthy, condition_names=["order"])
    assert wait_until(lambda: _refreshed(job2).is_finished, timeout=15), worker.log()[-3000:]
    took = time.monotonic() - started
    assert job2.status == "completed" and job2.done == 36, took
    assert _refreshed(job1).status == "running" and job1.done == 0
    assert job1.last_error == "500 server error" and job1.last_error_at is not None
    # Retries waited in the queue, not in a slot: rows are deferred, released, attempted again.
    assert Judgment.objects.filter(job=job1, status="pending", claim_token="", not_before__isnull=False).exists()


def test_a_down_endpoint_does_not_hold_a_baseline_job(study, slow_retry_worker, settings):
    """The reported case: a demo judge whose endpoint is down (nothing listening: connection
    refused) held a baseline job at 0/240. Bound: the 72 baseline judgments need no network;
    10 s covers scheduling."""
    settings.JUDGING_CHUNK_SIZE = 10
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connection refused
    down = RegisteredModel.objects.create(
        name="down",
        kind="openai",
        base_url=f"http://127.0.0.1:{port}/v1",
        model="sim:seed=1",
        requests_per_minute=0,
        max_concurrency=8,
        request_timeout=2.0,
    )
    worker = slow_retry_worker()
    assert worker.wait_ready(), worker.log()[-3000:]  # the bound measures scheduling, not start-up
    job1 = services.start_judge_job(
        study=study, judge=down, condition_names=["order", "compassion", "bandwagon", "attentional"]
    )
    # Job 1 has met the down endpoint once its first refusals are stored (requests are counted
    # before they go out, so its call count alone comes before any error is known).
    assert wait_until(lambda: _refreshed(job1).last_error == "connection error", timeout=30), worker.log()[-3000:]
    baseline = services.start_judge_job(
        study=study, judge=services.ensure_baseline_judge(name="random"), condition_names=["order", "bandwagon"]
    )
    assert wait_until(lambda: _refreshed(baseline).is_finished, timeout=10), worker.log()[-3000:]
    assert baseline.status == "completed" and baseline.done == 72
    assert _refreshed(job1).status == "running" and job1.last_error == "connection error"


def test_a_killed_worker_leaves_every_request_counted(
    study, make_sim_judge, simulator, slow_retry_worker, settings, monkeypatch
):
    """kill -9 mid-job: every request the simulator received is in job.calls (the report was
    485 HTTP calls for 480 counted), the answers lost with the worker are charged as lost, and
    the rows' attempts add up to the calls. (A chunk counts its requests in one write before
    handing them to its HTTP threads, so a kill can leave requests counted that never went
    out: at most the rows of the chunks the worker was running, charged as lost; it never
    counts fewer.)"""
    monkeypatch.setenv("JUDGING_BACKOFF_BASE_MS", "50")
    monkeypatch.setenv("JUDGING_BACKOFF_CAP_MS", "500")
    settings.JUDGING_CHUNK_SIZE = 10
    judge = make_sim_judge(knobs="latency_ms=400", max_concurrency=4)
    worker = slow_retry_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])
    assert wait_until(lambda: _refreshed(job).done >= 12, timeout=60), worker.log()[-3000:]
    worker.kill(signal.SIGKILL)
    in_flight = Judgment.objects.filter(job=job, status="pending", in_flight_usd__gt=0).count()
    assert in_flight > 0  # requests were out when the worker died

    slow_retry_worker()
    # What the periodic sweeper does, once a second (its cadence, not a guess at how long it takes).
    assert wait_until(lambda: sweep_until_finished(job), timeout=120, interval=1.0)
    assert job.status == "completed" and job.done == job.total == 72
    received = simulator.stats.total_calls
    # Never fewer counted than sent. More only by requests counted but not yet on the wire when
    # the worker died: at most the rows of the chunks it ran (a model's chunks per process).
    assert received <= job.calls <= received + settings.JUDGING_CHUNKS_PER_MODEL * settings.JUDGING_CHUNK_SIZE
    assert job.calls == Judgment.objects.filter(job=job).aggregate(n=Sum("attempts"))["n"]
    assert job.lost_calls == in_flight and job.lost_cost_usd > 0
    assert job.calls == job.total + job.lost_calls  # every other request was answered and stored
    assert not Judgment.objects.filter(job=job, in_flight_usd__gt=0).exists()
