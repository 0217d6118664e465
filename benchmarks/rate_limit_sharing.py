"""Shared rate limits: two worker processes, one model limited to 600 requests a minute.

Run (PostgreSQL + Redis, as in production; the database is migrated if needed):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/cobbler_bench REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python -m benchmarks.rate_limit_sharing [--rpm 600] [--seconds 60] [--workers 2]

What it does:
1. Starts the simulator (`manage.py run_simulator --knobs rpm=600`): it answers at most 600
   requests a minute for the model (a token bucket holding one second's worth) and 429 with
   Retry-After beyond that, as a provider does. Answers take `--latency-ms`.
2. Registers a simulator model with requests_per_minute = the same limit and a max_concurrency
   per process far above what the limit needs (so only the limit can slow it down), and a study
   with about rpm/60 x seconds order judgments.
3. Starts `--workers` real Celery worker processes and runs the job, sampling the simulator's
   counters every 0.5 s.
Figures, over the window from 10 s after the start to the last sample before the job finished:
`limit_used` = answers per second / (rpm / 60) (target >= 0.95) and `rate_limited_fraction` =
429s / requests received (target < 0.01). Results go to benchmarks/results/rate_limit_sharing.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
import uuid
from decimal import Decimal

import django

from benchmarks.judge_throughput import ROOT, _build_study, _free_port, _start_procs, _stop

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cobbler_site.settings")
WARMUP_SECONDS = 10.0


def _stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/stats", timeout=5) as reply:
        data = json.load(reply)
    return {
        "ok": data["statuses"].get("200", 0),
        "limited": data.get("rate_limited", 0),
        "received": data["total_calls"],
    }


def run(*, rpm: int, seconds: int, workers: int, latency_ms: int) -> dict:
    from cobbler_site.celery import app

    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    log = ROOT / "test-artifacts" / "bench-rate-limit-sharing.log"
    log.parent.mkdir(exist_ok=True)
    sim = _start_procs(
        [[sys.executable, "manage.py", "run_simulator", "--port", str(port), "--knobs", f"rpm={rpm}"]], env, log
    )
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("llm")
    worker_cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "cobbler_site",
        "worker",
        "-Q",
        "llm",
        "--pool",
        "threads",
        "--concurrency",
        "6",
        "--loglevel",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    procs = _start_procs([worker_cmd] * workers, env, log)
    result = _measure(port, rpm=rpm, seconds=seconds, workers=workers, latency_ms=latency_ms)
    _stop(procs + sim)
    return result


def _measure(port: int, *, rpm: int, seconds: int, workers: int, latency_ms: int) -> dict:
    from judging import services
    from judging.models import RegisteredModel

    time.sleep(4)  # let the workers import Django and connect before the clock starts
    for _ in range(60):  # and the simulator listen (a loaded machine starts it slowly)
        try:
            _stats(port)
            break
        except OSError:
            time.sleep(0.5)
    study = _build_study(rpm // 60 * seconds)
    judge = RegisteredModel.objects.create(
        name=f"bench-rl-{uuid.uuid4().hex[:8]}",
        kind="openai",
        base_url=f"http://127.0.0.1:{port}/v1",
        model=f"sim:latency_ms={latency_ms},seed={uuid.uuid4().int % 10**6}",
        max_concurrency=16,
        requests_per_minute=rpm,
        request_timeout=30,
        transport="http",
        price_in_per_1k=Decimal("0.0005"),
        price_out_per_1k=Decimal("0.0015"),
    )
    before = _stats(port)
    start = time.monotonic()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    samples = []
    while not job.is_finished and time.monotonic() - start < seconds * 4:
        time.sleep(0.5)
        samples.append((time.monotonic() - start, _stats(port)))
        job.refresh_from_db()
    elapsed = time.monotonic() - start
    window = [s for s in samples if s[0] >= WARMUP_SECONDS][:-1] or samples
    (t0, first), (t1, last) = window[0], window[-1]
    answered = last["ok"] - first["ok"]
    received = last["received"] - first["received"]
    limited = last["limited"] - first["limited"]
    limit_per_s = rpm / 60
    total = samples[-1][1] if samples else before
    return {
        "rpm": rpm,
        "workers": workers,
        "latency_ms": latency_ms,
        "judgments": job.done,
        "status": job.status,
        "seconds": round(elapsed, 2),
        "job_calls": job.calls,
        "simulator_received": total["received"] - before["received"],
        "window_seconds": round(t1 - t0, 2),
        "answers_per_s": round(answered / max(t1 - t0, 1e-3), 2),
        "limit_per_s": limit_per_s,
        "limit_used": round(answered / max(t1 - t0, 1e-3) / limit_per_s, 3),
        "rate_limited_fraction": round(limited / max(received, 1), 4),
        "rate_limited_total": total["limited"] - before["limited"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--seconds", type=int, default=60, help="about how long the job takes at the limit")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency-ms", type=int, default=50)
    args = parser.parse_args()
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    result = {
        "benchmark": "rate_limit_sharing",
        **run(rpm=args.rpm, seconds=args.seconds, workers=args.workers, latency_ms=args.latency_ms),
    }
    result["targets"] = {"limit_used": ">= 0.95", "rate_limited_fraction": "< 0.01"}
    print(json.dumps(result), flush=True)
    out = ROOT / "benchmarks" / "results" / "rate_limit_sharing.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
