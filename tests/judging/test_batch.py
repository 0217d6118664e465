"""Batch mode: the simulator's Batch API, the client, and batch jobs on a real worker."""

from __future__ import annotations

import json
import signal
import time
from decimal import Decimal

import httpx2
import openai
import pytest
from django.db.models import Count
from django.test import Client
from django.urls import reverse

from judging import conditions, llm, prompts, services
from judging.models import BatchRun, JudgeJob, Judgment
from judging.simulator import batch as simbatch
from judging.simulator.behaviour import decide, parse_knobs, usage
from tests.conftest import wait_until
from tests.judging.conftest import worker_environment


def _messages(i: int) -> list[dict[str, str]]:
    return prompts.render(
        version="v1",
        condition="order",
        instruction=f"Q{i}?",
        reference="R",
        first_text=f"answer {i}",
        second_text=f"the other answer {i}",
    ).messages


def _jsonl(model: str, n: int, start: int = 0) -> bytes:
    lines = [
        json.dumps(
            {
                "custom_id": f"judge-{i}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": model, "messages": _messages(i)},
            }
        )
        for i in range(start, start + n)
    ]
    return ("\n".join(lines) + "\n").encode()


def _sdk(simulator) -> openai.OpenAI:
    return openai.OpenAI(base_url=simulator.base_url, api_key="sk-test", max_retries=0, timeout=10)


def _wait_final(sdk: openai.OpenAI, batch_id: str, timeout: float = 20):
    seen = []

    def done() -> bool:
        batch = sdk.batches.retrieve(batch_id)
        if not seen or seen[-1] != batch.status:
            seen.append(batch.status)
        return batch.status in ("completed", "failed", "cancelled", "expired")

    assert wait_until(done, timeout=timeout, interval=0.05)
    return sdk.batches.retrieve(batch_id), seen


def test_simulator_batch_answers_each_line_like_chat_completions(simulator):
    store = simbatch.store_for(simulator)
    store.delay_s = 0.6
    model = "sim:error_rate=0.3,errors=429+500,order_first=0.5,seed=5"
    sdk = _sdk(simulator)
    uploaded = sdk.files.create(file=("in.jsonl", _jsonl(model, 40), "application/jsonl"), purpose="batch")
    assert uploaded.purpose == "batch" and uploaded.bytes == len(_jsonl(model, 40))
    created = time.monotonic()
    batch = sdk.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h", metadata={"job": "7"}
    )
    assert batch.status == "validating" and batch.metadata == {"job": "7"}
    batch, seen = _wait_final(sdk, batch.id)
    assert time.monotonic() - created >= 0.6 - 0.05  # not before the configured delay
    assert seen[0] == "validating" and "in_progress" in seen and seen[-1] == "completed"

    knobs = parse_knobs(model)
    expected = {f"judge-{i}": decide(knobs, _messages(i), 0) for i in range(40)}
    failing = {cid for cid, d in expected.items() if d.status != 200}
    assert 3 < len(failing) < 25  # the knob really made some lines fail
    assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (
        40,
        40 - len(failing),
        len(failing),
    )

    output = [json.loads(line) for line in sdk.files.content(batch.output_file_id).content.splitlines()]
    errors = [json.loads(line) for line in sdk.files.content(batch.error_file_id).content.splitlines()]
    assert {o["custom_id"] for o in output} == set(expected) - failing
    assert {e["custom_id"] for e in errors} == failing
    for line in output:
        body = line["response"]["body"]
        assert line["response"]["status_code"] == 200
        assert body["choices"][0]["message"]["content"] == expected[line["custom_id"]].text
        assert body["usage"]["prompt_tokens"] > 0
    assert {e["response"]["status_code"] for e in errors} <= {429, 500}
    # The lines went through the same counters as synchronous calls.
    assert simulator.stats.total_calls == 40 and simulator.stats.statuses[200] == 40 - len(failing)


