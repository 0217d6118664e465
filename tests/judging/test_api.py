"""REST API for judges and judge jobs: token auth, staff only, same services as the pages."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import runner, services
from judging.models import JudgeJob

SECRET = "sk-live-API-SECRET-999"


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def test_it_starts_a_job_and_reports_progress(api, study, django_capture_on_commit_callbacks):
    services.ensure_baseline_judge(name="longer")
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post(
            "/api/judge-jobs/start/",
            {"study": "tiny", "judge": "longer", "conditions": ["order", "salience"]},
            format="json",
        )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["conditions"] == ["order"] and body["total"] == 36 and body["status"] == "running"
    assert len(callbacks) == 2  # send the batch, then mark RUNNING
    job = JudgeJob.objects.get(pk=body["id"])
    runner.run_chunk(job_id=job.pk, judgment_ids=list(job.judgments.values_list("pk", flat=True)))
    detail = api.get(f"/api/judge-jobs/{job.pk}/").json()
    assert detail["status"] == "completed" and detail["done"] == 36 and detail["progress"]["percent"] == 100
    rows = api.get(f"/api/judge-jobs/{job.pk}/judgments/").json()
    assert rows["count"] == 36 and {r["choice"] for r in rows["results"]} <= {"first", "second"}


def test_bad_input_is_one_clear_error_and_changes_nothing(api, study):
    services.ensure_baseline_judge(name="longer")
    response = api.post(
        "/api/judge-jobs/start/", {"study": "tiny", "judge": "longer", "conditions": ["vibes"]}, format="json"
    )
    assert response.status_code == 400 and "vibes" in response.content.decode()
    response = api.post(
        "/api/judge-jobs/start/",
        {"study": "tiny", "judge": "longer", "conditions": ["order"], "pair_set": "human"},
        format="json",
    )
    # Well-formed, but the study's state refuses it: 422 (400 is for what the schema refuses).
    assert response.status_code == 422 and "no pairs" in response.json()["detail"]
    assert (
        api.post(
            "/api/judge-jobs/start/", {"study": "nope", "judge": "longer", "conditions": ["order"]}, format="json"
        ).status_code
        == 404
    )
    assert not JudgeJob.objects.exists()


def test_pause_resume_cancel(api, study):
    judge = services.ensure_baseline_judge(name="random")
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    assert api.post(f"/api/judge-jobs/{job.pk}/pause/").json()["status"] == "paused"
    assert api.post(f"/api/judge-jobs/{job.pk}/pause/").json()["status"] == "paused"
    assert (
        api.post(f"/api/judge-jobs/{job.pk}/resume/", {"budget_usd": "5"}, format="json").json()["status"] == "running"
    )
    assert api.post(f"/api/judge-jobs/{job.pk}/cancel/").json()["status"] == "cancelled"
    assert api.post(f"/api/judge-jobs/{job.pk}/resume/", {"budget_usd": "-1"}, format="json").status_code == 400


def test_judges_list_never_contains_the_key(api):
    judge = services.create_judge(name="gpt", base_url="http://127.0.0.1:9/v1", model="m", api_key=SECRET)
    body = api.get("/api/judges/").content.decode()
    assert '"has_api_key":true' in body.replace(" ", "")
    assert SECRET not in body and judge.api_key_encrypted not in body


def test_it_needs_a_staff_token(client, study, django_user_model):
    assert APIClient().get("/api/judge-jobs/").status_code == 401
    user = django_user_model.objects.create_user("mallory", password="mallory-pass-1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert client.get("/api/judge-jobs/").status_code == 403
    assert client.post("/api/judge-jobs/1/pause/").status_code == 403
