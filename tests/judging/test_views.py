"""Researcher pages for judge jobs and judges: launch, live progress, actions, key hygiene."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judging import services
from judging.models import JudgeJob, RegisteredModel

SECRET = "sk-live-PAGE-SECRET-777"


@pytest.fixture
def judge(db):
    return services.ensure_baseline_judge(name="first-slot")


def _post_job(client, study, judge, **extra):
    data = {
        "study": study.pk,
        "judge": judge.pk,
        "conditions": ["order", "bandwagon"],
        "pair_set": "all",
        "parser": "robust",
        "prompt_version": "v1",
        "seed": 0,
        **extra,
    }
    return client.post("/judging/jobs/", data, **extra.pop("headers", {}))


def test_it_launches_a_job_and_redirects_to_its_page(
    researcher_client, study, judge, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = _post_job(researcher_client, study, judge, budget_usd="2.5")
    job = JudgeJob.objects.get()
    assert response.status_code == 302 and response.url == f"/judging/jobs/{job.pk}/"
    assert job.conditions == ["order", "bandwagon"] and job.total == 72
    assert job.budget_usd == Decimal("2.5") and job.status == "running"
    assert len(callbacks) == 3  # two chunk messages and the end of queueing wait for the commit


def test_htmx_launch_uses_hx_redirect(researcher_client, study, judge):
    response = researcher_client.post(
        "/judging/jobs/",
        {
            "study": study.pk,
            "judge": judge.pk,
            "conditions": ["order"],
            "pair_set": "all",
            "parser": "robust",
            "prompt_version": "v1",
            "seed": 0,
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and response["HX-Redirect"].startswith("/judging/jobs/")


def test_invalid_launch_returns_the_form_fragment_with_422(researcher_client, study, judge):
    response = researcher_client.post(
        "/judging/jobs/",
        {"study": study.pk, "judge": judge.pk, "conditions": ["vibes"]},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 422
    body = response.content.decode()
    assert body.lstrip().startswith('<form id="launch-form"') and "<html" not in body
    assert not JudgeJob.objects.exists()


def test_a_service_error_shows_on_the_form(researcher_client, study, judge):
    response = _post_job(researcher_client, study, judge, pair_set="human")
    assert response.status_code == 422
    assert "has no pairs in pair set" in response.content.decode()


def test_progress_polls_every_2s_and_stops_when_finished(researcher_client, study, judge):
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    page = researcher_client.get(f"/judging/jobs/{job.pk}/")
    assert page.status_code == 200 and b'hx-trigger="every 2s"' in page.content and b"<html" in page.content
    fragment = researcher_client.get(f"/judging/jobs/{job.pk}/", headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and b"<html" not in fragment.content
    assert b'id="job-progress"' in fragment.content and b"0 / 36" in fragment.content
    from judging import runner

    runner.run_chunk(job_id=job.pk, judgment_ids=list(job.judgments.values_list("pk", flat=True)))
    final = researcher_client.get(f"/judging/jobs/{job.pk}/", headers={"HX-Request": "true"})
    assert final.status_code == 286  # htmx: stop polling
    assert b"36 / 36" in final.content and b"every 2s" not in final.content


def test_progress_page_queries_do_not_grow(researcher_client, study, judge, django_assert_max_num_queries):
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    with django_assert_max_num_queries(6):
        researcher_client.get(f"/judging/jobs/{job.pk}/", headers={"HX-Request": "true"})


def test_pause_resume_cancel_buttons(researcher_client, study, judge, django_capture_on_commit_callbacks):
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    url = f"/judging/jobs/{job.pk}/"
    assert researcher_client.post(url + "pause/").status_code == 302
    assert researcher_client.post(url + "pause/").status_code == 302  # double click: no error
    job.refresh_from_db()
    assert job.status == "paused"
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        researcher_client.post(url + "resume/")
    job.refresh_from_db()
    assert job.status == "running" and len(callbacks) == 1
    response = researcher_client.post(url + "cancel/", headers={"HX-Request": "true"})
    assert response["HX-Redirect"] == url
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert researcher_client.post(url + "explode/").status_code == 404


def test_pages_need_a_staff_login(client, db, django_user_model):
    assert client.get("/judging/jobs/").status_code == 302
    worker = django_user_model.objects.create_user("eve", password="eve-password-1")
    client.force_login(worker)
    assert client.get("/judging/jobs/").status_code == 403
    assert client.get("/judging/jobs/999/").status_code == 403


def test_missing_job_is_404(researcher_client):
    assert researcher_client.get("/judging/jobs/999/").status_code == 404


def test_judge_form_keeps_the_key_write_only(researcher_client, researcher):
    response = researcher_client.post(
        "/judging/judges/new/",
        {
            "name": "gpt",
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "gpt-4o",
            "api_key": SECRET,
            "generation": '{"temperature": 0}',
            "max_concurrency": 8,
            "requests_per_minute": 600,
            "price_in_per_1k": "0.005",
            "price_out_per_1k": "0.015",
            "request_timeout": 60,
            "transport": "openai",
        },
    )
    assert response.status_code == 302
    judge = RegisteredModel.objects.get(name="gpt")
    assert judge.get_api_key() == SECRET and SECRET not in judge.api_key_encrypted
    edit = researcher_client.get(f"/judging/judges/{judge.pk}/edit/")
    assert SECRET.encode() not in edit.content and judge.api_key_encrypted.encode() not in edit.content
    assert b"A key is set" in edit.content
    # Saving without a key keeps it.
    data = {
        "name": "gpt",
        "kind": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "gpt-4o-mini",
        "generation": "{}",
        "max_concurrency": 8,
        "requests_per_minute": 600,
        "price_in_per_1k": "0",
        "price_out_per_1k": "0",
        "request_timeout": 60,
        "transport": "openai",
    }
    researcher_client.post(f"/judging/judges/{judge.pk}/edit/", data)
    judge.refresh_from_db()
    assert judge.model == "gpt-4o-mini" and judge.get_api_key() == SECRET
    for url in (
        "/judging/judges/",
        f"/admin/judging/registeredmodel/{judge.pk}/change/",
        "/admin/judging/registeredmodel/",
    ):
        researcher.is_superuser = True
        researcher.save()
        page = researcher_client.get(url)
        assert page.status_code == 200, url
        assert SECRET.encode() not in page.content and judge.api_key_encrypted.encode() not in page.content


def test_judge_form_rejects_an_endpoint_without_a_model(researcher_client):
    response = researcher_client.post(
        "/judging/judges/new/",
        {
            "name": "half",
            "kind": "openai",
            "base_url": "http://x/v1",
            "generation": "{}",
            "max_concurrency": 8,
            "requests_per_minute": 600,
            "price_in_per_1k": "0",
            "price_out_per_1k": "0",
            "request_timeout": 60,
            "transport": "openai",
        },
    )
    assert response.status_code == 422 and not RegisteredModel.objects.filter(name="half").exists()
