"""Time `import_cobbler` on the full CoBBLEr data into a fresh PostgreSQL database.

Run as ``.venv/bin/python -m benchmarks.import_cobbler``. It creates the scratch
database ``cobbler_bench_import`` (dropping a leftover one), migrates it, times a
first import and a re-import (which must add no rows), writes
``benchmarks/results/import_cobbler.json`` and drops the database again.
The server is taken from BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import io
import json
import os
import platform
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "datasets" / "cobbler"
RESULTS = ROOT / "benchmarks" / "results" / "import_cobbler.json"
SCRATCH_DB = "cobbler_bench_import"
LIMIT_SECONDS = 60.0


def _admin(server: str, sql: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def _timed_import(call_command) -> tuple[float, str]:
    out = io.StringIO()
    started = time.perf_counter()
    call_command("import_cobbler", str(DATA), "--study", "cobbler", stdout=out)
    return time.perf_counter() - started, out.getvalue()


def _added(output: str) -> int:
    """Sum of the "(+N new)" figures the command printed."""
    return sum(int(line.split("(+")[1].split()[0]) for line in output.splitlines() if "(+" in line)


def main() -> int:
    server = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    _admin(server, f"DROP DATABASE IF EXISTS {SCRATCH_DB}")
    _admin(server, f"CREATE DATABASE {SCRATCH_DB}")
    os.environ["DATABASE_URL"] = f"{server}/{SCRATCH_DB}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cobbler_site.settings")
    os.environ.setdefault("DATA_DIR", str(ROOT / "var" / "bench"))
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        call_command("migrate", verbosity=0)
        first, first_out = _timed_import(call_command)
        second, second_out = _timed_import(call_command)
        connections.close_all()
    finally:
        _admin(server, f"DROP DATABASE IF EXISTS {SCRATCH_DB} WITH (FORCE)")
    counts = {
        line.split(": ")[0]: int(line.split(": ")[1].split()[0]) for line in first_out.splitlines() if "(+" in line
    }
    result = {
        "benchmark": "import_cobbler",
        "database": "postgresql",
        "first_import_seconds": round(first, 2),
        "reimport_seconds": round(second, 2),
        "limit_seconds": LIMIT_SECONDS,
        "rows": counts,
        "total_rows": sum(counts.values()),
        "reimport_added_rows": _added(second_out),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    ok = first < LIMIT_SECONDS and second < LIMIT_SECONDS and result["reimport_added_rows"] == 0
    print(
        f"import_cobbler on PostgreSQL: first {first:.1f}s, re-import {second:.1f}s for "
        f"{result['total_rows']} rows (limit {LIMIT_SECONDS:.0f}s): {'OK' if ok else 'TOO SLOW'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
