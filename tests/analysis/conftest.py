"""Analysis fixtures: the demo exactly as `make run` leaves it, people and judges included."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotations.models import Study


def run_in_process(job) -> None:
    """What the worker does with a judge job: run chunks until no row is left pending."""
    from judging import runner

    for _ in range(20):
        pending = list(job.judgments.filter(status="pending").values_list("pk", flat=True))
        if not pending:
            break
        runner.run_chunk("judge", job.pk, pending)


@pytest.fixture
def demo_study(settings) -> Study:
    """The demo as `make run` seeds it (content, simulated crowd, judge jobs), with its judge jobs
    answered by the simulator over real HTTP, in-process, as the worker would run them."""
    from judging.models import JudgeJob
    from judging.simulator.server import SimulatorServer

    settings.JUDGING_BACKOFF_BASE, settings.JUDGING_BACKOFF_CAP = 0.01, 0.2
    server = SimulatorServer(max_concurrency=64).start_in_thread()
    try:
        # seed_demo points the demo judge at SIMULATOR_BASE_URL, as `make run` does with its port.
        settings.SIMULATOR_BASE_URL = server.base_url
        # The report is computed by the tests that want one, after the judges ran.
        call_command("seed_demo", "--no-report", stdout=io.StringIO())
        for job in JudgeJob.objects.filter(study__slug="demo"):
            run_in_process(job)
            assert not job.judgments.filter(status="pending").exists()
    finally:
        server.stop()
    return Study.objects.get(slug="demo")