def test_simulator_batch_cancel_and_bad_requests(simulator):
    store = simbatch.store_for(simulator)
    store.delay_s = 30
    sdk = _sdk(simulator)
    uploaded = sdk.files.create(
        file=("in.jsonl", _jsonl("sim:latency_ms=200", 3), "application/jsonl"), purpose="batch"
    )
    batch = sdk.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert sdk.batches.cancel(batch.id).status == "cancelling"
    batch, _ = _wait_final(sdk, batch.id, timeout=5)
    assert batch.status == "cancelled" and batch.output_file_id is None

    with pytest.raises(openai.NotFoundError):
        sdk.batches.retrieve("batch-missing")
    with pytest.raises(openai.NotFoundError):
        sdk.files.content("file-missing")
    with pytest.raises(openai.BadRequestError, match="only /v1/chat/completions"):
        sdk.batches.create(input_file_id=uploaded.id, endpoint="/v1/embeddings", completion_window="24h")
    with pytest.raises(openai.NotFoundError):
        sdk.batches.create(input_file_id="file-missing", endpoint="/v1/chat/completions", completion_window="24h")
    raw = httpx2.post(
        f"{simulator.base_url}/files",
        content=b"not multipart",
        headers={"Content-Type": "multipart/form-data; boundary=x"},
    )
    assert raw.status_code == 400 and "multipart" in raw.json()["error"]["message"]

    # An input file with a bad line fails the whole batch, naming the line.
    store.delay_s = 0
    bad = (
        _jsonl("sim:", 2) + b'{"custom_id": "judge-0", "method": "POST", "url": "/v1/chat/completions",'
        b' "body": {}}\nnot json\n'
    )
    uploaded = sdk.files.create(file=("bad.jsonl", bad, "application/jsonl"), purpose="batch")
    batch = sdk.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
    batch, _ = _wait_final(sdk, batch.id)
    assert batch.status == "failed"
    assert [(e.code, e.line) for e in batch.errors.data] == [("duplicate_custom_id", 3), ("invalid_json_line", 4)]


def test_simulator_keeps_a_bounded_number_of_files(simulator, monkeypatch):
    monkeypatch.setattr(simbatch, "MAX_FILES", 3)
    sdk = _sdk(simulator)
    ids = [
        sdk.files.create(file=(f"{i}.jsonl", _jsonl("sim:", 1), "application/jsonl"), purpose="batch").id
        for i in range(5)
    ]
    assert list(simbatch.store_for(simulator).files) == ids[2:]
    with pytest.raises(openai.NotFoundError):
        sdk.files.content(ids[0])
    assert sdk.files.content(ids[4]).content == _jsonl("sim:", 1)


# --- batch jobs on a real worker over real HTTP ------------------------------------------------

ALL_CONDITIONS = ["order", "compassion", "bandwagon", "attentional", "selective", "plain"]


@pytest.fixture
def batch_worker(start_worker, monkeypatch):
    """Workers that poll batches every 0.3 s, with short leases and retries after about 1 s
    (longer than a chunk takes to store, so a deferred row is always rescheduled)."""
    worker_environment(
        monkeypatch,
        BATCH_POLL_SECONDS="0.3",
        JUDGING_LEASE_SECONDS="3",
        JUDGING_BACKOFF_BASE_MS="1000",
        JUDGING_BACKOFF_CAP_MS="2000",
    )
    return start_worker


def _finished(job, timeout: float = 90) -> bool:
    return wait_until(lambda: job.refresh_from_db() or job.is_finished, timeout=timeout, interval=0.3)


def _messages_of(job, row) -> list[dict[str, str]]:
    return conditions.render_for(
        version=job.prompt_version,
        condition=row.condition,
        pair=row.pair,
        slot1_response_id=row.slot1_response_id,
        cue=row.cue,
    ).messages


def _rows(job):
    return list(job.judgments.select_related("pair__instruction", "pair__response_a", "pair__response_b"))


