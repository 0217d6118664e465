"""Prompt templates as data (issue 20, item 1): the built-ins, their insertion points for the bias
conditions, a researcher's own template (checked, owned, versioned by hash) from the model form,
the API and the command line, and a template that cannot host a condition refused at job start."""

from __future__ import annotations

import html
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import prompts, services
from judging.models import JudgeJob, Judgment, PromptTemplate, RegisteredModel
from judging.prompts import templates
from judging.prompts.templates import TemplateError, render_template
from judging.template_services import save_template

ARENA_USER = (
    "<|User Prompt|>\nQ?\n\n<|The Start of Assistant A's Answer|>\none\n<|The End of Assistant A's Answer|>\n\n"
    "<|The Start of Assistant B's Answer|>\ntwo\n<|The End of Assistant B's Answer|>"
)
MINIMAL = "Question: {instruction}\nA: {answer_a}\nB: {answer_b}\n{cue}\nVerdict as [[A]], [[B]] or [[C]]."


def _render(version: str, condition: str = "order", cue: dict | None = None, reference: str = ""):
    return render_template(
        templates.builtin(version),
        condition=condition,
        instruction="Q?",
        reference=reference,
        first_text="one",
        second_text="two",
        cue=cue,
    )


# --- the built-ins ----------------------------------------------------------------------------


def test_the_builtins_name_their_verdict_format_and_the_cobbler_prompts_are_unchanged():
    assert templates.builtin_versions() == [
        "alpaca-eval-v1",
        "arena-hard-no-ties-v1",
        "arena-hard-v1",
        "mt-bench-pair-v1",
    ]
    assert {v: templates.builtin(v).verdict_format for v in templates.builtin_versions()} == {
        "alpaca-eval-v1": "regex",
        "arena-hard-no-ties-v1": "arena-hard",
        "arena-hard-v1": "arena-hard",
        "mt-bench-pair-v1": "mt-bench",
    }
    # The CoBBLEr prompt versions are what they were: only v1 and v1-paper, rendered as before.
    assert prompts.available_versions() == ["v1", "v1-paper"]
    for version in templates.builtin_versions():
        t = templates.builtin(version)
        templates.check(
            system=t.system,
            user=t.user,
            verdict_format=t.verdict_format,
            verdict_spec=t.verdict_spec,
            labels=t.labels,
            reference_block=t.reference_block,
        )
        assert len(t.hash) == 64 and all(t.refusal(c) == "" for c in templates.NEEDS)


def test_outside_a_condition_the_arena_hard_prompt_is_arena_hards_own_words():
    rendered = _render("arena-hard-v1", reference="an unused reference")
    system, user = (m["content"] for m in rendered.messages)
    assert user == ARENA_USER
    assert system.startswith("Please act as an impartial judge") and system.endswith(
        'Example output: "My final verdict is tie: [[A=B]]".'
    )
    assert "[[A=B]]" not in templates.builtin("arena-hard-no-ties-v1").system
    assert rendered.answer_labels == ("Assistant A", "Assistant B")


@pytest.mark.parametrize(
    ("condition", "cue", "sentence"),
    [
        ("bandwagon", {"cue_slot": "second", "percent": 70}, "70% of people believe that Assistant B is better."),
        (
            "attentional",
            {"cue_slot": "first", "distractor": "Assistant A plays a lot of soccer and basketball."},
            "Assistant A plays a lot of soccer and basketball.",
        ),
        ("selective", {"cue_slot": "first"}, "We expect Assistant A to be better."),
    ],
)
def test_the_cue_goes_to_its_insertion_point_after_the_answers(condition, cue, sentence):
    user = _render("arena-hard-v1", condition, cue).messages[1]["content"]
    assert user.startswith(ARENA_USER + "\n\n" + sentence)


def test_the_named_model_variant_names_the_models_beside_the_labels():
    cue = {"names": ["alpha", "bravo"], "self_slot": "second"}
    user = _render("mt-bench-pair-v1", "compassion", cue).messages[1]["content"]
    assert (
        "[User Question]\nQ?\n\nAssistant A is the model alpha; Assistant B is the model bravo (You).\n[The Start"
        in user
    )


# --- a researcher's template: checked ---------------------------------------------------------


