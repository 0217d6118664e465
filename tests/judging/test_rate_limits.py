"""Rate limits: the simulator enforces rpm/tpm with 429 + Retry-After; our token bucket is
shared (Redis, or a lock file in embedded mode); concurrency adapts to 429s (AIMD)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid

import httpx2
import pytest

from judging import services
from judging.runner.limits import AdaptiveConcurrency, SharedBucket
from judging.simulator.behaviour import parse_knobs
from tests.conftest import PROJECT_ROOT

PROMPT = [{"role": "user", "content": "Which is better?\n```\nSystem Star: a\nSystem Square: bb\n```\n"}]


def _post(base_url: str, model: str) -> httpx2.Response:
    return httpx2.post(f"{base_url}/chat/completions", json={"model": model, "messages": PROMPT}, timeout=5)


def test_the_simulator_answers_429_with_retry_after_beyond_its_rpm(simulator):
    model = f"sim:rpm=60,seed={uuid.uuid4().int % 1000}"  # one a second, a bucket of one
    with httpx2.Client(timeout=5) as client:
        replies = [
            client.post(f"{simulator.base_url}/chat/completions", json={"model": model, "messages": PROMPT})
            for _ in range(4)
        ]
    assert replies[0].status_code == 200
    limited = [r for r in replies if r.status_code == 429]
    assert limited and all(0 < float(r.headers["retry-after"]) <= 1.0 for r in limited)
    time.sleep(float(limited[-1].headers["retry-after"]))  # stays: waiting exactly as told is the test
    assert _post(simulator.base_url, model).status_code == 200  # Retry-After told the truth
    assert simulator.stats.rate_limited == len(limited)
    assert _post(simulator.base_url, "sim:seed=9").status_code == 200  # other models are not limited


def test_the_simulator_limits_tokens_per_minute(simulator):
    model = "sim:tpm=600"  # 10 tokens a second; one call here uses ~20
    assert _post(simulator.base_url, model).status_code == 200
    reply = _post(simulator.base_url, model)
    assert reply.status_code == 429 and float(reply.headers["retry-after"]) > 0.5


def test_bad_limits_are_refused():
    with pytest.raises(ValueError, match="rpm and tpm"):
        parse_knobs("sim:rpm=-1")


def _take(bucket: SharedBucket, n: int, threads: int) -> None:
    # Several threads per holder, like a model's HTTP threads: the bucket's queue stays deep,
    # so one late sleeper (a loaded machine) does not waste the slots behind it.
    def run() -> None:
        for _ in range(n):
            bucket.acquire()

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


@pytest.mark.parametrize("embedded", [False, True])
def test_the_bucket_is_shared_by_every_holder_of_the_key(settings, tmp_path, embedded):
    """Two buckets (as in two processes) on one key: together they get the rate, not twice it."""
    if embedded:
        settings.REDIS_URL, settings.DATA_DIR = "", tmp_path
    key = f"test:{uuid.uuid4().hex}"
    buckets = [SharedBucket(key, 600), SharedBucket(key, 600)]  # 10/s, evenly spaced
    start = time.monotonic()
    holders = [threading.Thread(target=_take, args=(b, 5, 3)) for b in buckets]
    for t in holders:
        t.start()
    for t in holders:
        t.join()
    took = time.monotonic() - start
    # 30 units at 10/s, the first at once: 2.9 s; each bucket alone would take 1.4 s. Only the
    # lower bound is the limit; an upper one would measure the machine's load, not the bucket.
    assert took >= 2.6


def test_the_bucket_is_shared_across_processes():
    """Two real processes through Redis, 20 units each at 20/s: together 40 units, ~2 s; each
    alone would take ~1 s. Both wait for a shared go time, so their spans overlap."""
    key = f"test:{uuid.uuid4().hex}"
    go = time.time() + 10  # after both have imported Django
    code = (
        "import django, os, time; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'tests.settings');"
        "django.setup(); from judging.runner.limits import SharedBucket;"
        "from tests.judging.test_rate_limits import _take;"
        f"b = SharedBucket('{key}', 1200); time.sleep(max(0, {go} - time.time())); s = time.time();"
        "_take(b, 5, 4); print(s, time.time())"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=PROJECT_ROOT, stdout=subprocess.PIPE) for _ in range(2)]
    spans = [tuple(map(float, p.communicate(timeout=90)[0].split()[-2:])) for p in procs]
    (s1, e1), (s2, e2) = spans
    assert s1 < e2 and s2 < e1  # they did run at the same time
    assert max(e1, e2) - min(s1, s2) >= 1.8  # 40 units at 20/s: the limit held across processes


def test_concurrency_halves_on_429_and_grows_back_slowly():
    limit = AdaptiveConcurrency(8)
    assert limit.acquire()
    limit.release(rate_limited=True)
    assert limit.limit == 4
    assert limit.acquire()
    limit.release(rate_limited=True)  # the same overload: one cut per second
    assert limit.limit == 4
    for _ in range(4):  # one more slot per window of ~limit successes
        limit.acquire()
        limit.release()
    assert 4.8 < limit.limit < 5.2
    limit.acquire()
    limit.release(rate_limited=True, retry_after=0.5)
    start = time.monotonic()
    assert limit.acquire()  # Retry-After holds every new call
    assert time.monotonic() - start >= 0.45


def test_a_job_on_a_limited_endpoint_finishes_with_every_429_counted(study, make_sim_judge, simulator, settings):
    """The simulator allows 600/min; our model is registered with the same limit, so the shared
    bucket keeps 429s rare, and any that come are retried after their Retry-After."""
    from tests.judging.test_runner import run_all

    settings.JUDGING_BACKOFF_BASE, settings.JUDGING_BACKOFF_CAP = 0.01, 1.0
    judge = make_sim_judge(knobs=f"rpm=600,seed={uuid.uuid4().int % 1000}", requests_per_minute=600, max_concurrency=8)
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    start = time.monotonic()
    run_all(job, rounds=50)
    took = time.monotonic() - start
    assert job.status == "completed" and job.done == 36
    assert job.calls == simulator.stats.total_calls == 36 + simulator.stats.rate_limited
    assert simulator.stats.rate_limited <= 2
    assert took >= 35 / 10 * 0.9  # 10/s, evenly spaced: the limit held
