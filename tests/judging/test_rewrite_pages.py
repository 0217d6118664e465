"""The researcher pages of rewrite jobs (sentiment, issue 24): a study's rewrites page (listing,
unusable answers, CSV, start form with its estimate) and the generation job pages read for a
rewrite job."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.models import Response, ResponseRewrite
from judging import views_rewrites
from judging.generate.finish import finish_generation_job
from judging.generate.rewrite_listing import CSV_FIELDS
from judging.generate.rewrites import start_rewrite_job
from judging.models import Generation, GenerationJob
from tests.judging.conftest import build_study
from tests.judging.test_generation import _model

HOSTILE_ORIGINAL = "<script>alert('original')</script> & more"
HOSTILE_REWRITE = "<img src=x onerror=alert(1)> Great news!"


@pytest.fixture
def setup(study, researcher, other_researcher):
    """alice's study "tiny" (12 answers in pairs), bob's study, a generator alice may use, bob's private one."""
    bobs = build_study("bobs")
    bobs.created_by = other_researcher
    bobs.save()
    study.created_by = researcher
    study.save()
    return {
        "study": study,
        "bobs": bobs,
        "gen": _model("gen", price_in_per_1k=Decimal("0.01"), price_out_per_1k=Decimal("0.03")),
        "private": _model("bob-private", owner=other_researcher),
    }


def _response(study, index: int = 0, key: str = "alpha") -> Response:
    return Response.objects.get(instruction__study=study, instruction__index=index, candidate__key=key)


def _rewrite(response: Response, text: str, *, job: int | None = None) -> ResponseRewrite:
    provenance = {"model": "gen", "prompt_version": "sentiment-v1", "job": job}
    return ResponseRewrite.objects.create(response=response, kind="sentiment", text=text, provenance=provenance)


def _answer_rewrites(job: GenerationJob, *, unchanged: int = 0) -> None:
    """Stand in for the runner: a cheerful rewrite of every answer, but the first ``unchanged``
    rows answered with the original as it was (unusable); then the job completes."""
    for n, row in enumerate(job.generations.select_related("source").order_by("pk")):
        text = row.source.text if n < unchanged else f"Great news! {row.source.text}"
        row.status, row.raw_text, row.completed_at = (
            Generation.Status.DONE,
            f"<rewrite>{text}</rewrite>",
            timezone.now(),
        )
        row.tokens_out = 30
        row.save()
    job.transition(
        GenerationJob.ACTIVE, GenerationJob.Status.COMPLETED, finished_at=timezone.now(), done=job.total, failed=0
    )


def _form(setup, **fields) -> dict:
    return {"model": setup["gen"].pk, "kind": "sentiment", "prompt_version": "", "max_tokens": 256, "mode": "sync"} | (
        fields
    )


# --- the rewrites page ---------------------------------------------------------------------------


