"""Generation jobs: planning, validation, finishing into responses + pairs, egocentric keys."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from annotations.models import Candidate, Pair, Response
from judging import services
from judging.generate import prompts
from judging.generate.finish import finish_generation_job
from judging.generate.services import is_finalised, start_generation_job
from judging.models import Generation, GenerationJob, JudgeJob, RegisteredModel
from judging.runner.work import kind_of
from judging.simulator.behaviour import answer_text, decide, parse_knobs, usage
from tests.judging.conftest import build_study


def _model(name: str = "gen", **fields) -> RegisteredModel:
    defaults = {
        "kind": RegisteredModel.Kind.OPENAI,
        "base_url": "http://127.0.0.1:9/v1",
        "model": "sim:seed=4",
        "generation": {"temperature": 0},
    }
    defaults.update(fields)
    return RegisteredModel.objects.create(name=name, **defaults)


def _answer_all(job: GenerationJob, *, fail: tuple[int, ...] = ()) -> None:
    """Stand in for the runner: store an answer for every row (or a failure) and complete."""
    for row in job.generations.select_related("instruction"):
        if row.instruction.index in fail:
            row.status, row.error = Generation.Status.FAILED, "500 server error"
        else:
            row.status, row.raw_text = (
                Generation.Status.DONE,
                f"answer of {job.generator.name} to {row.instruction.index}",
            )
            row.tokens_in, row.tokens_out, row.completed_at = 10, 20, timezone.now()
        row.save()
    failed = job.generations.filter(status=Generation.Status.FAILED).count()
    job.transition(
        GenerationJob.ACTIVE,
        GenerationJob.Status.COMPLETED,
        finished_at=timezone.now(),
        done=job.total - failed,
        failed=failed,
    )


def test_a_job_records_messages_params_and_hash_on_every_row(study):
    model = _model()
    job = start_generation_job(study=study, generator=model, params={"max_tokens": 64})
    rows = list(job.generations.select_related("instruction").order_by("instruction__index"))
    assert (job.total, len(rows), job.candidate_key, job.status) == (3, 3, "gen", "running")
    for row in rows:
        assert row.messages == prompts.messages_for(row.instruction.text, version="answer-v1")
        assert row.messages[-1] == {"role": "user", "content": row.instruction.text}
        assert row.params == {"temperature": 0, "max_tokens": 64}  # the model's settings, then the job's
        assert row.prompt_hash == prompts.hash_of(row.messages) and len(row.prompt_hash) == 64


@pytest.mark.parametrize(
    ("change", "kwargs", "message"),
    [
        ({"kind": RegisteredModel.Kind.BASELINE, "baseline": "longer"}, {}, "cannot write answers"),
        ({"kind": RegisteredModel.Kind.IMPORTED}, {}, "cannot write answers"),
        ({"use_as_generator": False}, {}, "not enabled as a generator"),
        ({}, {"candidate_key": "alpha"}, "already has a candidate 'alpha'"),
        ({}, {"candidate_key": "no spaces"}, "candidate key"),
        ({}, {"pair_policy": "sample"}, "sample size of at least 1"),
        ({}, {"pair_policy": "sample", "pair_sample_size": 13}, "more than the 12 pairs"),
        ({}, {"pair_policy": "all", "pair_sample_size": 3}, "only with pair policy 'sample'"),
        ({}, {"pair_policy": "most"}, "unknown pair policy"),
        ({}, {"params": {"max_tokens": 0}}, "max_tokens"),
        ({}, {"params": {"api_key": "x"}}, "unknown generation setting 'api_key'"),
        ({}, {"mode": "turbo"}, "unknown mode"),
        ({}, {"budget_usd": Decimal("-1")}, "negative"),
    ],
)
def test_bad_input_is_one_clear_error_and_writes_nothing(study, change, kwargs, message):
    model = _model(**change)
    with pytest.raises(services.JobError, match=message):
        start_generation_job(study=study, generator=model, **kwargs)
    assert not GenerationJob.objects.exists() and not Generation.objects.exists()


def test_a_study_without_instructions_is_refused(db):
    from annotations.models import Study

    empty = Study.objects.create(slug="empty", name="Empty")
    with pytest.raises(services.JobError, match="has no instructions"):
        start_generation_job(study=empty, generator=_model())


def test_finishing_makes_responses_with_provenance_and_pairs_with_every_candidate(study):
    model = _model()
    job = start_generation_job(study=study, generator=model, params={"max_tokens": 64})
    _answer_all(job, fail=(2,))
    assert not is_finalised(job)
    job = finish_generation_job(job)
    candidate = Candidate.objects.get(study=study, key="gen")
    assert job.candidate == candidate and candidate.position == 4  # after alpha..delta
    responses = list(Response.objects.filter(candidate=candidate).order_by("instruction__index"))
    assert [r.instruction.index for r in responses] == [0, 1]  # the failed answer makes no response
    first = responses[0]
    assert first.text == "answer of gen to 0"
    assert first.provenance["model"] == "gen" and first.provenance["model_id"] == "sim:seed=4"
    assert first.provenance["base_url"] == "http://127.0.0.1:9/v1"
    assert first.provenance["params"] == {"temperature": 0, "max_tokens": 64}
    assert first.provenance["prompt_version"] == "answer-v1" and first.provenance["job"] == job.pk
    assert first.provenance["messages"][-1]["content"] == first.instruction.text
    assert first.provenance["generated_at"]
    new_pairs = Pair.objects.filter(response_b__candidate=candidate)
    # 2 answered instructions x 4 existing candidates; the new candidate is always response_b.
    assert new_pairs.count() == 8 == job.pairs_created and job.responses_created == 2
    assert not Pair.objects.filter(response_a__candidate=candidate).exists()
    assert all(p.response_a.instruction_id == p.instruction_id == p.response_b.instruction_id for p in new_pairs)
    assert is_finalised(job)
    # Idempotent: a second call adds nothing.
    again = finish_generation_job(job)
    assert (again.responses_created, again.pairs_created, Pair.objects.count()) == (2, 8, 18 + 8)
    assert set(
        Generation.objects.filter(job=job, status="done").values_list("response__candidate__key", flat=True)
    ) == {"gen"}


def _sampled_pairs(slug: str, seed: int) -> set[tuple[int, str]]:
    study = build_study(slug)
    model = _model(f"gen-{slug}")
    job = start_generation_job(
        study=study, generator=model, candidate_key="newbie", pair_policy="sample", pair_sample_size=5, seed=seed
    )
    _answer_all(job)
    job = finish_generation_job(job)
    assert job.pairs_created == 5
    return {
        (p.instruction.index, p.response_a.candidate.key)
        for p in Pair.objects.filter(instruction__study=study, response_b__candidate__key="newbie")
    }


def test_a_pair_sample_is_seeded_same_seed_same_pairs(db):
    first, same = _sampled_pairs("s1", seed=7), _sampled_pairs("s2", seed=7)
    others = [_sampled_pairs(f"o{seed}", seed=seed) for seed in (1, 2, 3)]
    assert first == same and len(first) == 5
    assert any(other != first for other in others)


def test_pair_policy_none_adds_no_pairs(study):
    job = start_generation_job(study=study, generator=_model(), pair_policy="none")
    _answer_all(job)
    job = finish_generation_job(job)
    assert (job.responses_created, job.pairs_created, Pair.objects.count()) == (3, 0, 18)


def test_a_rerun_of_the_same_model_fills_only_the_missing_answers(study):
    model = _model()
    job = start_generation_job(study=study, generator=model)
    _answer_all(job, fail=(1,))
    finish_generation_job(job)
    again = start_generation_job(study=study, generator=model)  # its own earlier candidate: allowed
    assert list(again.generations.values_list("instruction__index", flat=True)) == [1]
    _answer_all(again)
    again = finish_generation_job(again)
    assert (again.responses_created, again.pairs_created) == (1, 4)
    with pytest.raises(services.JobError, match="no instructions without an answer from candidate 'gen'"):
        start_generation_job(study=study, generator=model)
    # Another model may not write into this candidate.
    with pytest.raises(services.JobError, match="already has a candidate 'gen'"):
        start_generation_job(study=study, generator=_model("other"), candidate_key="gen")


def test_a_judge_job_of_the_generating_model_gets_its_candidate_as_self(study):
    model = _model(self_candidate_key="alpha")
    before = services.start_judge_job(study=study, judge=model, condition_names=["order"])
    assert before.self_candidate_key == "alpha"  # no generation yet: the manual key
    job = start_generation_job(study=study, generator=model, candidate_key="mine")
    _answer_all(job)
    finish_generation_job(job)
    after = services.start_judge_job(study=study, judge=model, condition_names=["order", "compassion"])
    assert after.self_candidate_key == "mine"
    marked = [
        j
        for j in after.judgments.filter(condition="compassion").select_related(
            "pair__response_a__candidate", "pair__response_b__candidate"
        )
        if "mine" in (j.pair.response_a.candidate.key, j.pair.response_b.candidate.key)
    ]
    assert marked and all(j.cue.get("self_slot") in ("first", "second") for j in marked)
    other = services.start_judge_job(study=study, judge=_model("stranger"), condition_names=["order"])
    assert other.self_candidate_key == ""


def test_the_runtime_reaches_either_jobs_model_through_called_model(study):
    # One registered model in both roles: the judge job names it judge, the generation job
    # generator; the runner's queries name the field its kind gives (model_field).
    model = _model()
    generating = start_generation_job(study=study, generator=model)
    judging = services.start_judge_job(study=study, judge=model, condition_names=["order"])
    for job in (generating, judging):
        kind = kind_of(job)
        assert job.called_model == getattr(job, kind.model_field) == model
        assert kind.job_model.objects.filter(**{kind.model_field: model}).get() == job


def test_the_report_loader_reads_the_jobs_self_key_and_falls_back_to_the_judges(study):
    from analysis.loaders import judgments_frame

    model = _model(self_candidate_key="alpha")
    job = services.start_judge_job(study=study, judge=model, condition_names=["order"])
    job.judgments.update(status="done", choice="first", valid=True)
    job.transition(JudgeJob.ACTIVE, JudgeJob.Status.COMPLETED, finished_at=timezone.now())
    assert set(judgments_frame(study)["self_key"]) == {"alpha"}
    JudgeJob.objects.filter(pk=job.pk).update(self_candidate_key="bravo")
    assert set(judgments_frame(study)["self_key"]) == {"bravo"}


# --- the simulator's candidate answers -------------------------------------------------------


def test_the_simulator_answers_a_non_judging_prompt_with_a_seeded_answer():
    messages = prompts.messages_for("Why do cats purr?")
    knobs = parse_knobs("sim:seed=5,answer_words=80")
    answer = decide(knobs, messages)
    assert answer.status == 200 and answer.slot == "" and not answer.garbled
    assert answer.text == decide(knobs, messages).text  # deterministic
    assert answer.text != decide(parse_knobs("sim:seed=6,answer_words=80"), messages).text
    assert 40 <= len(answer.text.split()) <= 130  # [0.5, 1.5) x 80 words, plus the topic line
    short = decide(knobs, messages, max_tokens=16)
    assert usage(messages, short.text)[1] <= 16 and short.text and answer.text.startswith(short.text)
    longer = answer_text(parse_knobs("sim:seed=5,answer_words=400"), messages)
    assert len(longer) > 2 * len(answer.text)
    with pytest.raises(ValueError, match="answer_words"):
        parse_knobs("sim:answer_words=0")


def test_answers_retried_after_completion_fill_only_what_the_sample_lacks(study):
    job = start_generation_job(study=study, generator=_model(), pair_policy="sample", pair_sample_size=10, seed=1)
    _answer_all(job, fail=(2,))
    job = finish_generation_job(job)
    assert (job.responses_created, job.pairs_created) == (2, 8)  # only 8 pairs possible so far
    row = job.generations.get(instruction__index=2)
    row.status, row.raw_text, row.completed_at = Generation.Status.DONE, "late answer", timezone.now()
    row.save()  # as a resume that retried the failed answer
    job = finish_generation_job(job)
    assert (job.responses_created, job.pairs_created) == (3, 10)
    assert Pair.objects.filter(response_b__candidate__key="gen").count() == 10
