"""Dashboard, report page (htmx), downloads and the report API."""

from __future__ import annotations

import json

import pytest
from celery import current_app
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from analysis import enqueue
from analysis.models import ReportRun
from analysis.overview import StudyOverview
from analysis.plots import BUILDERS
from analysis.tasks import build_report_run
from judging.models import JudgeJob, RegisteredModel
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study
from tests.annotations.conftest import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return mtbench_study(slug="views", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)


def _done_run(study, profile="default") -> ReportRun:
    run = ReportRun.objects.create(study=study, profile=profile)
    build_report_run(run.pk)  # the task body, in-process
    run.refresh_from_db()
    assert run.status == ReportRun.Status.DONE, run.error
    return run


def test_dashboard_shows_progress_jobs_and_last_report(researcher_client, study, django_assert_max_num_queries):
    _done_run(study)
    with django_assert_max_num_queries(8):
        response = researcher_client.get(reverse("analysis:dashboard"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "plain</td><td>11</td><td>11</td>" in body  # 11 submissions, approved as import_mtbench stores them
    assert "gpt-4" in body and "completed" in body and "done" in body


def test_the_overview_is_one_plain_structure_read_in_a_fixed_number_of_queries(
    researcher_client, researcher, study, django_assert_num_queries
):
    _done_run(study)
    url = reverse("analysis:dashboard")
    with CaptureQueriesContext(connection) as one_study:
        researcher_client.get(url)
    for n in range(3):  # more studies, each with a judge job and a report: not one query more
        other = build_study(f"more-{n}", created_by=researcher)
        judge = RegisteredModel.objects.create(
            name=f"more-{n}", kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=researcher
        )
        JudgeJob.objects.create(study=other, judge=judge, conditions=["order"], created_by=researcher)
        ReportRun.objects.create(study=other, profile="default", created_by=researcher)
    with django_assert_num_queries(len(one_study)):
        response = researcher_client.get(url)
    rows = response.context["overview"]
    assert all(isinstance(row, StudyOverview) for row in rows)
    assert [row.study.slug for row in rows] == ["more-2", "more-1", "more-0", "views"]  # newest first
    views = rows[-1]
    assert views.last_run is not None and views.last_run.status == ReportRun.Status.DONE and views.leaderboard
    assert [(p.condition, p.submissions, p.approved) for p in views.progress] == [("plain", 11, 11)]
    assert [job.judge for job in rows[0].jobs] == ["more-2"] and rows[0].last_run.status == ReportRun.Status.QUEUED
    assert rows[0].leaderboard == []  # no finished report yet


def test_it_requires_staff(client, study):
    url = reverse("analysis:report", args=["views"])
    assert client.get(url).status_code == 302
    user = get_user_model().objects.create_user("carol", password="carol-password")
    client.force_login(user)
    # Logged in but not a researcher: refused (cobbler_site.foundation.access), not sent to a login loop.
    assert client.get(url).status_code == 403
    assert client.get(reverse("analysis:report-download", args=["views", "json"])).status_code == 403


def test_post_queues_one_run_and_never_computes_in_the_request(
    researcher_client, study, django_capture_on_commit_callbacks
):
    url = reverse("analysis:report", args=["views"])
    with django_capture_on_commit_callbacks() as callbacks:
        first = researcher_client.post(url, {"profile": "mtbench-post"}, HTTP_HX_REQUEST="true")
        researcher_client.post(url, {"profile": "mtbench-post"}, HTTP_HX_REQUEST="true")  # double click
    assert first.status_code == 200
    body = first.content.decode()
    assert 'hx-trigger="every 2s"' in body and "<html" not in body
    run = ReportRun.objects.get()
    assert (run.status, run.profile, run.result) == ("queued", "mtbench-post", None)
    assert len(callbacks) == 1
    # The message is sent by the task's name (analysis.enqueue never imports the tasks module).
    assert current_app.tasks[enqueue.BUILD_REPORT_RUN].name == build_report_run.name


def test_polling_stops_when_the_run_is_done(researcher_client, study):
    run = _done_run(study)
    url = reverse("analysis:report", args=["views"]) + "?profile=default"
    response = researcher_client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER="report-body")
    assert response.status_code == 286
    body = response.content.decode()
    assert "every 2s" not in body and 'data-figure="strata"' in body and f"run {run.pk}" in body
    # A profile switch (triggered by the select) gets a normal 200 fragment.
    other = researcher_client.get(
        url.replace("default", "mtbench-post"), HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER="profile-select"
    )
    assert other.status_code == 200 and "No report for profile mtbench-post yet" in other.content.decode()


def test_full_page_and_unknown_profile(researcher_client, study):
    url = reverse("analysis:report", args=["views"])
    page = researcher_client.get(url)
    assert page.status_code == 200 and "<html" in page.content.decode()
    assert researcher_client.get(url + "?profile=bogus").status_code == 404
    assert researcher_client.get(reverse("analysis:report", args=["nope"])).status_code == 404


def test_downloads_serve_the_stored_report(researcher_client, study):
    download = reverse("analysis:report-download", args=["views", "json"])
    assert researcher_client.get(download).status_code == 404  # nothing computed yet
    run = _done_run(study)
    data = json.loads(researcher_client.get(download).content)
    assert data["length_control"] == run.result["length_control"]
    html = researcher_client.get(reverse("analysis:report-download", args=["views", "html"]))
    assert html["Content-Disposition"] == 'attachment; filename="views-default.html"'
    assert html.content.count(b"data:image/svg+xml;base64,") == len(BUILDERS)
    zipped = researcher_client.get(reverse("analysis:report-download", args=["views", "csv"]))
    assert zipped["Content-Type"] == "application/zip"
    assert researcher_client.get(reverse("analysis:report-download", args=["views", "pdf"])).status_code == 404


def test_api_reads_the_latest_report_and_starts_runs(researcher, study, django_capture_on_commit_callbacks):
    api = APIClient()
    api.force_authenticate(researcher)
    url = reverse("api-study-report", args=["views"])
    assert api.get(url, {"profile": "default"}).status_code == 404
    with django_capture_on_commit_callbacks() as callbacks:
        started = api.post(url, {"profile": "default"}, format="json")
    assert started.status_code == 202 and started.data["status"] == "queued" and len(callbacks) == 1
    build_report_run(started.data["id"])
    status = api.get(reverse("api-report-run", args=[started.data["id"]]))
    assert status.data["status"] == "done" and status.data["progress"] == 1.0
    latest = api.get(url, {"profile": "default"})
    assert latest.status_code == 200 and latest.data["schema"] == "cobbler-report/1"
    assert api.post(url, {"profile": "bogus"}, format="json").status_code == 400


def test_api_refuses_non_staff(study):
    api = APIClient()
    api.force_authenticate(get_user_model().objects.create_user("dave", password="dave-password"))
    assert api.get(reverse("api-study-report", args=["views"])).status_code == 403


def test_a_failed_run_is_marked_and_shown(researcher_client, study, monkeypatch):
    from analysis import services

    def boom(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(services, "compose_report", boom)
    run = ReportRun.objects.create(study=study, profile="default")
    with pytest.raises(RuntimeError):
        build_report_run(run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "disk on fire" in run.error
    assert (
        "Last run failed: RuntimeError: disk on fire"
        in researcher_client.get(reverse("analysis:report", args=["views"])).content.decode()
    )
    build_report_run(run.pk)  # a redelivered message for a finished run does nothing
    build_report_run(999999)  # and a deleted run is no error