@pytest.mark.worker
@pytest.mark.slow
def test_a_judge_job_runs_end_to_end_through_the_batch_api(study, make_sim_judge, simulator, batch_worker, researcher):
    simbatch.store_for(simulator).delay_s = 1.0
    judge = make_sim_judge(knobs="order_first=0.3,bandwagon=0.5,invalid=0.05,seed=4")
    worker = batch_worker()
    job = services.start_judge_job(
        study=study, judge=judge, condition_names=ALL_CONDITIONS, mode="batch", created_by=researcher
    )
    assert _finished(job), worker.log()[-3000:]
    rows = _rows(job)
    run = BatchRun.objects.get(judge_job=job)
    knobs = parse_knobs(judge.model)

    # 18 pairs x (5 two-presentation conditions + plain) = 198 rows; plain repeats one order
    # presentation, so 180 distinct prompts went out as 180 lines of one batch.
    distinct = {prompts.prompt_hash(_messages_of(job, r)) for r in rows}
    assert (job.status, job.total, job.done, job.failed) == ("completed", 198, 198, 0)
    assert len(rows) == 198 and len(distinct) == 180
    assert (run.state, run.provider_status, run.request_count, run.completed_count) == (
        "collected",
        "completed",
        180,
        180,
    )
    assert simbatch.store_for(simulator).lines_answered == 180 == simulator.stats.total_calls
    assert job.calls == 180 and job.cached == 18  # the twins took the line's answer from the cache
    assert not Judgment.objects.filter(job=job, batch__isnull=False).exists()

    # Every row holds the simulator's answer to its own prompt, parsed.
    for row in rows:
        decision = decide(knobs, _messages_of(job, row), 0)
        assert row.raw_text == decision.text
        assert row.choice == decision.slot and row.valid == (not decision.garbled)
    assert job.invalid == sum(not r.valid for r in rows) > 0

    # Cost: the batch price, by default half the synchronous price, for the 180 answered lines.
    paid = [r for r in rows if not r.cached]
    sync_price = sum(judge.price(r.tokens_in, r.tokens_out) for r in paid)
    # Each row's cost is rounded to 6 places, and the job's total is the sum of its rows
    # (whether the results were stored in one go or in several).
    assert job.cost_usd == sum(r.cost_usd for r in rows) > 0
    assert abs(job.cost_usd - sync_price / 2) <= Decimal("0.0000005") * len(paid)
    assert all(r.cost_usd == 0 for r in rows if r.cached)
    tokens_in = sum(usage(_messages_of(job, r), r.raw_text)[0] for r in paid)
    assert job.tokens_in == tokens_in

    # The job page and the API show the batch.
    client = Client()
    client.force_login(researcher)
    page = client.get(reverse("judging:job", args=[job.pk])).content.decode()
    assert 'id="batch-state"' in page and f'id="batch-run-{run.pk}" data-state="collected"' in page
    api = client.get(f"/api/judge-jobs/{job.pk}/").json()
    assert api["mode"] == "batch" and api["batches"][0]["state"] == "collected"
    assert api["batches"][0]["requests"] == 180


@pytest.mark.worker
@pytest.mark.slow
def test_a_batch_is_collected_after_the_worker_is_killed(study, make_sim_judge, simulator, batch_worker):
    simbatch.store_for(simulator).delay_s = 4.0
    judge = make_sim_judge(knobs="seed=2")
    worker = batch_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"], mode="batch")
    assert wait_until(lambda: BatchRun.objects.filter(judge_job=job, state="submitted").exists(), timeout=30), (
        worker.log()[-3000:]
    )
    worker.kill(signal.SIGKILL)
    run = BatchRun.objects.get(judge_job=job)
    polled = run.last_polled_at
    provider_batch = simbatch.store_for(simulator).batches[run.provider_batch_id]
    # The provider finishes meanwhile; nobody is polling.
    assert wait_until(lambda: provider_batch.status == "completed", timeout=30, interval=0.05)
    run.refresh_from_db()
    assert run.state == "submitted" and run.last_polled_at == polled

    batch_worker()  # a new worker resumes polling the submitted batch
    assert _finished(job, timeout=120)
    rows = Judgment.objects.filter(job=job)
    assert (job.status, job.done, rows.filter(status="done").count()) == ("completed", 72, 72)
    assert BatchRun.objects.filter(judge_job=job).count() == 1  # never submitted twice
    assert job.calls == 72 == simulator.stats.total_calls
    assert not rows.values("pair", "condition", "presentation").annotate(n=Count("id")).filter(n__gt=1)


