"""Generation jobs in the browser and over the REST API: access, start, watch, act."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging.generate.finish import finish_generation_job
from judging.generate.services import start_generation_job
from judging.models import Generation, GenerationJob, RegisteredModel
from tests.judging.conftest import build_study
from tests.judging.test_generation import _answer_all, _model


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def setup(study, researcher, other_researcher):
    """alice's study + bob's private study; a public generator, a judge-only model, bob's private model."""
    bobs = build_study("bobs")
    bobs.created_by = other_researcher
    bobs.save()
    study.created_by = researcher
    study.save()
    return {
        "study": study,
        "bobs": bobs,
        "gen": _model("gen"),
        "judge_only": _model("judge-only", use_as_generator=False),
        "private": _model("bob-private", owner=other_researcher),
        "baseline": RegisteredModel.objects.create(
            name="longer", kind=RegisteredModel.Kind.BASELINE, baseline="longer"
        ),
    }


def test_the_form_offers_only_manageable_studies_and_usable_generators(researcher_client, setup):
    page = researcher_client.get("/judging/generations/")
    assert page.status_code == 200
    form = page.context["form"]
    assert [s.slug for s in form.fields["study"].queryset] == ["tiny"]
    assert [m.name for m in form.fields["model"].queryset] == ["gen"]
    assert "Generate answers</a>" in researcher_client.get("/judging/jobs/").content.decode()


def test_starting_from_the_form_shows_a_success_message_and_the_job(researcher_client, setup):
    response = researcher_client.post(
        "/judging/generations/",
        {
            "study": setup["study"].pk,
            "model": setup["gen"].pk,
            "candidate_key": "",
            "max_tokens": 64,
            "pair_policy": "sample",
            "pair_sample_size": 4,
            "seed": 3,
            "mode": "sync",
        },
        follow=True,
    )
    job = GenerationJob.objects.get()
    assert response.redirect_chain[-1][0] == f"/judging/generations/{job.pk}/"
    body = response.content.decode()
    assert f"Generation job #{job.pk} started: 3 answers from gen on tiny, as candidate gen." in body
    assert (job.params, job.pair_policy, job.pair_sample_size, job.seed, job.created_by.username) == (
        {"max_tokens": 64},
        "sample",
        4,
        3,
        "alice",
    )
    assert 'hx-trigger="every 2s"' in body  # live progress while it runs


def test_bad_input_in_the_form_is_one_error_and_writes_nothing(researcher_client, setup):
    response = researcher_client.post(
        "/judging/generations/",
        {
            "study": setup["study"].pk,
            "model": setup["gen"].pk,
            "candidate_key": "alpha",
            "pair_policy": "all",
            "seed": 0,
            "mode": "sync",
        },
    )
    assert response.status_code == 422
    assert "already has a candidate" in response.content.decode()
    response = researcher_client.post(
        "/judging/generations/",
        {"study": setup["bobs"].pk, "model": setup["private"].pk, "pair_policy": "all", "seed": 0, "mode": "sync"},
    )
    assert response.status_code == 422  # not choices this user has
    assert not GenerationJob.objects.exists()


def test_the_job_page_shows_the_candidate_counts_and_failures(researcher_client, setup):
    job = start_generation_job(study=setup["study"], generator=setup["gen"], created_by=setup["study"].created_by)
    _answer_all(job, fail=(1,))
    Generation.objects.filter(job=job, status="done").update(raw_text="<script>alert(1)</script>")
    poll = researcher_client.get(f"/judging/generations/{job.pk}/", HTTP_HX_REQUEST="true")
    assert poll.status_code == 200 and "Writing the candidate" in poll.content.decode()  # keeps polling
    finish_generation_job(job)
    poll = researcher_client.get(f"/judging/generations/{job.pk}/", HTTP_HX_REQUEST="true")
    assert poll.status_code == 286  # htmx stops polling: finished and written
    page = researcher_client.get(f"/judging/generations/{job.pk}/").content.decode()
    assert 'id="fig-candidate">gen<' in page and 'id="fig-responses">2<' in page and 'id="fig-pairs">8<' in page
    assert "1 answer failed and made no response" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page  # answers are escaped


