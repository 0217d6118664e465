"""Generation jobs end to end: a real Celery worker, the simulator over real HTTP, the CLI."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analysis.report import build_report
from annotations.importers.demo import SYSTEMS, seed_demo_study
from annotations.models import Candidate, Pair, Response
from judging import services
from judging.generate import prompts
from judging.generate.services import is_finalised, start_generation_job
from judging.models import GenerationJob
from judging.simulator.behaviour import answer_text, parse_knobs
from tests.conftest import PROJECT_ROOT, _worker_env, wait_until
from tests.judging.conftest import build_study

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def finalised(job: GenerationJob, timeout: float = 90) -> bool:
    """Finished, and (when completed) the runner has written the candidate."""

    def check() -> bool:
        job.refresh_from_db()
        return job.is_finished and (job.status != "completed" or is_finalised(job))

    done = wait_until(check, timeout=timeout, interval=0.3)
    # The job was read before is_finalised's query: finish_generation_job may have committed in
    # between (PostgreSQL, read committed), so read it again for the candidate it set.
    job.refresh_from_db()
    return done


def test_a_simulated_model_answers_the_demo_and_every_pair_is_extended(make_sim_judge, simulator, judge_worker):
    study = seed_demo_study()
    model = make_sim_judge(name="newcomer", knobs="seed=9,answer_words=60,latency_ms=20")
    worker = judge_worker()
    job = start_generation_job(study=study, generator=model, params={"max_tokens": 48})
    assert finalised(job), worker.log()[-3000:]
    assert (job.status, job.total, job.done, job.failed) == ("completed", 12, 12, 0)
    candidate = Candidate.objects.get(study=study, key="newcomer")
    assert job.candidate == candidate and candidate.position == len(SYSTEMS)
    knobs = parse_knobs(model.model)
    responses = list(
        Response.objects.filter(candidate=candidate).select_related("instruction").order_by("instruction__index")
    )
    assert len(responses) == 12 == job.responses_created
    for response in responses:
        messages = prompts.messages_for(response.instruction.text)
        # Exactly what the simulator wrote for these messages, cut at about 48 tokens.
        assert response.text == answer_text(knobs, messages, max_tokens=48) and len(response.text) <= 4 * 48
        p = response.provenance
        assert (p["model"], p["model_id"], p["base_url"], p["job"]) == ("newcomer", model.model, model.base_url, job.pk)
        assert p["params"] == {"max_tokens": 48} and p["prompt_version"] == "answer-v1"
        assert p["messages"] == messages and p["generated_at"]
    # Every instruction: the new answer against each of the 5 demo systems, as response_b.
    new = Pair.objects.filter(instruction__study=study, response_b__candidate=candidate)
    assert new.count() == 12 * len(SYSTEMS) == job.pairs_created
    assert Pair.objects.filter(instruction__study=study).count() == 12 * 10 + 60
    assert job.calls == sum(simulator.stats.calls.values()) == 12
    assert job.tokens_out > 0 and job.cost_usd > 0


def test_a_seeded_pair_sample_is_the_same_for_the_same_seed(make_sim_judge, judge_worker):
    model = make_sim_judge(name="sampler", knobs="seed=2")
    judge_worker()
    picked = []
    for slug, seed in (("s1", 7), ("s2", 7), ("s3", 8)):
        study = build_study(slug)
        job = start_generation_job(study=study, generator=model, pair_policy="sample", pair_sample_size=5, seed=seed)
        assert finalised(job) and job.pairs_created == 5
        picked.append(
            {
                (p.instruction.index, p.response_a.candidate.key)
                for p in Pair.objects.filter(instruction__study=study, response_b__candidate__key="sampler")
            }
        )
    assert picked[0] == picked[1] and len(picked[0]) == 5
    assert picked[2] != picked[0]  # (a different seed picks differently here)


def test_the_cli_waits_with_a_progress_bar_and_bad_input_exits_non_zero(make_sim_judge, judge_worker):
    study = build_study("cli")
    make_sim_judge(name="cli-model", knobs="seed=1,latency_ms=30")
    judge_worker()
    out = StringIO()
    call_command(
        "generate_answers",
        "--study",
        "cli",
        "--model",
        "cli-model",
        "--max-tokens",
        "40",
        "--pairs",
        "5",
        "--seed",
        "3",
        "--wait",
        stdout=out,
    )
    text = out.getvalue()
    assert "generation job" in text and "3 answers queued from cli-model on cli as candidate cli-model" in text
    assert "[##############################] 100.0% 3/3 done" in text
    assert "candidate cli-model: 3 responses, 5 pairs added, 0 answers failed" in text
    assert Response.objects.filter(candidate__study=study, candidate__key="cli-model").count() == 3
    with pytest.raises(CommandError, match="--pairs must be all, none or a number"):
        call_command("generate_answers", "--study", "cli", "--model", "cli-model", "--pairs", "lots")
    # As a user runs it: one line on stderr, exit code 1, nothing written.
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "generate_answers",
            "--study",
            "cli",
            "--model",
            "cli-model",
            "--candidate-key",
            "alpha",
        ],
        cwd=PROJECT_ROOT,
        env=_worker_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "CommandError: study 'cli' already has a candidate 'alpha' that 'cli-model' did not write; "
        "choose another candidate key"
    ]
    assert GenerationJob.objects.count() == 1


def test_pause_resume_and_cancel_a_generation_job(make_sim_judge, judge_worker, settings):
    settings.JUDGING_CHUNK_SIZE = 10
    study = seed_demo_study()
    model = make_sim_judge(name="slow", knobs="seed=4,latency_ms=400", max_concurrency=1)
    worker = judge_worker()
    job = start_generation_job(study=study, generator=model)
    assert wait_until(lambda: GenerationJob.objects.get(pk=job.pk).done >= 1, timeout=30)
    services.pause_job(job=job)
    assert worker.wait_idle()  # in-flight calls finished and were stored; nothing is left to run
    job.refresh_from_db()
    assert job.status == "paused" and job.done < 12  # nothing new started while paused
    assert not Candidate.objects.filter(study=study, key="slow").exists()
    assert services.resume_job(job=job)
    assert finalised(job, timeout=60)
    assert (job.status, job.done, job.responses_created) == ("completed", 12, 12)
    # Three answers at 3 s each, one at a time: the cancel lands while the first is out, however
    # slowly this test gets to it on a loaded machine (at 0.4 s all three were once done first).
    slower = make_sim_judge(name="slower", knobs="seed=4,latency_ms=3000", max_concurrency=1)
    other = start_generation_job(study=build_study("cancel-me"), generator=slower)
    services.cancel_job(job=other)
    assert worker.wait_idle()
    other.refresh_from_db()
    assert other.status == "cancelled" and other.done < other.total and other.candidate is None


def test_a_model_that_generated_and_judged_gets_an_egocentric_rate(make_sim_judge, judge_worker):
    study = build_study("ego")
    model = make_sim_judge(name="both", knobs="seed=5,answer_words=30")
    judge_worker()
    job = start_generation_job(study=study, generator=model)
    assert finalised(job)
    judging = services.start_judge_job(study=study, judge=model, condition_names=["order"])
    judging.refresh_from_db()
    assert judging.self_candidate_key == "both" and model.self_candidate_key == ""  # no --self-candidate
    assert wait_until(lambda: _finished(judging), timeout=90)
    rows = {(r["subject"], r["bias"]): r for r in build_report(study=study, profile="default")["bias"]}
    egocentric = rows[("both", "egocentric")]
    # Recomputed from the calls: pairs where the judge chose its own answer in both presentations.
    chose_own: dict[int, list[bool]] = {}
    for j in judging.judgments.filter(pair__response_b__candidate__key="both").select_related(
        "chosen_response__candidate"
    ):
        chose_own.setdefault(j.pair_id, []).append(j.valid and j.chosen_response.candidate.key == "both")
    hits = sum(all(v) and len(v) == 2 for v in chose_own.values())
    assert len(chose_own) == 12 and egocentric["n"] == 12  # 3 instructions x 4 other candidates
    assert egocentric["hits"] == hits and egocentric["value"] == pytest.approx(hits / 12)


def _finished(job) -> bool:
    job.refresh_from_db()
    return job.is_finished


def test_a_generation_job_runs_through_the_batch_api_at_the_batch_price(
    make_sim_judge, simulator, judge_worker, monkeypatch
):
    from judging.models import BatchRun
    from judging.simulator import batch as simbatch

    monkeypatch.setenv("BATCH_POLL_SECONDS", "0.3")
    simbatch.store_for(simulator).delay_s = 0.5
    study = build_study("batched")
    model = make_sim_judge(name="batcher", knobs="seed=6,answer_words=40")
    judge_worker()
    job = start_generation_job(study=study, generator=model, params={"max_tokens": 30}, mode="batch")
    assert finalised(job, timeout=90)
    assert (job.status, job.done, job.responses_created, job.pairs_created) == ("completed", 3, 3, 12)
    assert BatchRun.objects.filter(generation_job=job).exists()
    assert simbatch.store_for(simulator).lines_answered == 3
    knobs = parse_knobs(model.model)
    for response in Response.objects.filter(candidate__study=study, candidate__key="batcher"):
        assert response.text == answer_text(knobs, prompts.messages_for(response.instruction.text), max_tokens=30)
        assert response.provenance["mode"] == "batch"
    # Half the synchronous price (no batch prices set on the model); each stored row's cost is
    # rounded to 1e-6 USD, so the job's sum may differ from the recomputed total by that per row.
    expected = model.price(job.tokens_in, job.tokens_out, batch=True)
    assert expected > 0 and abs(job.cost_usd - expected) <= Decimal("0.000001") * job.done
