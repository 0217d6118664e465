"""The chunk runner in-process (the task is only an interface): baselines, parsers, errors."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judging import runner, services
from judging.models import Judgment, RegisteredModel
from judging.parsers import parse_paper
from judging.simulator.behaviour import decide, parse_knobs

ALL = ["order", "compassion", "bandwagon", "attentional", "selective", "plain"]


def run_all(job, rounds: int = 20) -> None:
    """What the worker does, in-process: run the chunk, then again for the rows a transient
    error deferred (retries never sleep inside a chunk), each once its not_before is due."""
    import time

    from django.utils import timezone

    for _ in range(rounds):
        pending = job.judgments.filter(status="pending")
        if not pending.exists():
            break
        due = max(filter(None, pending.values_list("not_before", flat=True)), default=None)
        if due is not None:
            time.sleep(max(0.0, (due - timezone.now()).total_seconds()))
        runner.run_chunk("judge", job.pk, list(pending.values_list("pk", flat=True)))
    job.refresh_from_db()


@pytest.fixture(autouse=True)
def _fast_backoff(settings):
    settings.JUDGING_BACKOFF_BASE = 0.01
    settings.JUDGING_BACKOFF_CAP = 0.2


@pytest.mark.parametrize(
    ("style", "transport"), [("plain", "openai"), ("verbose", "openai"), ("json", "http"), ("mixed", "http")]
)
def test_every_condition_parses_to_what_the_simulator_chose(study, make_sim_judge, style, transport):
    knobs = f"style={style},order_first=0.2,bandwagon=0.5,distractor=0.5,self=0.5,seed=4"
    judge = make_sim_judge(knobs=knobs, self_candidate_key="charlie", transport=transport)
    job = services.start_judge_job(study=study, judge=judge, condition_names=ALL)
    run_all(job)
    assert job.status == "completed" and job.done == job.total == 18 * 11
    sim = parse_knobs(judge.model)
    for j in job.judgments.select_related("pair"):
        messages = _messages(job, j)
        assert decide(sim, messages).slot == j.choice, (j.condition, j.raw_text)
        chosen = (
            j.slot1_response_id
            if j.choice == "first"
            else (j.pair.response_b_id if j.slot1_response_id == j.pair.response_a_id else j.pair.response_a_id)
        )
        assert j.chosen_response_id == chosen and j.valid


def _messages(job, j):
    from judging import conditions

    return conditions.render_for(
        version=job.prompt_version, condition=j.condition, pair=j.pair, slot1_response_id=j.slot1_response_id, cue=j.cue
    ).messages


def test_the_paper_parser_rejects_verbose_answers_the_robust_one_reads(study, make_sim_judge):
    judge = make_sim_judge(knobs="style=verbose")
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], parser="paper")
    run_all(job)
    assert job.done == 36 and job.invalid == 36
    j = job.judgments.first()
    assert parse_paper(j.raw_text, labels=("System Star", "System Square")) is None


@pytest.mark.parametrize(
    ("baseline", "check"),
    [
        ("first-slot", lambda j, a, b: j.choice == "first"),
        ("last-slot", lambda j, a, b: j.choice == "second"),
        ("longer", lambda j, a, b: len(j.chosen_response.text) >= len((b if j.chosen_response_id == a.pk else a).text)),
    ],
)
def test_baselines_run_through_the_same_pipeline(study, baseline, check):
    judge = services.ensure_baseline_judge(name=baseline)
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "compassion"])
    run_all(job)
    assert job.status == "completed" and job.done == job.total and job.invalid == 0
    assert job.calls == 0 and job.cost_usd == 0
    for j in job.judgments.select_related("pair__response_a", "pair__response_b", "chosen_response"):
        assert j.raw_text.endswith(" is better") and j.valid
        assert check(j, j.pair.response_a, j.pair.response_b)


def test_the_random_baseline_is_seeded_per_judgment(study):
    judge = services.ensure_baseline_judge(name="random")
    first = services.start_judge_job(study=study, judge=judge, condition_names=["order"], seed=9)
    second = services.start_judge_job(study=study, judge=judge, condition_names=["order"], seed=9)
    other = services.start_judge_job(study=study, judge=judge, condition_names=["order"], seed=10)
    for job in (first, second, other):
        run_all(job)

    def choices(job):
        return list(job.judgments.order_by("pair", "presentation").values_list("choice", flat=True))

    assert choices(first) == choices(second) != choices(other)
    # Seeded by pair id, which follows the test order: 72 draws of two seeds, and a band a
    # fair coin leaves with probability about 2e-5 (36 draws in 0.3-0.7 failed 2% of orders).
    draws = choices(first) + choices(other)
    assert 0.25 < draws.count("first") / len(draws) < 0.75


@pytest.mark.parametrize("transport", ["openai", "http"])
def test_timeouts_are_retried_until_an_answer_arrives(study, make_sim_judge, transport):
    judge = make_sim_judge(
        knobs="error_rate=0.3,errors=timeout,timeout_ms=1500",
        request_timeout=0.3,
        max_concurrency=16,
        transport=transport,
    )
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    run_all(job)
    assert job.done == job.total == 36 and job.failed == 0
    assert job.calls > job.total  # some calls timed out and were sent again
    assert sum(job.judgments.values_list("attempts", flat=True)) == job.calls


@pytest.mark.parametrize(("transport", "message"), [("openai", "404 NotFoundError"), ("http", "404 Not Found")])
def test_permanent_errors_fail_at_once_without_the_key(study, simulator, transport, message):
    judge = RegisteredModel.objects.create(
        name="wrong-path",
        kind="openai",
        base_url=simulator.base_url + "/nowhere",
        model="x",
        requests_per_minute=0,
        transport=transport,
    )
    judge.set_api_key("sk-live-TOPSECRET-42")
    judge.save()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    run_all(job)
    assert job.status == "completed" and job.failed == 36 and job.done == 0
    assert job.calls == 36  # not retried: a 404 will not get better
    errors = set(Judgment.objects.filter(job=job).values_list("error", flat=True))
    assert errors == {message}


def test_identical_prompts_are_answered_once_and_cached_across_jobs(study, make_sim_judge, simulator):
    judge = make_sim_judge(knobs="seed=2", price_in_per_1k=Decimal("0.01"))
    first = services.start_judge_job(study=study, judge=judge, condition_names=["order", "plain"])
    run_all(first)
    # plain repeats one order presentation per pair: 18 twins answered from the leader's call.
    assert first.total == 54 and first.calls == 36 and first.cached == 18
    assert max(simulator.stats.calls.values()) == 1
    second = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    run_all(second)
    assert second.done == 36 and second.cached == 36 and second.calls == 0 and second.cost_usd == 0
    assert sum(simulator.stats.calls.values()) == 36
    assert all(j.cached for j in second.judgments.all())


def test_a_done_judgment_is_never_claimed_again(study, make_sim_judge, simulator):
    judge = make_sim_judge()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    run_all(job)
    ids = list(job.judgments.values_list("pk", flat=True))
    assert runner.run_chunk(job_id=job.pk, judgment_ids=ids) == 0  # a redelivered message
    assert sum(simulator.stats.calls.values()) == 36


def test_the_sweeper_requeues_only_silent_running_jobs(study, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from celery import Celery
    from django.utils import timezone

    from judging.models import JudgeJob
    from judging.tasks import sweep_stale_judge_work
    from tests.conftest import purge_broker

    judge = services.ensure_baseline_judge(name="random")
    silent = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    busy = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    JudgeJob.objects.filter(pk=silent.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    paused = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    paused.pause()
    JudgeJob.objects.filter(pk=paused.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    sent = []
    from unittest import mock

    # Messages leave on commit; the test's transaction never commits, so run them as if it had.
    with (
        mock.patch.object(
            Celery, "send_task", autospec=True, side_effect=lambda app, name, args, **kw: sent.append(args[1:])
        ),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert sweep_stale_judge_work.apply().get() == 1  # 36 rows in one chunk of 50
    assert [job_id for job_id, _ in sent] == [silent.pk]
    assert set(sent[0][1]) == set(silent.judgments.values_list("pk", flat=True))
    assert {busy.pk, paused.pk}.isdisjoint({s[0] for s in sent})
    purge_broker()


@pytest.mark.parametrize("task_name", ["run_work_chunk", "run_judgment_chunk"])
def test_a_crashing_chunk_marks_the_job_failed(study, monkeypatch, task_name):
    from judging import tasks

    judge = services.ensure_baseline_judge(name="random")
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    monkeypatch.setattr(runner, "run_chunk", mock_crash)
    args = ("judge", job.pk, [1]) if task_name == "run_work_chunk" else (job.pk, [1])
    getattr(tasks, task_name).apply(args=args, throw=False)
    job.refresh_from_db()
    assert job.status == "failed" and job.error == "a chunk crashed: ZeroDivisionError"


def mock_crash(*args, **kwargs):
    return 1 / 0


def test_requests_counted_but_never_sent_are_uncounted(study, make_sim_judge):
    # A chunk counts all its requests before handing them out; a stop (pause, cancel,
    # budget) keeps some from going out, and those must leave no trace in the counts.
    from judging.runner import kind_of, store

    job = services.start_judge_job(study=study, judge=make_sim_judge(), condition_names=["order"])
    work = kind_of(job)
    rows = work.load(job, list(work.rows(job).values_list("pk", flat=True)[:5]))
    admitted, held, stop = store.admit(work, job, [(r, Decimal("0.01")) for r in work.requests(job, rows)])
    assert len(admitted) == 5 and not held and not stop
    store.unadmit(work, job, admitted[:3])
    job.refresh_from_db()
    assert job.calls == 2 == sum(work.rows(job).values_list("attempts", flat=True))
    assert sorted(work.rows(job).filter(in_flight_usd__gt=0).values_list("pk", flat=True)) == sorted(
        r.row.pk for r in admitted[3:]
    )
    assert [r.row.attempts for r in admitted] == [0, 0, 0, 1, 1]


def test_a_message_left_to_a_running_chunk_is_sent_again_when_the_chunk_leaves(
    study, make_sim_judge, monkeypatch, settings, django_capture_on_commit_callbacks
):
    """The race CI once hit: a job's message reaches a process while a chunk of the same job
    runs there, after that chunk's last look for rows. Left to the chunk, its rows must be
    re-sent when the chunk leaves, or they wait for the sweeper with the job unfinished."""
    from unittest import mock

    from celery import Celery

    from judging.runner import chunk

    settings.JUDGING_CHUNKS_PER_MODEL = 1
    job = services.start_judge_job(study=study, judge=make_sim_judge(), condition_names=["order"])
    ids = sorted(job.judgments.values_list("pk", flat=True))
    first, rest = ids[:10], ids[10:]
    left = []

    def holder_past_its_last_look(work, job, ids, model_id):
        left.append(runner.run_chunk("judge", job.pk, rest))
        return 0, False  # it stored nothing and saw nothing left to re-send

    monkeypatch.setattr(chunk, "_run_holding_slot", holder_past_its_last_look)
    sent = []
    with (
        mock.patch.object(
            Celery, "send_task", autospec=True, side_effect=lambda app, name, args, **kw: sent.append(args)
        ),
        django_capture_on_commit_callbacks(execute=True),
    ):
        runner.run_chunk("judge", job.pk, first)
    assert left == [0]
    # The job's pending rows go back: those of the left message among them (the stand-in
    # holder answered nothing, so its own rows are pending too).
    assert sorted(pk for _, job_id, chunk_ids in sent for pk in chunk_ids) == ids
    assert {job_id for _, job_id, _ in sent} == {job.pk}


def test_chunk_slots_leave_a_message_only_to_a_chunk_of_its_own_job():
    from judging.runner.limits import ChunkSlots

    slots = ChunkSlots()
    assert slots.take(7, 2, ("judge", 1)) == ChunkSlots.TAKEN
    assert slots.take(7, 2, ("judge", 1)) == ChunkSlots.TAKEN
    assert slots.take(7, 2, ("judge", 2)) == ChunkSlots.FULL
    assert slots.take(7, 2, ("judge", 1)) == ChunkSlots.LEFT
    assert slots.take(8, 1, ("judge", 3)) == ChunkSlots.TAKEN  # another model's cap
    assert slots.give_back(7, ("judge", 1)) is False  # another chunk of the job still runs
    assert slots.give_back(7, ("judge", 1)) is True  # the last one re-sends what was left
    assert slots.take(7, 2, ("judge", 1)) == ChunkSlots.TAKEN
    assert slots.give_back(7, ("judge", 1)) is False  # told once, never twice
    assert slots.give_back(8, ("judge", 3)) is False  # nothing was left to it


def test_a_chunks_turn_ends_only_when_another_job_of_its_model_waits(monkeypatch):
    """A turn cut short re-sends the job's rest as messages, which costs the calls CPU: so a
    chunk keeps its slot past CONTINUE_SECONDS until another job of its model is refused one."""
    import time

    from judging.runner import chunk, limits

    slots = limits.ChunkSlots()
    monkeypatch.setattr(limits, "chunk_slots", slots)
    monkeypatch.setattr(chunk, "CONTINUE_SECONDS", 0.0)
    started = time.monotonic()
    assert slots.take(7, 1, ("judge", 1)) == slots.TAKEN
    assert slots.take(7, 1, ("judge", 1)) == slots.LEFT  # its own job's message waits for nobody
    assert slots.take(8, 1, ("judge", 2)) == slots.TAKEN
    assert slots.take(8, 1, ("judge", 3)) == slots.FULL  # another model's job
    assert not chunk._turn_over(7, started)
    assert slots.take(7, 1, ("judge", 4)) == slots.FULL
    assert chunk._turn_over(7, started)
    assert not chunk._turn_over(7, time.monotonic() + 1.0)  # refused before that chunk began
    monkeypatch.setattr(chunk, "CONTINUE_MAX_SECONDS", 0.0)
    assert chunk._turn_over(9, started)  # past the maximum, contended or not


def test_a_chunk_that_loses_the_race_for_its_jobs_next_rows_looks_again(study, make_sim_judge, monkeypatch, settings):
    """Two chunks of a job look for its next rows alike; the one that finds them just taken
    must look again, not end (an end re-sends the job's whole rest as messages)."""
    from judging.runner import claims

    settings.JUDGING_CHUNK_SIZE = 10  # so the job (36 rows) outlasts the rows taken from it
    job = services.start_judge_job(study=study, judge=make_sim_judge(), condition_names=["order"])
    ids = sorted(job.judgments.values_list("pk", flat=True))
    real_claim, looks, taken = claims.claim, [], []

    def another_chunk_got_there_first(work, job, row_ids, token):
        looks.append(row_ids)
        if len(looks) == 2:  # the chunk's first look for more rows
            taken.extend(row_ids[: real_claim(work, job, row_ids, "another-chunk")])
        return real_claim(work, job, row_ids, token)

    monkeypatch.setattr(claims, "claim", another_chunk_got_there_first)
    stored = runner.run_chunk("judge", job.pk, ids[:10])
    assert taken and len(looks) > 2
    assert stored == len(ids) - len(taken)
    assert set(job.judgments.filter(status="pending").values_list("pk", flat=True)) == set(taken)


def test_a_chunk_sends_back_exactly_the_rows_it_deferred(study, make_sim_judge, monkeypatch, settings):
    """Rows a transient error deferred go back on the queue with a countdown, as one message of
    just those rows: the chunk keeps their ids (twins of a failed leader too), not every row it
    touched in its turn."""
    from judging.runner import dispatch

    settings.JUDGING_BACKOFF_BASE = settings.JUDGING_BACKOFF_CAP = 30.0  # none is due again here
    judge = make_sim_judge(knobs="error_rate=0.4,errors=500,seed=3")
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "plain"])
    sent: list[tuple[list[list[int]], float | None]] = []
    monkeypatch.setattr(dispatch, "send", lambda kind, job_id, chunks, countdown=None: sent.append((chunks, countdown)))
    runner.run_chunk("judge", job.pk, list(job.judgments.values_list("pk", flat=True)))
    deferred = set(job.judgments.filter(status="pending", not_before__isnull=False).values_list("pk", flat=True))
    assert 0 < len(deferred) < job.judgments.count()
    [(chunks, countdown)] = sent
    assert set(chunks[0]) == deferred and len(chunks) == 1 and countdown is not None and countdown > 10