@pytest.mark.worker
@pytest.mark.slow
def test_failed_batch_lines_fall_back_to_synchronous_calls(study, make_sim_judge, simulator, batch_worker):
    simbatch.store_for(simulator).delay_s = 0.5
    judge = make_sim_judge(knobs="error_rate=0.25,errors=500+429,retry_after=1,seed=9")
    worker = batch_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"], mode="batch")
    # Polling returns once finished: the bound only has to survive a loaded machine (retries wait 1 s).
    assert _finished(job, timeout=120), (
        str(
            list(
                Judgment.objects.filter(job=job, status="pending").values(
                    "pk", "attempts", "error", "not_before", "claim_token", "claimed_until", "batch"
                )
            )
        )
        + str(JudgeJob.objects.filter(pk=job.pk).values()[0])
        + worker.log()[-3000:]
    )
    rows = _rows(job)
    knobs = parse_knobs(judge.model)
    failed_in_batch = [r for r in rows if decide(knobs, _messages_of(job, r), 0).status != 200]
    assert 8 < len(failed_in_batch) < 40  # the knob made a good share of lines fail
    assert (job.status, job.done, job.failed) == ("completed", 72, 0)
    run = BatchRun.objects.get(judge_job=job)
    assert run.state == "collected" and run.failed_count == len(failed_in_batch)
    # Each failed line was answered by ordinary calls (retried on 500/429), at the full price.
    assert all(r.attempts >= 2 and r.status == "done" for r in failed_in_batch)
    assert job.calls == simulator.stats.total_calls == 72 + sum(r.attempts - 1 for r in failed_in_batch)
    sync_ids = {r.pk for r in failed_in_batch}
    expected = sum(judge.price(r.tokens_in, r.tokens_out, batch=r.pk not in sync_ids) for r in rows)
    assert abs(job.cost_usd - expected) <= Decimal("0.0000005") * len(rows)  # rounded per store
    assert expected < sum(judge.price(r.tokens_in, r.tokens_out) for r in rows)
    assert job.last_error.startswith(("500 server error", "429 rate limited"))


@pytest.mark.worker
@pytest.mark.slow
def test_cancel_stops_the_provider_batch_and_resume_submits_again(study, make_sim_judge, simulator, batch_worker):
    store = simbatch.store_for(simulator)
    store.validate_s, store.delay_s = 3.0, 3.0
    judge = make_sim_judge(knobs="seed=1")
    worker = batch_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    assert wait_until(lambda: BatchRun.objects.filter(judge_job=job, state="submitted").exists(), timeout=30), (
        worker.log()[-3000:]
    )
    assert services.cancel_job(job=job)
    assert wait_until(lambda: BatchRun.objects.filter(judge_job=job, state="collected").exists(), timeout=30), (
        worker.log()[-3000:]
    )
    run = BatchRun.objects.get(judge_job=job)
    job.refresh_from_db()
    assert run.provider_status == "cancelled" and store.batches[run.provider_batch_id].status == "cancelled"
    rows = Judgment.objects.filter(job=job)
    assert rows.filter(status="pending", batch__isnull=True).count() == 36 and job.status == "cancelled"
    assert job.calls == 0 == simulator.stats.total_calls  # nothing ran: the lines were no calls

    store.validate_s, store.delay_s = 0.1, 0.3
    assert services.resume_job(job=job)
    assert _finished(job), worker.log()[-3000:]
    assert (job.status, job.done) == ("completed", 36)
    assert list(BatchRun.objects.filter(judge_job=job).order_by("pk").values_list("state", flat=True)) == [
        "collected",
        "collected",
    ]
    assert job.calls == 36 == simulator.stats.total_calls


@pytest.mark.worker
@pytest.mark.slow
def test_a_paused_job_still_collects_its_batch_and_resumes_to_completion(
    study, make_sim_judge, simulator, batch_worker
):
    simbatch.store_for(simulator).delay_s = 2.0
    judge = make_sim_judge(knobs="seed=1")
    worker = batch_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    assert wait_until(lambda: BatchRun.objects.filter(judge_job=job, state="submitted").exists(), timeout=30)
    assert services.pause_job(job=job)
    assert wait_until(lambda: BatchRun.objects.filter(judge_job=job, state="collected").exists(), timeout=30), (
        worker.log()[-3000:]
    )
    job.refresh_from_db()
    assert (job.status, job.done) == ("paused", 36)  # paid for, so stored; the job stays paused
    assert services.resume_job(job=job)
    assert _finished(job, timeout=90) and job.status == "completed"
    assert BatchRun.objects.filter(judge_job=job).count() == 1 and job.calls == 36


