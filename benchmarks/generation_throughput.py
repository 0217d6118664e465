"""Generation-job throughput, end to end: rows -> model -> answers -> candidate + pairs.

Run (PostgreSQL + Redis, as in production; the database is migrated if needed):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/cobbler_bench REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python -m benchmarks.generation_throughput [--n 2000] [--latency-ms 200] \
        [--concurrency 32] [--delay-s 1]

What it does:
1. Starts the simulator (`manage.py run_simulator`) with `latency_ms` per synchronous answer and
   an endpoint that serves at most `--concurrency` requests at once, so the synchronous ideal
   is concurrency / latency answers per second (32 / 0.2 s = 160/s). Its batches complete
   `--delay-s` after creation at the earliest.
2. Builds a throw-away study of `--n` instructions, each answered by 4 existing candidates
   (a fresh one per job).
3. Starts one real Celery worker (threads pool) and runs two generation jobs of a simulated
   model with `max_concurrency` = concurrency (fresh seeds, nothing cached): one synchronous,
   one through the Batch API. Each is timed from `start_generation_job` until the candidate is
   written and the pairs extended (4 new pairs per instruction).
Figures: `answers_per_s` over the whole job (pairs included), the share of the synchronous
ideal, the worker's CPU ms per answer, and the batch job's cost against the same tokens at the
synchronous price. Results go to benchmarks/results/generation_throughput.json.
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

from benchmarks.judge_throughput import ROOT, _cpu_seconds, _free_port, _start_procs, _stop, wait_listening

OTHER_CANDIDATES = 4


def _build_study(n: int):
    from annotations.models import Candidate, Instruction, Response, Study

    study = Study.objects.create(slug=f"bench-gen-{uuid.uuid4().hex[:8]}", name="Generation benchmark")
    cands = Candidate.objects.bulk_create(
        [Candidate(study=study, key=f"m{i}", position=i) for i in range(OTHER_CANDIDATES)]
    )
    instructions = Instruction.objects.bulk_create(
        [Instruction(study=study, index=i, text=f"Explain idea number {i} in a few sentences.") for i in range(n)]
    )
    Response.objects.bulk_create(
        [Response(instruction=ins, candidate=c, text=f"{c.key} on {ins.index}.") for ins in instructions for c in cands]
    )
    return study


def _run_job(*, study, model, mode: str, procs: list) -> dict:
    from judging.generate.services import is_finalised, start_generation_job

    cpu_before = sum(_cpu_seconds(p.pid) for p in procs)
    start = time.monotonic()
    job = start_generation_job(
        study=study, generator=model, params={"max_tokens": 64}, mode=mode, candidate_key=f"{model.name}-{mode}"
    )
    while not (job.is_finished and (job.status != "completed" or is_finalised(job))):
        time.sleep(0.2)
        job.refresh_from_db()
    elapsed = time.monotonic() - start
    cpu = sum(_cpu_seconds(p.pid) for p in procs) - cpu_before
    rows = list(job.generations.values_list("tokens_in", "tokens_out"))
    sync_cost = sum(model.price(tin, tout) for tin, tout in rows)
    return {
        "mode": mode,
        "status": job.status,
        "answers": job.done,
        "failed": job.failed,
        "calls": job.calls,
        "pairs_created": job.pairs_created,
        "seconds": round(elapsed, 2),
        "answers_per_s": round(job.done / elapsed, 1),
        "worker_cpu_ms_per_answer": round(1000 * cpu / max(job.done, 1), 3),
        "cost_usd": str(job.cost_usd),
        "cost_ratio_to_sync_price": round(float(job.cost_usd / sync_cost), 4) if sync_cost else None,
    }


def run(*, n: int, latency_ms: int, concurrency: int, delay_s: float) -> dict:
    from cobbler_site.celery import app
    from judging.models import RegisteredModel

    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "SIMULATOR_BATCH_DELAY_S": str(delay_s), "BATCH_POLL_SECONDS": "0.5"}
    log = ROOT / "test-artifacts" / "bench-generation-throughput.log"
    log.parent.mkdir(exist_ok=True)
    sim = _start_procs(
        [[sys.executable, "manage.py", "run_simulator", "--port", str(port), "--max-concurrency", str(concurrency)]],
        env,
        log,
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
        "llm,default",
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
    runs = []
    for mode in ("sync", "batch"):
        study = _build_study(n)  # one study per mode: each job pairs with the same 4 candidates
        model = RegisteredModel.objects.create(
            name=f"bench-gen-{uuid.uuid4().hex[:8]}",
            kind="openai",
            base_url=f"http://127.0.0.1:{port}/v1",
            model=f"sim:seed={uuid.uuid4().int % 10**6},latency_ms={latency_ms},answer_words=60",
            max_concurrency=concurrency,
            requests_per_minute=0,
            request_timeout=60,
            transport="http",
            price_in_per_1k=Decimal("0.0005"),
            price_out_per_1k=Decimal("0.0015"),
        )
        runs.append(_run_job(study=study, model=model, mode=mode, procs=procs))
        study.delete()
    _stop(procs + sim)
    ideal = concurrency / (latency_ms / 1000)
    runs[0]["share_of_ideal"] = round(runs[0]["answers_per_s"] / ideal, 3)
    return {"ideal_sync_answers_per_s": ideal, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay-s", type=float, default=1.0)
    args = parser.parse_args()
    if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        sys.exit("set DATABASE_URL (PostgreSQL) and REDIS_URL: the benchmark measures production mode")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    result = {
        "benchmark": "generation_throughput",
        "n_instructions": args.n,
        "latency_ms": args.latency_ms,
        "concurrency": args.concurrency,
        "provider_delay_s": args.delay_s,
        **run(n=args.n, latency_ms=args.latency_ms, concurrency=args.concurrency, delay_s=args.delay_s),
    }
    print(json.dumps(result), flush=True)
    out = ROOT / "benchmarks" / "results" / "generation_throughput.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
