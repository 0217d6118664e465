"""A report run started from the page is computed by a real worker process, with progress."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.models import ReportRun
from analysis.plots import BUILDERS
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study
from tests.conftest import wait_until

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def test_the_worker_computes_a_run_started_in_the_browser(celery_worker_process, client, django_user_model):
    mtbench_study(slug="wk", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)
    client.force_login(django_user_model.objects.create_user("erin", password="erin-password", is_staff=True))
    url = reverse("analysis:report", args=["wk"])
    client.post(url, {"profile": "mtbench-post"}, HTTP_HX_REQUEST="true")
    run = ReportRun.objects.get()

    def finished() -> bool:
        run.refresh_from_db()
        return run.status in ("done", "failed")

    assert wait_until(finished, timeout=90), celery_worker_process.log()[-3000:]
    assert run.status == "done", run.error
    assert run.result["length_control"]["join"] == "ordered" and len(run.figures) == len(BUILDERS)
    poll = client.get(url + "?profile=mtbench-post", HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER="report-body")
    assert poll.status_code == 286
