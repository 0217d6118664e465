"""Judge jobs end to end: real Celery worker process + the simulator over real HTTP."""

from __future__ import annotations

import logging
import signal
from decimal import Decimal

import pytest
from django.db.models import Count

from judging import conditions, services
from judging.models import JudgeJob, Judgment
from judging.simulator.behaviour import is_garbled, parse_knobs
from tests.conftest import wait_until
from tests.judging.conftest import sweep_until_finished

pytestmark = [pytest.mark.worker, pytest.mark.slow]
SECRET = "sk-live-DO-NOT-LEAK-4242"


def finished(job: JudgeJob, timeout: float = 90) -> bool:
    def check() -> bool:
        job.refresh_from_db()
        return job.is_finished

    return wait_until(check, timeout=timeout, interval=0.3)


def no_chunk_holds_rows(job: JudgeJob) -> bool:
    """No chunk holds a claim on a pending row: the calls it had out are answered and stored
    (or released), and it has stopped (a claim is cleared when its chunk lets go)."""
    return not Judgment.objects.filter(job=job, status="pending").exclude(claim_token="").exists()


@pytest.mark.parametrize("transport", ["openai", "http"])
def test_errors_and_garbage_end_with_exact_counts(study, make_sim_judge, simulator, judge_worker, settings, transport):
    settings.JUDGING_CHUNK_SIZE = 10
    knobs = "error_rate=0.1,errors=429+500,retry_after=0.05,invalid=0.05,seed=3"
    judge = make_sim_judge(knobs=knobs, transport=transport)
    worker = judge_worker()
    job = services.start_judge_job(
        study=study, judge=judge, condition_names=["order", "compassion", "bandwagon", "attentional"]
    )
    assert finished(job), worker.log()[-3000:]
    sim = parse_knobs(judge.model)
    expected_invalid = sum(
        is_garbled(
            sim,
            conditions.render_for(
                version="v1", condition=j.condition, pair=j.pair, slot1_response_id=j.slot1_response_id, cue=j.cue
            ).messages,
        )
        for j in job.judgments.select_related("pair__instruction", "pair__response_a", "pair__response_b")
    )
    errors = simulator.stats.statuses[429] + simulator.stats.statuses[500]
    assert job.status == "completed"
    assert (job.total, job.done, job.failed) == (144, 144, 0)
    assert job.invalid == expected_invalid == Judgment.objects.filter(job=job, valid=False).count() > 0
    assert errors > 5 and simulator.stats.statuses[200] == 144
    assert job.calls == 144 + errors == sum(simulator.stats.calls.values())


def test_sigkill_mid_job_completes_with_every_judgment_stored_once(
    study, make_sim_judge, simulator, judge_worker, settings
):
    settings.JUDGING_CHUNK_SIZE = 10
    judge = make_sim_judge(knobs="latency_ms=250", max_concurrency=4)
    worker = judge_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])

    def some_done() -> bool:
        job.refresh_from_db()
        return job.done >= 16

    assert wait_until(some_done, timeout=60), worker.log()[-3000:]
    worker.kill(signal.SIGKILL)
    done_before = dict(Judgment.objects.filter(job=job, status="done").values_list("pk", "prompt_hash"))
    in_flight = Judgment.objects.filter(job=job, status="pending").exclude(claim_token="").count()
    assert 0 < len(done_before) < job.total

    judge_worker()
    # What the periodic sweeper does, once a second (its cadence, not a guess at how long it takes).
    wait_until(lambda: sweep_until_finished(job), timeout=120, interval=1.0)

    assert job.status == "completed", worker.log()[-3000:]
    rows = Judgment.objects.filter(job=job)
    assert rows.count() == job.total == job.done == rows.filter(status="done").count() == 72
    assert not rows.values("pair", "condition", "presentation").annotate(n=Count("id")).filter(n__gt=1)
    calls = simulator.stats.calls
    # Nothing stored before the kill was ever called again...
    assert all(calls[h] == 1 for h in done_before.values())
    # ...and only calls in flight at the kill (claimed, not stored) could be repeated.
    assert sum(calls.values()) - job.total <= in_flight
    assert all(calls[j.prompt_hash] >= 1 for j in rows)


