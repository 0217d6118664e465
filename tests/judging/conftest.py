"""Judging fixtures: a small hand-built study, the simulator on a free port, judge builders."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal

import pytest

from annotations.models import Candidate, Instruction, Pair, Response, Study
from judging.models import RegisteredModel
from judging.simulator.server import SimulatorServer
from tests.conftest import WorkerProcess, purge_broker

CANDIDATES = ("alpha", "bravo", "charlie", "delta")
INSTRUCTIONS = (
    ("Is the sky blue on a clear day?", "Yes, because of Rayleigh scattering."),
    ("Why do cats purr?", "Cats purr to communicate and to soothe themselves."),
    ("Can penguins fly?", "No. Penguins are flightless birds that swim."),
)


def build_study(slug: str = "tiny") -> Study:
    """3 instructions x 4 candidates -> 18 pairs; every response text is distinct."""
    study = Study.objects.create(slug=slug, name="Tiny study")
    cands = [Candidate.objects.create(study=study, key=k, position=i) for i, k in enumerate(CANDIDATES)]
    for index, (text, reference) in enumerate(INSTRUCTIONS):
        ins = Instruction.objects.create(study=study, index=index, text=text, reference=reference)
        responses = [
            Response.objects.create(
                instruction=ins,
                candidate=c,
                text=f"{c.key} answers question {index}: " + "detail " * (1 + (i * 3 + index) % 5),
            )
            for i, c in enumerate(cands)
        ]
        for a, b in itertools.combinations(responses, 2):
            Pair.objects.create(instruction=ins, response_a=a, response_b=b)
    return study


@pytest.fixture
def study(db) -> Study:
    return build_study()


@pytest.fixture
def simulator() -> Iterator[SimulatorServer]:
    server = SimulatorServer(max_concurrency=64).start_in_thread()
    yield server
    server.stop()


@pytest.fixture
def make_sim_judge(simulator):
    def make(name: str = "sim", knobs: str = "", **fields) -> RegisteredModel:
        defaults = {
            "kind": RegisteredModel.Kind.OPENAI,
            "base_url": simulator.base_url,
            "model": f"sim:{knobs}",
            "max_concurrency": 8,
            "requests_per_minute": 0,
            "request_timeout": 5.0,
            "price_in_per_1k": Decimal("0.001"),
            "price_out_per_1k": Decimal("0.002"),
        }
        defaults.update(fields)
        return RegisteredModel.objects.create(name=name, **defaults)

    return make


@pytest.fixture
def start_worker(transactional_db, warm_workers) -> Iterator:
    """``start_worker()`` gives a real Celery worker (queues llm and default, 4 threads) on the
    test database: an idle one an earlier test left with the same environment, or a new one
    (``tests.conftest.WarmWorkers``). After the test each is kept if idle, else ended, and the
    broker is purged. Set the worker's environment (leases, backoff...) with monkeypatch
    before starting it."""
    purge_broker()
    workers: list[WorkerProcess] = []

    def start() -> WorkerProcess:
        workers.append(warm_workers.start(queues="llm,default", concurrency=4))
        return workers[-1]

    start.workers = workers
    yield start
    for worker in workers:
        warm_workers.release(worker)
    purge_broker()


def sweep_until_finished(job) -> bool:
    """One round of what the periodic stale-work sweeper does (for ``wait_until``); True once
    the job is finished."""
    from judging import services

    job.refresh_from_db()
    if job.is_finished:
        return True
    services.requeue_stale_work(stale_after=timedelta(0))
    return False


def worker_environment(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def judge_worker(start_worker, monkeypatch):
    """Workers with short leases and fast backoff, so failures heal within a test."""
    worker_environment(
        monkeypatch,
        JUDGING_LEASE_SECONDS="3",
        JUDGING_BACKOFF_BASE_MS="50",
        JUDGING_BACKOFF_CAP_MS="500",
        JUDGING_CHUNK_SIZE="10",
    )
    return start_worker


def open_launch_form(page, live_server) -> None:
    """Log ``researcher`` (alice) in through the login page and land on the judge-job launch form."""
    page.goto(f"{live_server.url}/accounts/login/?next=/judging/jobs/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/judging/jobs/")