@pytest.mark.worker
@pytest.mark.slow
def test_the_budget_limits_what_is_submitted(study, make_sim_judge, simulator, batch_worker):
    from judging.batch.driver import estimate_cost, plan_lines
    from judging.runner import kind_of

    simbatch.store_for(simulator).delay_s = 0.3
    judge = make_sim_judge(knobs="seed=1", price_in_per_1k=Decimal("1"), price_out_per_1k=Decimal("0"))
    job = services.start_judge_job(
        study=study, judge=judge, condition_names=["order"], mode="batch", budget_usd=Decimal("1000")
    )  # set low below, once the rows exist
    kind = kind_of(job)
    lines = plan_lines(kind.requests(job, kind.load(job, list(kind.rows(job).values_list("pk", flat=True)))))
    budget = sum(estimate_cost(judge, line.request, batch=True) for line in lines[:10])
    JudgeJob.objects.filter(pk=job.pk).update(budget_usd=budget)
    worker = batch_worker()
    assert wait_until(lambda: BatchRun.objects.filter(judge_job=job, state="collected").exists(), timeout=30), (
        worker.log()[-3000:]
    )
    job.refresh_from_db()
    run = BatchRun.objects.get(judge_job=job)
    assert job.status == "budget_exhausted" and run.request_count == 10 and job.done == 10
    assert 0 < job.cost_usd <= budget and job.calls == 10 == simulator.stats.total_calls
    assert services.resume_job(job=job, budget_usd=Decimal("1000"))
    assert _finished(job) and (job.status, job.done) == ("completed", 36)


@pytest.mark.worker
@pytest.mark.slow
def test_an_endpoint_without_the_batch_api_falls_back_to_synchronous_calls(
    study, make_sim_judge, simulator, batch_worker
):
    simbatch.store_for(simulator).enabled = False
    judge = make_sim_judge(knobs="seed=1")
    worker = batch_worker()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    assert _finished(job), worker.log()[-3000:]
    run = BatchRun.objects.get(judge_job=job)
    assert (job.status, job.done) == ("completed", 36)
    assert run.state == "failed" and run.error.startswith("batch not created: 404")
    assert job.calls == 36 == simulator.stats.total_calls  # the refused batch counted no calls
    rows = _rows(job)
    sync_price = sum(judge.price(r.tokens_in, r.tokens_out) for r in rows)
    assert job.cost_usd == sum(r.cost_usd for r in rows)
    assert abs(job.cost_usd - sync_price) <= Decimal("0.0000005") * len(rows)  # the synchronous price


@pytest.mark.worker
@pytest.mark.slow
def test_a_generation_job_runs_through_the_batch_api(make_sim_judge, simulator, batch_worker):
    from annotations.importers.demo import seed_demo_study
    from annotations.models import Candidate, Response
    from judging.generate import prompts as gen_prompts
    from judging.generate.services import is_finalised, start_generation_job
    from judging.simulator.behaviour import answer_text

    simbatch.store_for(simulator).delay_s = 0.5
    study = seed_demo_study()
    model = make_sim_judge(name="newcomer", knobs="seed=9,answer_words=60", use_as_generator=True)
    worker = batch_worker()
    job = start_generation_job(study=study, generator=model, params={"max_tokens": 48}, mode="batch")
    assert wait_until(lambda: job.refresh_from_db() or (job.is_finished and is_finalised(job)), timeout=90), (
        worker.log()[-3000:]
    )
    run = BatchRun.objects.get(generation_job=job)
    assert (job.status, job.done, run.state, run.request_count) == ("completed", 12, "collected", 12)
    knobs = parse_knobs(model.model)
    responses = Response.objects.filter(candidate=Candidate.objects.get(study=study, key="newcomer"))
    assert responses.count() == 12
    for response in responses.select_related("instruction"):
        messages = gen_prompts.messages_for(response.instruction.text)
        assert response.text == answer_text(knobs, messages, max_tokens=48)
    rows = list(job.generations.all())
    assert job.calls == 12 == simulator.stats.total_calls
    sync_price = sum(model.price(r.tokens_in, r.tokens_out) for r in rows)
    assert job.cost_usd == sum(r.cost_usd for r in rows) > 0
    assert abs(job.cost_usd - sync_price / 2) <= Decimal("0.0000005") * len(rows)


# --- pieces: output parsing, the sweeper, the client's errors ---------------------------------