def test_budget_stops_the_job_cleanly(study, make_sim_judge, simulator, judge_worker):
    """Deterministic: every request is counted (with its estimated cost) before it is sent, and
    a request is only admitted while cost + lost cost + the estimates of requests out + its own
    estimate fit the budget (the job row is locked for that check, so chunks never race for
    the last dollar). The estimate (3 characters a token in, price_out x max_tokens or 128
    out) is above the simulator's real count (4 characters a token), so the bound asserted is
    budget - (one estimate) < cost <= budget, with simulator calls == job.calls exactly; in
    general cost <= budget + the sum over requests out of (actual - estimated) cost."""
    judge = make_sim_judge(
        knobs="latency_ms=100", max_concurrency=2, price_in_per_1k=Decimal("1"), price_out_per_1k=Decimal("0")
    )
    worker = judge_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], budget_usd=Decimal("1.0"))
    assert finished(job)
    per_call = max(Judgment.objects.filter(job=job, status="done").values_list("cost_usd", flat=True))
    assert job.status == "budget_exhausted" and 0 < job.done < job.total
    estimate = per_call * 4 / 3 + Decimal("0.01")  # the runner's estimate of one call, rounded up
    assert job.budget_usd - estimate < job.cost_usd <= job.budget_usd
    assert job.lost_calls == 0 and not Judgment.objects.filter(job=job, in_flight_usd__gt=0).exists()
    calls = simulator.stats.total_calls
    assert worker.wait_idle()  # every chunk message has run: nothing is left that could call
    assert simulator.stats.total_calls == calls == job.calls == job.done  # nothing after the stop
    assert services.resume_job(job=job, budget_usd=Decimal("100"))
    assert finished(job) and job.status == "completed" and job.done == job.total


def test_pause_resume_and_cancel(study, make_sim_judge, simulator, judge_worker):
    judge = make_sim_judge(knobs="latency_ms=200", max_concurrency=2)
    worker = judge_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])
    assert wait_until(lambda: (job.refresh_from_db() or job.done) >= 4, timeout=60)
    assert services.pause_job(job=job)
    assert wait_until(lambda: no_chunk_holds_rows(job), timeout=30, interval=0.05)  # in-flight calls are stored
    calls = sum(simulator.stats.calls.values())
    assert worker.wait_idle()  # every chunk message has run: nothing is left that could call
    job.refresh_from_db()
    assert job.status == "paused" and job.done < job.total
    assert sum(simulator.stats.calls.values()) == calls
    assert not services.pause_job(job=job)  # idempotent

    assert services.resume_job(job=job)
    assert wait_until(lambda: (job.refresh_from_db() or job.done) >= job.total // 2, timeout=60)
    assert services.cancel_job(job=job)
    assert wait_until(lambda: no_chunk_holds_rows(job), timeout=30, interval=0.05)  # in-flight calls are stored
    calls = sum(simulator.stats.calls.values())
    assert worker.wait_idle()
    job.refresh_from_db()
    assert job.status == "cancelled" and sum(simulator.stats.calls.values()) == calls
    assert services.resume_job(job=job)
    assert finished(job) and job.status == "completed" and job.done == job.total == 72
    assert max(simulator.stats.calls.values()) == 1  # nothing was called twice
    # A chunk counts its requests before handing them out; those a pause or a cancel kept
    # from going out were un-counted, so the counts are exactly what the endpoint received.
    attempts = sum(Judgment.objects.filter(job=job).values_list("attempts", flat=True))
    assert job.calls == attempts == sum(simulator.stats.calls.values()) == 72
    assert job.lost_calls == 0 and not Judgment.objects.filter(job=job, in_flight_usd__gt=0).exists()


def test_the_api_key_never_reaches_a_log_line(study, simulator, judge_worker, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("JUDGE_KEY_SIM", SECRET)
    env_judge = services.create_judge(
        name="env-key",
        base_url=simulator.base_url,
        model="sim:seed=1",
        api_key_env="JUDGE_KEY_SIM",
        requests_per_minute=0,
    )
    stored_judge = services.create_judge(
        name="stored-key",
        base_url=simulator.base_url + "/missing",
        model="sim:seed=1",
        api_key=SECRET,
        requests_per_minute=0,
    )
    worker = judge_worker()
    jobs = [
        services.start_judge_job(study=study, judge=j, condition_names=["order"]) for j in (env_judge, stored_judge)
    ]
    for job in jobs:
        assert finished(job), worker.log()[-2000:]
    assert jobs[0].done == 36 and jobs[1].failed == 36
    assert SECRET not in worker.log()
    assert SECRET not in caplog.text
    assert not Judgment.objects.filter(error__contains=SECRET).exists()
    assert SECRET not in JudgeJob.objects.get(pk=jobs[1].pk).error


def test_run_judges_wait_shows_a_progress_bar_until_done(study, judge_worker, capsys):
    from django.core.management import call_command

    judge_worker()
    call_command("run_judges", "--study", "tiny", "--judge", "random", "--conditions", "order,bandwagon", "--wait")
    out = capsys.readouterr().out
    assert "72 judgments queued" in out
    assert "[##############################] 100.0% 72/72 done 0 failed 0 invalid" in out
    assert JudgeJob.objects.get().status == "completed"
