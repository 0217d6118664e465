"""Time the whole CoBBLEr report from the database (target: under 2 s per profile).

Run as ``.venv/bin/python -m benchmarks.analysis_paper_report``. It imports the CoBBLEr
data into a scratch SQLite database under ``var/bench-analysis/`` (or the database of
``DATABASE_URL`` if set: use a scratch one), builds the report once untimed, then times ``build_report`` five times for the
``cobbler-paper`` profile (and for ``default``): best and median, each section once, and writes
``benchmarks/results/analysis_paper_report.json``. The import itself is not timed here
(see benchmarks/import_cobbler.py); on PostgreSQL the tables are analysed after it
(``analyze_after_import``), as autovacuum does in a deployment.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import time
from pathlib import Path

from benchmarks.machine import speed_probe

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "datasets" / "cobbler"
RESULTS = ROOT / "benchmarks" / "results" / "analysis_paper_report.json"
SCRATCH = ROOT / "var" / "bench-analysis"
LIMIT_SECONDS = 2.0
RUNS = 5


def analyze_after_import() -> None:
    """Give PostgreSQL's planner the table statistics a deployment has after a bulk import.

    A deployment's autovacuum analyses the tables an import has just filled (within a minute);
    a benchmark that reports right after the import, or a server with autovacuum off (as on
    the benchmark machine), would otherwise plan every join for empty tables: the human votes
    query then takes ~1 s instead of ~0.05 s.
    """
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def main() -> int:
    if "DATABASE_URL" not in os.environ:
        shutil.rmtree(SCRATCH, ignore_errors=True)
        os.environ["DATA_DIR"] = str(SCRATCH)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cobbler_site.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from analysis.profiles import get_profile
    from analysis.report import build_report
    from analysis.sections import agreement, bias, length_control, paper
    from annotations.models import Study

    call_command("migrate", verbosity=0)
    if not Study.objects.filter(slug="cobbler-bench").exists():
        call_command("import_cobbler", str(DATA), "--study", "cobbler-bench", verbosity=0)
    analyze_after_import()
    study = Study.objects.get(slug="cobbler-bench")
    # One untimed build first: a deployed worker has imported the sections (scipy and all) long
    # before it builds a report. Then RUNS timed builds per profile; the best is the figure (this
    # VM's speed varies by a fifth from minute to minute), and the median is reported beside it.
    build_report(study=study, profile="cobbler-paper")
    speed_before = speed_probe()
    timed: dict[str, list[float]] = {}
    for profile_name in ("cobbler-paper", "default"):
        for _ in range(RUNS):
            started = time.perf_counter()
            built = build_report(study=study, profile=profile_name)
            timed.setdefault(profile_name, []).append(time.perf_counter() - started)
            if profile_name == "cobbler-paper":
                report = built
    totals, default_totals = timed["cobbler-paper"], timed["default"]
    speed_after = speed_probe()
    sections: dict[str, dict[str, float]] = {}
    for profile_name in ("cobbler-paper", "default"):
        profile = get_profile(profile_name)
        for name, module in (
            ("bias", bias),
            ("agreement", agreement),
            ("length_control", length_control),
            ("paper", paper),
        ):
            if name == "paper" and profile_name != "cobbler-paper":
                continue  # build_report fills the paper section only under cobbler-paper
            started = time.perf_counter()
            module.build(study=study, profile=profile)
            sections.setdefault(profile_name, {})[name] = round(time.perf_counter() - started, 3)
    result = {
        "benchmark": "cobbler-paper report from the database",
        "database": connection.vendor,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "total_s": [round(t, 3) for t in totals],
        "best_s": round(min(totals), 3),
        "median_s": round(statistics.median(totals), 3),
        "default_total_s": [round(t, 3) for t in default_totals],
        "default_best_s": round(min(default_totals), 3),
        "default_median_s": round(statistics.median(default_totals), 3),
        "sections_s": sections,
        # The machine's pure-Python speed before and after the timed builds (seconds for 10^7
        # additions): on a VM whose speed drifts, it says how fast the machine was meanwhile.
        "speed_probe_s": [speed_before, speed_after],
        "target_s": LIMIT_SECONDS,
        "rows": {"bias": len(report["bias"]), "agreement": len(report["agreement"])},
        "rbo_human_machine_v1": report["paper"].get("rbo_human_machine_v1"),
        "passed": min(totals) < LIMIT_SECONDS and min(default_totals) < LIMIT_SECONDS,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if "DATABASE_URL" not in os.environ:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