def test_the_polled_fragment_carries_each_answer_s_state_until_the_job_is_finished(researcher_client, setup):
    """The answers table is inside the polled section: its rows refresh without a reload."""
    job = start_generation_job(study=setup["study"], generator=setup["gen"], created_by=setup["study"].created_by)
    url = f"/judging/generations/{job.pk}/"
    page = researcher_client.get(url).content.decode()
    section = page[page.index('<section id="generation-progress"') : page.index("</section>")]
    assert 'hx-trigger="every 2s"' in section and 'id="generation-rows"' in section  # the rows poll with it
    poll = researcher_client.get(url, HTTP_HX_REQUEST="true")
    body = poll.content.decode()
    assert poll.status_code == 200 and body.count('data-status="pending"') == 3  # the job's own is "running"
    first = job.generations.order_by("instruction__index").first()
    first.status, first.raw_text = Generation.Status.DONE, "the first answer"
    first.save()
    body = researcher_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert f'<tr id="generation-row-{first.pk}" data-status="done">' in body and "the first answer" in body
    assert body.count('data-status="pending"') == 2 and 'hx-trigger="every 2s"' in body
    _answer_all(job)
    finish_generation_job(job)
    poll = researcher_client.get(url, HTTP_HX_REQUEST="true")
    body = poll.content.decode()
    assert poll.status_code == 286 and 'data-status="pending"' not in body  # final state, polling stops
    assert body.count('data-status="done"') == 3 and "hx-trigger" not in body


def test_other_researchers_see_no_job_and_pause_cancel_work(researcher_client, setup, other_researcher):
    job = start_generation_job(study=setup["study"], generator=setup["gen"], created_by=setup["study"].created_by)
    client = Client()
    client.force_login(other_researcher)
    assert client.get(f"/judging/generations/{job.pk}/").status_code == 404
    assert client.post(f"/judging/generations/{job.pk}/pause/").status_code == 404
    assert f"#{job.pk}" not in client.get("/judging/generations/").content.decode()
    page = researcher_client.post(f"/judging/generations/{job.pk}/pause/", follow=True)
    job.refresh_from_db()
    assert job.status == "paused" and f"Paused generation job #{job.pk}." in page.content.decode()
    researcher_client.post(f"/judging/generations/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert researcher_client.post(f"/judging/generations/{job.pk}/explode/").status_code == 404


# --- REST API --------------------------------------------------------------------------------


def test_the_api_starts_lists_and_details_a_generation_job(api, setup):
    response = api.post(
        "/api/generation-jobs/",
        {"study": "tiny", "model": "gen", "max_tokens": 32, "pair_policy": "none"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["model"], body["candidate_key"], body["total"], body["params"], body["status"]) == (
        "gen",
        "gen",
        3,
        {"max_tokens": 32},
        "running",
    )
    job = GenerationJob.objects.get(pk=body["id"])
    _answer_all(job)
    finish_generation_job(job)
    detail = api.get(f"/api/generation-jobs/{job.pk}/").json()
    assert (detail["candidate"], detail["responses_created"], detail["pairs_created"]) == ("gen", 3, 0)
    assert [j["id"] for j in api.get("/api/generation-jobs/").json()["results"]] == [job.pk]
    rows = api.get(f"/api/generation-jobs/{job.pk}/generations/").json()
    assert rows["count"] == 3 and rows["results"][0]["messages"][-1]["role"] == "user"


def test_api_bad_input_and_access_rules(api, setup, other_researcher):
    def post(**data):
        return api.post("/api/generation-jobs/", {"study": "tiny", "model": "gen", **data}, format="json")

    assert post(candidate_key="bravo").json()["detail"].startswith("study 'tiny' already has a candidate")
    assert post(model="longer").status_code == 422  # a baseline cannot write answers
    assert post(pair_policy="sample").json()["detail"] == "a pair sample needs a sample size of at least 1"
    assert post(max_tokens=0).status_code == 400
    assert post(study="bobs").status_code == 404 and post(model="bob-private").status_code == 404
    assert not GenerationJob.objects.exists()
    theirs = start_generation_job(study=setup["bobs"], generator=setup["gen"], created_by=other_researcher)
    assert api.get(f"/api/generation-jobs/{theirs.pk}/").status_code == 404
    assert api.post(f"/api/generation-jobs/{theirs.pk}/pause/").status_code == 404
    assert api.get("/api/generation-jobs/").json()["results"] == []
    anonymous = APIClient()
    assert anonymous.get("/api/generation-jobs/").status_code in (401, 403)


def test_api_pause_and_cancel(api, setup):
    job = start_generation_job(study=setup["study"], generator=setup["gen"], created_by=setup["study"].created_by)
    assert api.post(f"/api/generation-jobs/{job.pk}/pause/").json()["status"] == "paused"
    assert api.post(f"/api/generation-jobs/{job.pk}/pause/").json()["status"] == "paused"
    assert api.post(f"/api/generation-jobs/{job.pk}/cancel/").json()["status"] == "cancelled"