def test_the_page_shows_each_rewrite_beside_its_original_escaped(researcher_client, setup):
    study = setup["study"]
    first = _response(study)
    first.text = HOSTILE_ORIGINAL
    first.save()
    _rewrite(first, HOSTILE_REWRITE, job=None)
    _rewrite(_response(study, 1, "bravo"), "A cheerful second one.")
    page = researcher_client.get(f"/judging/rewrites/{study.slug}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body  # answer texts are untrusted
    assert "&lt;script&gt;alert(&#x27;original&#x27;)&lt;/script&gt; &amp; more" in body
    assert "&lt;img src=x onerror=alert(1)&gt; Great news!" in body
    assert "2 rewrites" in body and "sentiment-v1" in body and "gen" in body
    # Instruction order, then candidate order; each rewrite beside the answer it rewrites.
    assert body.index(HOSTILE_REWRITE.replace("<", "&lt;").replace(">", "&gt;")) < body.index("A cheerful second one.")
    article = body[body.index(f'id="rewrite-{first.rewrites.get().pk}"') :]
    assert (
        article.index("Original")
        < article.index("&lt;script&gt;")
        < article.index("Rewrite")
        < article.index("&lt;img")
    )


def test_the_page_pages_through_many_rewrites(researcher_client, setup, monkeypatch):
    study = setup["study"]
    for response in Response.objects.filter(instruction__study=study):
        _rewrite(response, f"cheerful {response.pk}")
    page = researcher_client.get(f"/judging/rewrites/{study.slug}/")
    assert len(page.context["page"]) == 12 and page.context["page"].paginator.num_pages == 1
    monkeypatch.setattr(views_rewrites, "PER_PAGE", 5)
    last = researcher_client.get(f"/judging/rewrites/{study.slug}/?page=3").content.decode()
    assert "12 rewrites, page 3 of 3" in last and last.count('class="rewrite"') == 2


def test_a_finished_job_s_rewrites_and_unusable_answers_are_on_the_page(researcher_client, setup):
    study = setup["study"]
    job = start_rewrite_job(study=study, generator=setup["gen"], created_by=setup["study"].created_by)
    _answer_rewrites(job, unchanged=2)
    finish_generation_job(job)
    body = researcher_client.get(f"/judging/rewrites/{study.slug}/").content.decode()
    assert "10 rewrites" in body and "2 unusable answers" in body
    assert body.count("the rewrite is the original unchanged") == 2
    assert f'<a href="/judging/generations/{job.pk}/">job #{job.pk}</a>' in body  # the job that made it
    # An answer a later job rewrote stays listed (its problem is still a finding), marked so.
    later = job.generations.exclude(error="").first()
    _rewrite(later.source, "Great news, at last!")
    body = researcher_client.get(f"/judging/rewrites/{study.slug}/").content.decode()
    assert "11 rewrites" in body and body.count("(rewritten since)") == 1


def test_another_researchers_study_is_not_found(setup, other_researcher):
    client = Client()
    client.force_login(other_researcher)
    slug = setup["study"].slug
    assert client.get(f"/judging/rewrites/{slug}/").status_code == 404
    assert client.get(f"/judging/rewrites/{slug}/rewrites.csv").status_code == 404
    assert client.post(f"/judging/rewrites/{slug}/", _form(setup)).status_code == 404
    assert client.get("/judging/rewrites/no-such-study/").status_code == 404
    assert not GenerationJob.objects.exists()


def test_anonymous_and_non_staff_users_are_refused(setup, django_user_model):
    slug = setup["study"].slug
    for url in (f"/judging/rewrites/{slug}/", f"/judging/rewrites/{slug}/rewrites.csv"):
        anonymous = Client().get(url)
        assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
        worker = Client()  # a logged-in account that is no researcher (not staff)
        worker.force_login(django_user_model.objects.create_user(f"carol{len(url)}", password="pw-carol-123"))
        assert worker.get(url).status_code == 403
    assert Client().post(f"/judging/rewrites/{slug}/", _form(setup)).status_code == 302
    assert not GenerationJob.objects.exists()


# --- the CSV -------------------------------------------------------------------------------------


def test_the_csv_has_tidy_columns_and_neutralises_formulas(researcher_client, setup):
    study = setup["study"]
    rewrite = _rewrite(_response(study, 2, "delta"), "=cmd|' /C calc'!A0", job=7)
    response = researcher_client.get(f"/judging/rewrites/{study.slug}/rewrites.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="tiny-rewrites.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert (
        tuple(rows[0])
        == CSV_FIELDS
        == (
            "instruction_index",
            "candidate_key",
            "response_id",
            "kind",
            "prompt_version",
            "model",
            "job",
            "original",
            "rewrite",
        )
    )
    assert rows == [
        {
            "instruction_index": "2",
            "candidate_key": "delta",
            "response_id": str(rewrite.response_id),
            "kind": "sentiment",
            "prompt_version": "sentiment-v1",
            "model": "gen",
            "job": "7",
            "original": rewrite.response.text,
            "rewrite": "'=cmd|' /C calc'!A0",  # a spreadsheet shows it as text, runs nothing
        }
    ]
    page = researcher_client.get(f"/judging/rewrites/{study.slug}/").content.decode()
    assert 'href="/judging/rewrites/tiny/rewrites.csv"' in page


# --- the start form ------------------------------------------------------------------------------


def test_the_form_offers_only_usable_generators(researcher_client, setup):
    _model("judge-only", use_as_generator=False)
    form = researcher_client.get("/judging/rewrites/tiny/").context["form"]
    assert [m.name for m in form.fields["model"].queryset] == ["gen"]
    assert [k for k, _ in form.fields["kind"].choices] == ["sentiment"]
    assert "sentiment-v1" in [v for v, _ in form.fields["prompt_version"].choices]


def test_the_form_starts_a_rewrite_job_and_opens_its_page(researcher_client, setup):
    response = researcher_client.post(
        "/judging/rewrites/tiny/", _form(setup, budget_usd="0.5", mode="batch"), follow=True
    )
    job = GenerationJob.objects.get()
    assert response.redirect_chain[-1][0] == f"/judging/generations/{job.pk}/"
    body = response.content.decode()
    assert f"Rewrite job #{job.pk} started: 12 sentiment rewrites by gen of the answers in tiny" in body
    assert (job.rewrite_kind, job.prompt_version, job.params, job.mode, str(job.budget_usd)) == (
        "sentiment",
        "sentiment-v1",
        {"max_tokens": 256},
        "batch",
        "0.5000",
    )
    assert (job.total, job.candidate_key, job.created_by.username) == (12, "", "alice")
    assert job.generations.filter(source__isnull=False).count() == 12


def test_an_htmx_start_redirects_the_browser(researcher_client, setup):
    response = researcher_client.post("/judging/rewrites/tiny/", _form(setup), HTTP_HX_REQUEST="true")
    job = GenerationJob.objects.get()
    assert response["HX-Redirect"] == f"/judging/generations/{job.pk}/"


def test_the_preview_shows_an_estimate_and_writes_nothing(researcher_client, setup):
    response = researcher_client.post("/judging/rewrites/tiny/", _form(setup, preview="1"))
    assert response.status_code == 200
    estimate = response.context["estimate"]
    assert (estimate.unit, estimate.rows, estimate.calls, estimate.exact) == ("rewrites", 12, 12, True)
    assert estimate.tokens_out_per_call == 256 and estimate.cost_usd > 0
    body = response.content.decode()
    assert 'id="job-estimate"' in body and f'id="estimate-calls">{estimate.calls}<' in body
    assert response.context["form"]["budget_usd"].value() == str(estimate.proposed_budget_usd)
    assert not GenerationJob.objects.exists() and not Generation.objects.exists()
    partial = researcher_client.post("/judging/rewrites/tiny/", _form(setup, preview="1"), HTTP_HX_REQUEST="true")
    fragment = partial.content.decode()
    assert fragment.lstrip().startswith('<form id="rewrite-form"') and 'id="job-estimate"' in fragment


def test_bad_input_is_a_form_error_and_changes_nothing(researcher_client, setup):
    def post(**fields):
        return researcher_client.post("/judging/rewrites/tiny/", _form(setup, **fields))

    assert post(model=setup["private"].pk).status_code == 422  # not a model alice may use
    assert post(max_tokens=0).status_code == 422
    assert post(kind="sarcasm").status_code == 422
    assert post(mode="later").status_code == 422
    assert not GenerationJob.objects.exists()
    running = start_rewrite_job(study=setup["study"], generator=setup["gen"], created_by=setup["study"].created_by)
    refused = post()
    assert refused.status_code == 422 and "already under way" in refused.content.decode()
    assert list(GenerationJob.objects.all()) == [running] and Generation.objects.count() == 12
    running.cancel()
    for response in Response.objects.filter(instruction__study=setup["study"]):
        _rewrite(response, "done")
    refused = post(preview="1")  # the preview refuses as a start would
    assert refused.status_code == 422 and "already has a sentiment rewrite" in refused.content.decode()
    assert GenerationJob.objects.count() == 1


# --- the generation job pages read for a rewrite job -----------------------------------------------


def test_the_job_page_of_a_rewrite_job_polls_until_the_rewrites_are_read(researcher_client, setup):
    study = setup["study"]
    job = start_rewrite_job(study=study, generator=setup["gen"], created_by=study.created_by)
    url = f"/judging/generations/{job.pk}/"
    page = researcher_client.get(url).content.decode()
    assert f"Rewrite job #{job.pk}: gen on tiny" in page and "Sentiment rewrites of the answers" in page
    assert 'href="/judging/rewrites/tiny/"' in page and "Candidate" not in page
    _answer_rewrites(job, unchanged=1)
    poll = researcher_client.get(url, HTTP_HX_REQUEST="true")
    assert poll.status_code == 200 and "Reading the rewrites" in poll.content.decode()  # keeps polling
    finish_generation_job(job)
    poll = researcher_client.get(url, HTTP_HX_REQUEST="true")
    body = poll.content.decode()
    assert poll.status_code == 286 and "hx-trigger" not in body  # read: polling stops
    assert 'id="fig-rewrites">11<' in body and 'id="fig-unusable">1<' in body
    assert "11 answers of tiny now have a sentiment rewrite; 1 answer held no usable rewrite." in body
    unusable = job.generations.exclude(error="").get()
    row = body[body.index(f'id="generation-row-{unusable.pk}"') :]
    row = row[: row.index("</tr>")]
    assert f"(response {unusable.source_id})" in row and "the rewrite is the original unchanged" in row
    made = job.generations.filter(rewrite__isnull=False).select_related("rewrite").first()
    row = body[body.index(f'id="generation-row-{made.pk}"') :]
    assert made.rewrite.text in row[: row.index("</tr>")]  # the rewrite as read, without its tags


def test_the_jobs_list_names_rewrite_jobs_by_kind(researcher_client, setup):
    job = start_rewrite_job(study=setup["study"], generator=setup["gen"], created_by=setup["study"].created_by)
    _answer_rewrites(job, unchanged=3)
    finish_generation_job(job)
    body = researcher_client.get("/judging/generations/").content.decode()
    assert '<a href="/judging/rewrites/tiny/">sentiment rewrites</a>' in body
    assert "9 rewrites, 3 unusable" in body


def test_the_api_shows_a_rewrite_job_s_kind_and_counts(researcher, setup):
    job = start_rewrite_job(study=setup["study"], generator=setup["gen"], created_by=researcher)
    _answer_rewrites(job, unchanged=2)
    finish_generation_job(job)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    detail = api.get(f"/api/generation-jobs/{job.pk}/").json()
    assert (detail["rewrite_kind"], detail["rewrites_created"], detail["rewrites_rejected"]) == ("sentiment", 10, 2)
    rows = api.get(f"/api/generation-jobs/{job.pk}/generations/").json()["results"]
    assert all(r["source"] for r in rows) and sum(bool(r["rewrite"]) for r in rows) == 10
