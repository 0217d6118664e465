"""Run every benchmark in turn on PostgreSQL + Redis (`make bench`); results in benchmarks/results/.

Each benchmark is its own module with its own docstring; this only sets up scratch
databases and runs them one after another, so they never compete for the two cores.
Needs PostgreSQL at BENCH_PG (default postgres://postgres@127.0.0.1:5432) and Redis at
BENCH_REDIS (default redis://127.0.0.1:6379/11); the ../shared CoBBLEr data for the import
and paper-report benchmarks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psycopg

PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/11")

# (module, arguments, scratch database or None)
BENCHMARKS = (
    ("benchmarks.import_cobbler", [], None),
    ("benchmarks.annotation_load", [], None),
    ("benchmarks.annotation_load", ["--think-ms", "3000"], None),
    ("benchmarks.judge_throughput", ["--scaling"], "cobbler_bench_judge"),
    ("benchmarks.rate_limit_sharing", [], "cobbler_bench_rate_limits"),
    ("benchmarks.batch_throughput", [], "cobbler_bench_batch"),
    ("benchmarks.generation_throughput", [], "cobbler_bench_generation"),
    ("benchmarks.analysis_paper_report", [], "cobbler_bench_paper"),
    ("benchmarks.report_full", [], "cobbler_bench_report"),
    ("benchmarks.analysis_bias_scale", [], None),
    ("benchmarks.parser_accuracy", [], None),
)


def _fresh_database(name: str) -> str:
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return f"{PG}/{name}"


def main() -> int:
    failures = 0
    for module, args, database in BENCHMARKS:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        if database:
            env["DATABASE_URL"] = _fresh_database(database)
            env["REDIS_URL"] = REDIS
        print(f"== {module} {' '.join(args)}", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", module, *args], env=env)
        print(f"== {module}: exit {result.returncode} in {time.perf_counter() - started:.0f} s", flush=True)
        failures += result.returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
