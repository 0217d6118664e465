"""Batch-mode throughput, end to end: rows -> JSONL upload -> provider -> output file -> rows.

Run (PostgreSQL + Redis, as in production; the database is migrated if needed):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/cobbler_bench REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python -m benchmarks.batch_throughput [--n 10000] [--delay-s 1] [--poll-s 0.5]

What it does:
1. Starts the simulator (`manage.py run_simulator`, answers without latency) whose batches
   complete `--delay-s` seconds after creation at the earliest (SIMULATOR_BATCH_DELAY_S).
2. Builds a throw-away study with about `--n` order judgments (as benchmarks.judge_throughput)
   and a simulator judge with a fresh seed (nothing cached).
3. Starts one real Celery worker (threads pool, BATCH_POLL_SECONDS = `--poll-s`) and runs the
   job in batch mode, timed from `start_judge_job` to COMPLETED.
Figures: `judgments_per_s` over the whole job; `submit_seconds` from the start to the last
batch created (rendering the prompts, writing and uploading the JSONL files); `collect_seconds`
summed over batches from the provider's completion being seen to the rows being stored
(downloading and parsing the output, storing the verdicts); the worker's CPU ms per judgment;
and the cost at the batch price against the same tokens at the synchronous price.
Results go to benchmarks/results/batch_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from decimal import Decimal

import django

from benchmarks.judge_throughput import (
    ROOT,
    _build_study,
    _cpu_seconds,
    _free_port,
    _start_procs,
    _stop,
    wait_listening,
)


def run(*, n: int, delay_s: float, poll_s: float) -> dict:
    from cobbler_site.celery import app
    from judging import services
    from judging.models import BatchRun, RegisteredModel

    port = _free_port()
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "SIMULATOR_BATCH_DELAY_S": str(delay_s),
        "BATCH_POLL_SECONDS": str(poll_s),
    }
    log = ROOT / "test-artifacts" / "bench-batch-throughput.log"
    log.parent.mkdir(exist_ok=True)
    sim = _start_procs([[sys.executable, "manage.py", "run_simulator", "--port", str(port)]], env, log)
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
        "4",
        "--loglevel",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    procs = _start_procs([worker_cmd], env, log)
    time.sleep(4)  # let the worker import Django and connect before the clock starts
    wait_listening(port)
    study = _build_study(n)
    judge = RegisteredModel.objects.create(
        name=f"bench-batch-{uuid.uuid4().hex[:8]}",
        kind="openai",
        base_url=f"http://127.0.0.1:{port}/v1",
        model=f"sim:seed={uuid.uuid4().int % 10**6}",
        max_concurrency=8,
        requests_per_minute=0,
        request_timeout=60,
        price_in_per_1k=Decimal("0.0005"),
        price_out_per_1k=Decimal("0.0015"),
    )
    cpu_before = sum(_cpu_seconds(p.pid) for p in procs)
    start = time.monotonic()
    started_at = time.time()
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    while not job.is_finished:
        time.sleep(0.2)
        job.refresh_from_db()
    elapsed = time.monotonic() - start
    cpu = sum(_cpu_seconds(p.pid) for p in procs) - cpu_before
    _stop(procs + sim)

    runs = list(BatchRun.objects.filter(judge_job=job).order_by("pk"))
    last_submit = max(r.submitted_at for r in runs).timestamp() - started_at
    rows = list(job.judgments.values_list("tokens_in", "tokens_out"))
    sync_cost = sum(judge.price(tin, tout) for tin, tout in rows)
    result = {
        "judgments": job.done,
        "failed": job.failed,
        "status": job.status,
        "calls": job.calls,
        "batches": len(runs),
        "lines_per_batch": [r.request_count for r in runs],
        "provider_delay_s": delay_s,
        "poll_s": poll_s,
        "seconds": round(elapsed, 2),
        "judgments_per_s": round(job.done / elapsed, 1),
        "submit_seconds": round(last_submit, 2),
        # From the poll that saw the provider done (collected_at - one poll interval at most)
        # to stored: an upper bound per batch, summed.
        "collect_seconds_upper": round(sum((r.collected_at - r.last_polled_at).total_seconds() for r in runs), 2),
        "worker_cpu_ms_per_judgment": round(1000 * cpu / max(job.done, 1), 3),
        "cost_usd": str(job.cost_usd),
        "same_tokens_sync_cost_usd": str(sync_cost.quantize(Decimal("0.000001"))),
        "cost_ratio": round(float(job.cost_usd / sync_cost), 4) if sync_cost else None,
    }
    study.delete()
    judge.delete()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--delay-s", type=float, default=1.0)
    parser.add_argument("--poll-s", type=float, default=0.5)
    args = parser.parse_args()
    if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL: the benchmark measures production mode")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    result = {
        "benchmark": "batch_throughput",
        "n_requested": args.n,
        "run": run(n=args.n, delay_s=args.delay_s, poll_s=args.poll_s),
    }
    print(json.dumps(result["run"]), flush=True)
    out = ROOT / "benchmarks" / "results" / "batch_throughput.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