def test_output_lines_become_completions_and_everything_else_an_error_text():
    from judging.batch.driver import read_output

    def line(cid: str, status: int, body: dict) -> bytes:
        return json.dumps({"custom_id": cid, "response": {"status_code": status, "body": body}}).encode()

    ok = {
        "choices": [{"message": {"content": "System Star is better"}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }
    output = b"\n".join(
        [line("judge-1", 200, ok), line("judge-2", 200, {"choices": []}), line("generate-3", 200, ok), b"not json"]
    )
    errors = b"\n".join(
        [
            line("judge-4", 500, {}),
            line("judge-5", 429, {}),
            line("judge-6", 400, {}),
            json.dumps(
                {"custom_id": "judge-7", "response": None, "error": {"code": "batch_expired", "message": "expired"}}
            ).encode(),
        ]
    )
    answers, failures = read_output(output, errors, prefix="judge-")
    assert answers == {1: llm.Completion("System Star is better", 11, 3, 0)}
    assert failures == {
        2: "malformed chat completion",
        4: "500 server error",
        5: "429 rate limited",
        6: "400 batch request failed",
        7: "batch request failed: batch_expired",
    }


def test_the_sweeper_releases_rows_of_a_batch_never_created_and_restarts_lost_polls(study, make_sim_judge, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from judging import enqueue
    from judging.batch import tasks

    judge = make_sim_judge()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    JudgeJob.objects.filter(pk=job.pk).update(status="running", calls=36)
    old = timezone.now() - timedelta(hours=1)
    lost = BatchRun.objects.create(judge_job=job, state="preparing", request_count=36)
    BatchRun.objects.filter(pk=lost.pk).update(created_at=old)
    Judgment.objects.filter(job=job).update(batch=lost, attempts=1)
    quiet = BatchRun.objects.create(judge_job=job, state="submitted", provider_batch_id="b-1", last_polled_at=old)
    fresh = BatchRun.objects.create(
        judge_job=job, state="submitted", provider_batch_id="b-2", last_polled_at=timezone.now()
    )
    started: list[int] = []
    monkeypatch.setattr(enqueue, "batch_poll_chain", lambda pk, countdown=None: started.append(pk))

    assert tasks.sweep_batches() == 1 and started == [quiet.pk] != [fresh.pk]
    lost.refresh_from_db()
    job.refresh_from_db()
    assert lost.state == "failed" and "before the batch was created" in lost.error
    assert not Judgment.objects.filter(job=job, batch__isnull=False).exists()
    assert job.calls == 0 and not Judgment.objects.filter(job=job, attempts__gt=0).exists()


def test_the_client_checks_the_host_and_never_shows_the_key(simulator, settings):
    from judging.batch import client

    secret = "sk-live-NEVER-SHOWN-777"
    snap = llm.ModelSnapshot(
        id=1,
        kind="openai",
        baseline="",
        base_url=simulator.base_url + "/nowhere",
        model="sim:",
        generation={},
        timeout=5,
        max_concurrency=1,
        requests_per_minute=0,
        api_key=secret,
    )
    with pytest.raises(llm.PermanentError) as missing:
        client.upload(snap, b"{}\n", "x.jsonl")
    assert str(missing.value).startswith("404") and secret not in str(missing.value)
    settings.JUDGE_ALLOWED_HOSTS = ["public-https"]
    with pytest.raises(llm.PermanentError, match="^host not allowed: ") as refused:
        client.retrieve(snap, "batch-1")
    assert secret not in str(refused.value)
    assert simulator.stats.total_calls == 0


@pytest.mark.worker
@pytest.mark.slow
def test_run_judges_batch_waits_with_the_batch_state_in_the_progress_line(
    study, make_sim_judge, simulator, batch_worker, capsys
):
    from django.core.management import call_command

    simbatch.store_for(simulator).delay_s = 0.5
    make_sim_judge(name="sim-batch", knobs="seed=3")
    batch_worker()
    call_command("run_judges", "--study", "tiny", "--judge", "sim-batch", "--conditions", "order", "--batch", "--wait")
    out = capsys.readouterr().out
    job = JudgeJob.objects.get()
    assert "36 judgments queued through the Batch API for sim-batch" in out
    assert "36/36 done" in out and out.rstrip().endswith("| batches: 1 collected")
    assert (job.mode, job.status, job.calls) == ("batch", "completed", 36)