def test_every_client_of_a_process_shares_one_tls_context():
    # Building a verifying context loads the CA bundle (about 50 ms under the clients' lock):
    # once per process, whichever transport or model asks, and the Batch API client too.
    from celery.signals import worker_ready

    from judging import llm
    from judging.batch import client as batch_client

    def snapshot(pk: int, transport: str) -> llm.ModelSnapshot:
        return llm.ModelSnapshot(
            id=pk,
            kind="openai",
            baseline="",
            base_url=f"https://judge-{pk}.example/v1",
            model="m",
            generation={},
            timeout=5 + pk,
            max_concurrency=2,
            requests_per_minute=0,
            api_key=f"k{pk}",
            transport=transport,
        )

    llm.tls_context.cache_clear()
    worker_ready.send(sender=None)  # what a worker does when it is up
    built = llm.tls_context()
    assert llm.tls_context.cache_info().hits >= 1  # the signal had built it
    pools = [
        llm._http_client(snapshot(1, "http"))._transport._pool,
        llm._http_client(snapshot(2, "http"))._transport._pool,
        llm._client(snapshot(3, "openai"))._client._transport._pool,
        batch_client._client(snapshot(4, "openai"))._client._transport._pool,
    ]
    assert all(pool._ssl_context is built for pool in pools)
    assert built.verify_mode.name == "CERT_REQUIRED" and built.check_hostname
