"""The estimate before launch on every surface: the job forms' "Preview estimate" step, the
API's estimate endpoints and the CLI's --dry-run give the service's numbers and create nothing."""

from __future__ import annotations

from decimal import ROUND_UP, Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging.api_estimates import EstimateSerializer
from judging.estimates import estimate_generation_job, estimate_judge_job, summary_lines
from judging.models import Generation, GenerationJob, JudgeJob, Judgment, RegisteredModel

JUDGE_FORM = {
    "study": None,  # set per test (the study's pk)
    "judge": None,
    "conditions": ["order", "bandwagon"],
    "pair_set": "all",
    "mode": "sync",
    "parser": "robust",
    "seed": "3",
    "budget_usd": "",
}


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def judge(make_sim_judge):
    return make_sim_judge(name="sim-judge", knobs="seed=1", generation={"max_tokens": 40})


@pytest.fixture
def writer(make_sim_judge):
    return make_sim_judge(name="sim-writer", knobs="seed=1")


def judge_form(study, judge, **changes) -> dict:
    return {**JUDGE_FORM, "study": study.pk, "judge": judge.pk, **changes}


def nothing_created() -> bool:
    return not (JudgeJob.objects.exists() or Judgment.objects.exists() or GenerationJob.objects.exists())


# --- one estimate, three surfaces ---------------------------------------------------------------


def test_the_form_the_api_and_the_cli_give_the_same_numbers(researcher_client, api, study, judge):
    expected = estimate_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"], seed=3)
    page = researcher_client.post("/judging/jobs/", {**judge_form(study, judge), "preview": "1"})
    assert page.status_code == 200 and page.context["estimate"] == expected
    body = api.post(
        "/api/judge-jobs/estimate/",
        {"study": study.slug, "judge": judge.name, "conditions": ["order", "bandwagon"], "seed": 3},
        format="json",
    )
    assert body.status_code == 200 and body.json() == EstimateSerializer(expected).data
    out = StringIO()
    call_command(
        "run_judges",
        "--study",
        study.slug,
        "--judge",
        judge.name,
        "--conditions",
        "order,bandwagon",
        "--seed",
        "3",
        "--dry-run",
        stdout=out,
    )
    assert out.getvalue().splitlines()[1:] == summary_lines(expected)
    assert (expected.rows, expected.calls, expected.tokens_out_per_call) == (72, 72, 40)
    assert nothing_created()


def test_generation_form_api_and_cli_agree(researcher_client, api, study, writer):
    expected = estimate_generation_job(study=study, generator=writer, params={"max_tokens": 300}, seed=1)
    form = {"study": study.pk, "model": writer.pk, "max_tokens": "300", "pair_policy": "all", "seed": "1"}
    page = researcher_client.post("/judging/generations/", {**form, "mode": "sync", "preview": "1"})
    assert page.status_code == 200 and page.context["estimate"] == expected
    body = api.post(
        "/api/generation-jobs/estimate/",
        {"study": study.slug, "model": writer.name, "max_tokens": 300, "seed": 1},
        format="json",
    )
    assert body.status_code == 200 and body.json() == EstimateSerializer(expected).data
    out = StringIO()
    call_command(
        "generate_answers",
        "--study",
        study.slug,
        "--model",
        writer.name,
        "--max-tokens",
        "300",
        "--dry-run",
        stdout=out,
    )
    assert out.getvalue().splitlines()[1:] == summary_lines(expected)
    assert (expected.calls, expected.tokens_out_per_call) == (3, 300)
    assert nothing_created() and not Generation.objects.exists()


# --- the form -------------------------------------------------------------------------------------


def test_preview_shows_the_estimate_and_fills_in_the_proposed_budget(researcher_client, study, judge):
    page = researcher_client.post("/judging/jobs/", {**judge_form(study, judge), "preview": "1"})
    estimate = page.context["estimate"]
    html = page.content.decode()
    assert f'id="estimate-calls">{estimate.calls}<' in html and "Preview estimate" in html
    assert page.context["form"]["budget_usd"].value() == str(estimate.proposed_budget_usd)
    assert estimate.proposed_budget_usd == (estimate.cost_usd * Decimal("1.2")).quantize(
        Decimal("0.0001"), rounding=ROUND_UP
    )
    assert f'name="proposed_budget" value="{estimate.proposed_budget_usd}"' in html
    assert nothing_created()