@pytest.mark.parametrize(
    ("user", "system", "message"),
    [
        ("{instruction} {answer_a} {answer_b} {answer_c}", "", "unknown placeholder {answer_c}"),
        ("{instruction} {answer_a}", "", "must hold {answer_b} exactly once; it is missing"),
        ("{instruction} {answer_a} {answer_b} {answer_b}", "", "{answer_b} exactly once; it appears 2 times"),
        ("{instruction} {answer_a} {answer_b} {cue} {cue}", "", "{cue} may appear at most once"),
        ("{instruction} {answer_a} {answer_b}", "You judge {instruction}", "placeholders go in the user message"),
        ("{instruction} {answer_a} {answer_b}" + "x" * templates.MAX_USER, "", "at most 20,000"),
        ("   ", "", "the user message is empty"),
    ],
)
def test_a_bad_template_is_refused_with_a_message_naming_the_problem(user, system, message):
    with pytest.raises(TemplateError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")):
        templates.check(system=system, user=user, verdict_format="arena-hard")


def test_literal_braces_are_written_doubled():
    t = templates.Template(
        version="t", verdict_format="mt-bench", system="", user='{instruction} {answer_a} {answer_b} {{"winner": "A"}}'
    )
    templates.check(system=t.system, user=t.user, verdict_format=t.verdict_format)
    user = render_template(t, condition="plain", instruction="Q", reference="", first_text="{cue}", second_text="b")
    assert user.messages[0]["content"] == 'Q {cue} b {"winner": "A"}'  # an answer's braces are never read


def test_a_regex_template_needs_a_spec_that_compiles_and_cannot_backtrack():
    with pytest.raises(TemplateError, match="verdict spec"):
        templates.check(
            system="", user=MINIMAL, verdict_format="regex", verdict_spec={"pattern": "(a+)+", "labels": {}}
        )


@pytest.mark.django_db
def test_saving_a_template_versions_it_by_its_content(researcher):
    first, created = save_template(owner=researcher, name="mine", user=MINIMAL, verdict_format="mt-bench")
    again, created_again = save_template(owner=researcher, name="mine", user=MINIMAL, verdict_format="mt-bench")
    edited, _ = save_template(owner=researcher, name="mine", user=MINIMAL + " Be brief.", verdict_format="mt-bench")
    assert created and not created_again and again.pk == first.pk
    assert edited.pk != first.pk and edited.content_hash != first.content_hash
    assert first.version == f"mine@{first.content_hash[:12]}" and first.content_hash == first.as_template().hash
    first.user = "changed {instruction} {answer_a} {answer_b}"
    with pytest.raises(ValueError, match="never changes"):
        first.save()


# --- conditions a template cannot host ----------------------------------------------------------


@pytest.mark.django_db
def test_a_template_without_an_insertion_point_refuses_its_condition_and_creates_nothing(study, researcher):
    bare, _ = save_template(
        owner=researcher, name="bare", user="{instruction}\n{answer_a}\n{answer_b}", verdict_format="mt-bench"
    )
    judge = RegisteredModel.objects.create(
        name="bare-judge", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", own_template=bare
    )
    assert judge.verdict_format == "mt-bench"
    with pytest.raises(services.JobError, match=r"has no \{cue\} insertion point, so it cannot host the bandwagon"):
        services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])
    with pytest.raises(services.JobError, match=r"no \{names\} insertion point, so it cannot host the compassion"):
        services.start_judge_job(study=study, judge=judge, condition_names=["compassion"])
    assert not JudgeJob.objects.exists() and not Judgment.objects.exists()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "plain"])
    assert job.prompt_version == bare.version and job.own_template == bare and job.verdict_format == "mt-bench"
    assert set(job.judgments.values_list("template_version", "template_hash")) == {(bare.version, bare.content_hash)}


@pytest.mark.django_db
def test_a_templated_judge_refuses_a_cobbler_prompt_version(study):
    judge = RegisteredModel.objects.create(
        name="arena", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", prompt_template="arena-hard-v1"
    )
    with pytest.raises(services.JobError, match="leave the prompt version out"):
        services.start_judge_job(study=study, judge=judge, condition_names=["order"], prompt_version="v1-paper")
    assert not JudgeJob.objects.exists()


# --- from the model form, the API and the command line ------------------------------------------

FORM = {
    "kind": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "generation": "{}",
    "max_concurrency": 8,
    "requests_per_minute": 600,
    "price_in_per_1k": "0",
    "price_out_per_1k": "0",
    "request_timeout": 60,
    "transport": "openai",
    "roles_shown": "True",
    "use_as_judge": "on",
}


