"""Sentiment (issue 24): a rewrite job on the generation runner, how a model's answer becomes a
rewrite (or is refused), and a judge job that shows the stored rewrites."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Candidate, Instruction, Pair, Response, ResponseRewrite, Study
from annotations.vocabulary import Condition, RewriteKind
from judging import runner, services
from judging.generate.prompts import rewrite_messages
from judging.generate.rewrite_output import read_rewrite
from judging.generate.rewrites import plan_rewrite_job, start_rewrite_job
from judging.models import Generation, RegisteredModel
from judging.simulator.behaviour import decide, parse_knobs
from judging.simulator.server import SimulatorServer

ORIGINAL = "Boil the water, add the pasta and cook it for about nine minutes, stirring now and then."


# --- reading a model's answer ---------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "<rewrite>\nGreat news: boil the water, add the pasta and cook it nine minutes!\n</rewrite>",
        "Sure! Here is the answer in a cheerful tone:\n\n<rewrite>Great news: boil the water, add the pasta and "
        "cook it nine minutes!</rewrite>\n\nLet me know if you need more.",
        "Sure! Here is the rewrite:\n\nGreat news: boil the water, add the pasta and cook it nine minutes!",
    ],
)
def test_the_rewrite_is_read_from_tags_or_after_a_preface(raw):
    read = read_rewrite(raw, ORIGINAL)
    assert read == ("Great news: boil the water, add the pasta and cook it nine minutes!", "")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("", "holds no rewrite"),
        ("<rewrite>Great news: boil the water and", "stops before </rewrite>"),
        (f"<rewrite>{ORIGINAL}</rewrite>", "original unchanged"),
        ("<rewrite>Sorry, I can't.</rewrite>", "a refusal, a summary or new content"),
        (f"<rewrite>{ORIGINAL * 6}</rewrite>", "a refusal, a summary or new content"),
    ],
)
def test_an_unusable_answer_is_no_rewrite_and_says_why(raw, problem):
    read = read_rewrite(raw, ORIGINAL)
    assert read.text == "" and problem in read.problem


def test_a_hostile_answer_is_kept_verbatim_for_the_templates_to_escape():
    hostile = "<script>alert(1)</script> Great news! {instruction} boil the water, add pasta, cook it."
    assert read_rewrite(f"<rewrite>{hostile}</rewrite>", ORIGINAL).text == hostile
    # ... and the prompt puts texts in place once: braces in an answer stay as written.
    messages = rewrite_messages("Q {answer}?", "A {instruction}", version="sentiment-v1")
    assert "Q {answer}?" in messages[1]["content"] and "A {instruction}" in messages[1]["content"]


def test_the_simulators_rewrite_keeps_the_content_and_reads_as_usable():
    for seed in range(6):
        messages = rewrite_messages("How do I cook pasta?", ORIGINAL, version="sentiment-v1")
        read = read_rewrite(decide(parse_knobs(f"sim:seed={seed}"), messages).text, ORIGINAL)
        assert not read.problem and ORIGINAL in read.text and read.text != ORIGINAL


# --- a rewrite job, then a judge job that shows the rewrites, over real HTTP ----------------


def _study(n_instructions: int = 4) -> Study:
    study = Study.objects.create(slug="tone", name="Tone")
    candidates = [Candidate.objects.create(study=study, key=k, position=i) for i, k in enumerate(("x", "y", "z"))]
    for index in range(n_instructions):
        instruction = Instruction.objects.create(study=study, index=index, text=f"Question {index}?")
        responses = [
            Response.objects.create(
                instruction=instruction, candidate=c, text=f"Answer {index} of {c.key}: " + "careful words " * (4 + j)
            )
            for j, c in enumerate(candidates)
        ]
        for a, b in ((0, 1), (0, 2), (1, 2)):
            Pair.objects.create(instruction=instruction, response_a=responses[a], response_b=responses[b])
    return study


def _model(server: SimulatorServer, name: str, knobs: str, *, generator: bool = True) -> RegisteredModel:
    model = services.create_judge(
        name=name,
        base_url=server.base_url,
        model=f"sim:{knobs}",
        max_concurrency=8,
        requests_per_minute=0,
        request_timeout=10.0,
        transport=RegisteredModel.Transport.HTTP,
    )
    RegisteredModel.objects.filter(pk=model.pk).update(use_as_generator=generator)
    model.refresh_from_db()
    return model


def _run(kind: str, job) -> None:
    rows = job.generations if kind == "generate" else job.judgments
    for _ in range(10):
        pending = list(rows.filter(status="pending").values_list("pk", flat=True))
        if not pending:
            return
        runner.run_chunk(kind, job.pk, pending)


@pytest.fixture
def server(settings):
    settings.JUDGING_BACKOFF_BASE, settings.JUDGING_BACKOFF_CAP = 0.01, 0.2
    server = SimulatorServer(max_concurrency=32).start_in_thread()
    yield server
    server.stop()


@pytest.mark.django_db
def test_a_rewrite_job_stores_one_rewrite_per_answer_and_a_judge_job_shows_them(server):
    study = _study()
    writer = _model(server, "cheerful-writer", "seed=4")
    judge = _model(server, "tone-judge", "sentiment=1,seed=2")
    with pytest.raises(services.JobError, match="run_rewrites"):  # nothing to show yet, nothing written
        services.start_judge_job(study=study, judge=judge, condition_names=[Condition.SENTIMENT])
    assert not judge.jobs.exists()

    job = start_rewrite_job(study=study, generator=writer, kind=RewriteKind.SENTIMENT)
    assert job.total == 12 and job.prompt_version == "sentiment-v1" and job.candidate_key == ""
    _run("generate", job)
    job.refresh_from_db()
    assert (job.status, job.rewrites_created, job.rewrites_rejected, job.responses_created) == ("completed", 12, 0, 0)
    rewrites = {r.response_id: r for r in ResponseRewrite.objects.filter(response__instruction__study=study)}
    assert len(rewrites) == 12 and Candidate.objects.filter(study=study).count() == 3  # no new candidate
    for row in Generation.objects.filter(job=job).select_related("source", "rewrite"):
        assert row.rewrite.response_id == row.source_id and row.source.text in row.rewrite.text
        assert row.rewrite.provenance["prompt_version"] == "sentiment-v1" and row.rewrite.provenance["job"] == job.pk
    with pytest.raises(services.JobError, match="already has a sentiment rewrite"):
        plan_rewrite_job(study=study, generator=writer)

    judged = services.start_judge_job(study=study, judge=judge, condition_names=[Condition.SENTIMENT], seed=1)
    assert judged.total == 2 * Pair.objects.filter(instruction__study=study).count()
    _run("judge", judged)
    for j in judged.judgments.select_related("pair"):
        cued = j.slot1_response_id if j.cue["cue_slot"] == "first" else (
            j.pair.response_b_id if j.slot1_response_id == j.pair.response_a_id else j.pair.response_a_id
        )  # fmt: skip
        assert j.cue["rewritten"] == rewrites[cued].text and j.cue["rewrite"] == rewrites[cued].pk
        assert j.valid and j.chosen_response_id == cued  # the knob at 1 follows the rewrite every time


@pytest.mark.django_db
def test_a_judge_job_shows_only_pairs_with_both_answers_rewritten(server):
    study = _study(n_instructions=2)
    first = Response.objects.filter(instruction__study=study, instruction__index=0)
    for response in first:  # instruction 0 rewritten, instruction 1 not
        ResponseRewrite.objects.create(response=response, kind=RewriteKind.SENTIMENT, text="Great! " + response.text)
    judge = _model(server, "tone-judge-2", "seed=2")
    job = services.start_judge_job(study=study, judge=judge, condition_names=[Condition.SENTIMENT, Condition.ORDER])
    assert job.total == 2 * 3 + 2 * 6  # sentiment on instruction 0's three pairs; order on all six
    assert set(
        job.judgments.filter(condition=Condition.SENTIMENT).values_list("pair__instruction__index", flat=True)
    ) == {0}
    assert job.judgments.count() == job.total


@pytest.mark.django_db
def test_run_rewrites_refuses_bad_input_and_a_dry_run_writes_nothing(server):
    study = _study(n_instructions=1)
    _model(server, "writer", "seed=1")
    _model(server, "not-a-writer", "seed=1", generator=False)
    out = io.StringIO()
    call_command("run_rewrites", "--study", "tone", "--model", "writer", "--dry-run", stdout=out)
    assert "3 rewrites" in out.getvalue() and not Generation.objects.exists()
    for args, message in (
        (["--study", "nope", "--model", "writer"], "no study"),
        (["--study", "tone", "--model", "nope"], "no registered model"),
        (["--study", "tone", "--model", "not-a-writer"], "not enabled as a generator"),
        (["--study", "tone", "--model", "writer", "--prompt-version", "sentiment-v9"], "unknown sentiment rewrite"),
        (["--study", "tone", "--model", "writer", "--budget", "lots"], "--budget must be a number"),
    ):
        with pytest.raises(CommandError, match=message):
            call_command("run_rewrites", *args, stdout=io.StringIO())
    assert not Generation.objects.exists() and not ResponseRewrite.objects.exists()
    assert study.generation_jobs.count() == 0