def test_a_typed_budget_is_kept_and_last_times_proposal_is_replaced(researcher_client, study, judge):
    form = {**judge_form(study, judge), "preview": "1"}
    typed = researcher_client.post("/judging/jobs/", {**form, "budget_usd": "0.0001"})
    assert typed.context["form"]["budget_usd"].value() == "0.0001"
    assert 'id="estimate-budget-short"' in typed.content.decode()  # below the estimated cost: said so
    # A budget still equal to the proposal shown last time follows the new estimate.
    wider = {**form, "conditions": ["order", "bandwagon", "attentional"], "budget_usd": "9.9", "proposed_budget": "9.9"}
    page = researcher_client.post("/judging/jobs/", wider)
    assert page.context["form"]["budget_usd"].value() == str(page.context["estimate"].proposed_budget_usd)


def test_an_htmx_preview_answers_the_form_fragment(researcher_client, study, judge):
    page = researcher_client.post(
        "/judging/jobs/", {**judge_form(study, judge), "preview": "1"}, headers={"HX-Request": "true"}
    )
    html = page.content.decode()
    assert page.status_code == 200 and html.lstrip().startswith('<form id="launch-form"')
    assert 'hx-trigger="change from:#launch-form delay:400ms"' in html  # follows later changes
    assert nothing_created()


def test_start_still_starts_and_a_refused_preview_says_why(researcher_client, study, judge):
    refused = researcher_client.post("/judging/jobs/", {**judge_form(study, judge, pair_set="human"), "preview": "1"})
    assert refused.status_code == 422 and "no pairs" in refused.content.decode() and nothing_created()
    started = researcher_client.post("/judging/jobs/", judge_form(study, judge, budget_usd="1"))
    assert started.status_code == 302 and JudgeJob.objects.get().budget_usd == Decimal("1")


def test_the_generation_form_previews_without_starting(researcher_client, study, writer):
    form = {"study": study.pk, "model": writer.pk, "max_tokens": "200", "pair_policy": "all", "seed": "0"}
    page = researcher_client.post("/judging/generations/", {**form, "mode": "batch", "preview": "1"})
    estimate = page.context["estimate"]
    assert estimate.batch_price and "the Batch API price" in page.content.decode()
    assert page.context["form"]["budget_usd"].value() == str(estimate.proposed_budget_usd)
    assert not GenerationJob.objects.exists()


def test_the_forms_need_a_researcher(client, study, judge):
    response = client.post("/judging/jobs/", {**judge_form(study, judge), "preview": "1"})
    assert response.status_code == 302 and "/login" in response["Location"]


# --- the API ---------------------------------------------------------------------------------------


def test_the_api_estimate_refuses_as_a_start_does_and_creates_nothing(api, study, judge, writer):
    body = {"study": study.slug, "judge": judge.name, "conditions": ["order"]}
    assert api.post("/api/judge-jobs/estimate/", {**body, "study": "nope"}, format="json").status_code == 404
    refused = api.post("/api/judge-jobs/estimate/", {**body, "pair_set": "human"}, format="json")
    assert refused.status_code == 422 and "no pairs" in refused.json()["detail"]
    typo = api.post("/api/judge-jobs/estimate/", {**body, "dry_run": True}, format="json")
    assert typo.status_code == 400  # a closed input, as the start's
    gen = api.post(
        "/api/generation-jobs/estimate/", {"study": study.slug, "model": judge.name, "mode": "batch"}, format="json"
    )
    assert gen.status_code == 200 and gen.json()["batch_price"] is True
    assert nothing_created()


def test_the_api_estimate_needs_a_researcher_token(study, judge):
    anonymous = APIClient().post(
        "/api/judge-jobs/estimate/",
        {"study": study.slug, "judge": judge.name, "conditions": ["order"]},
        format="json",
    )
    assert anonymous.status_code in (401, 403)


# --- the CLI ---------------------------------------------------------------------------------------


def test_dry_run_creates_nothing_not_even_an_on_demand_baseline(study):
    out = StringIO()
    call_command("run_judges", "--study", study.slug, "--judge", "longer", "--dry-run", stdout=out)
    text = out.getvalue()
    assert text.startswith("dry run: nothing created") and "calls to send: 0 for 36 judgments" in text
    assert not RegisteredModel.objects.filter(name="longer").exists() and nothing_created()


def test_dry_run_fails_as_the_start_would(study, judge, writer):
    with pytest.raises(CommandError, match="no pairs"):
        call_command("run_judges", "--study", study.slug, "--judge", judge.name, "--pair-set", "human", "--dry-run")
    with pytest.raises(CommandError, match="--pairs must be"):
        call_command("generate_answers", "--study", study.slug, "--model", writer.name, "--pairs", "x", "--dry-run")
    assert nothing_created()


def test_dry_run_prices_batch_mode_at_the_batch_price(study, judge):
    out = StringIO()
    call_command("run_judges", "--study", study.slug, "--judge", judge.name, "--batch", "--dry-run", stdout=out)
    expected = estimate_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    assert out.getvalue().splitlines()[1:] == summary_lines(expected)
    assert "at the Batch API price" in out.getvalue()