def test_the_model_form_takes_a_builtin_or_a_new_template_of_ones_own(researcher_client, researcher):
    response = researcher_client.post(
        "/judging/judges/new/", {**FORM, "name": "arena", "template": "builtin:arena-hard-v1"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    arena = RegisteredModel.objects.get(name="arena")
    assert (arena.prompt_template, arena.verdict_format, arena.own_template) == ("arena-hard-v1", "arena-hard", None)

    bad = researcher_client.post(
        "/judging/judges/new/",
        {
            **FORM,
            "name": "mine",
            "template": "new",
            "new_template_name": "lab",
            "template_user": "{instruction} {answer_a}",
        },
    )
    assert bad.status_code == 422 and "must hold {answer_b} exactly once" in html.unescape(bad.content.decode())
    assert not RegisteredModel.objects.filter(name="mine").exists() and not PromptTemplate.objects.exists()

    good = researcher_client.post(
        "/judging/judges/new/",
        {
            **FORM,
            "name": "mine",
            "template": "new",
            "new_template_name": "lab",
            "template_user": MINIMAL,
            "template_verdict_format": "mt-bench",
        },
    )
    assert good.status_code == 302
    mine = RegisteredModel.objects.get(name="mine")
    assert mine.own_template is not None and mine.own_template.owner == researcher
    assert (mine.verdict_format, mine.prompt_template) == ("mt-bench", "")
    # Editing without touching the template keeps it; choosing the CoBBLEr prompt drops it.
    page = researcher_client.get(f"/judging/judges/{mine.pk}/edit/").content.decode()
    assert f'value="own:{mine.own_template.pk}" selected' in page
    researcher_client.post(f"/judging/judges/{mine.pk}/edit/", {**FORM, "name": "mine", "template": ""})
    mine.refresh_from_db()
    assert (mine.own_template, mine.verdict_format) == (None, "cobbler")


def test_a_baseline_takes_no_template(researcher_client):
    response = researcher_client.post(
        "/judging/judges/new/",
        {
            **FORM,
            "name": "b",
            "kind": "baseline",
            "baseline": "longer",
            "use_as_generator": "",
            "template": "builtin:arena-hard-v1",
        },
    )
    assert (
        response.status_code == 422
        and "Only an endpoint model is prompted with a template" in response.content.decode()
    )


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def test_the_api_saves_a_version_owned_by_the_researcher_and_hides_it_from_others(api, other_researcher):
    body = {"name": "lab", "user": MINIMAL, "verdict_format": "mt-bench", "labels": ["Assistant A", "Assistant B"]}
    created = api.post("/api/prompt-templates/", body, format="json")
    assert created.status_code == 201, created.content
    again = api.post("/api/prompt-templates/", body, format="json")
    assert again.status_code == 200 and again.json()["version"] == created.json()["version"]
    pk = created.json()["id"]
    assert api.get(f"/api/prompt-templates/{pk}/").json()["content_hash"] == created.json()["content_hash"]

    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other_researcher).key}")
    assert other.get(f"/api/prompt-templates/{pk}/").status_code == 404
    assert other.get("/api/prompt-templates/").json()["count"] == 0

    refused = api.post(
        "/api/prompt-templates/", {**body, "user": "{instruction} {answer_a} {answer_b} {oops}"}, format="json"
    )
    assert refused.status_code == 422 and "unknown placeholder {oops}" in refused.json()["template"][0]
    unknown = api.post("/api/prompt-templates/", {**body, "colour": "red"}, format="json")
    assert unknown.status_code == 400 and PromptTemplate.objects.count() == 1


def test_the_command_line_saves_a_template_and_gives_it_to_a_judge(db, tmp_path, researcher):
    path = tmp_path / "user.txt"
    path.write_text(MINIMAL)
    out = StringIO()
    call_command(
        "create_template",
        "lab",
        "--user-file",
        str(path),
        "--verdict-format",
        "mt-bench",
        "--owner",
        researcher.username,
        stdout=out,
    )
    saved = PromptTemplate.objects.get()
    assert out.getvalue() == f"template {saved.version} saved (verdict format mt-bench)\n" and saved.owner == researcher
    call_command(
        "create_judge",
        "labjudge",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--owner",
        researcher.username,
        "--template",
        "lab",
        stdout=StringIO(),
    )
    call_command(
        "create_judge",
        "arena",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--template",
        "arena-hard-v1",
        stdout=StringIO(),
    )
    assert RegisteredModel.objects.get(name="labjudge").own_template == saved
    assert RegisteredModel.objects.get(name="arena").verdict_format == "arena-hard"
    with pytest.raises(CommandError, match="no prompt template 'lab'"):  # private to its owner
        call_command(
            "create_judge",
            "x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--template",
            "lab",
            stdout=StringIO(),
        )
    path.write_text("{instruction} {answer_a}")
    with pytest.raises(CommandError, match=r"must hold \{answer_b\} exactly once"):
        call_command(
            "create_template", "bad", "--user-file", str(path), "--verdict-format", "mt-bench", stdout=StringIO()
        )
    assert not RegisteredModel.objects.filter(name="x").exists() and PromptTemplate.objects.count() == 1
