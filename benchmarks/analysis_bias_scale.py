"""Time the bias table over synthetic judgments at 10^4, 10^5 and 10^6 calls (no database).

Run as ``.venv/bin/python -m benchmarks.analysis_bias_scale``. Targets: 10^6 judgments in
under 30 s with peak memory under 2 GB. The frame has the columns of
``analysis.loaders.judgments_frame``: 20 judges, conditions order / bandwagon / attentional,
both presentations of every pair, 3% invalid answers, a first-slot tilt. The timed work is
the whole table: counts under the profile, the seeded random judge on the same pairs,
rates, Wilson intervals, z tests and the Holm correction. Peak memory is the process's
maximum resident set size (``resource.getrusage``), read after each size; sizes run in
increasing order, so the last reading is the peak of the largest run.
Writes ``benchmarks/results/analysis_bias_scale.json``.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "analysis_bias_scale.json"
SIZES = (10_000, 100_000, 1_000_000)
LIMIT_SECONDS, LIMIT_BYTES = 30.0, 2 * 1024**3
KEYS = [f"m{i:02d}" for i in range(15)]


def synthetic_judgments(n: int, *, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pairs = n // 2
    judge = rng.integers(0, 20, pairs)
    condition = np.array(["order", "bandwagon", "attentional"])[rng.integers(0, 3, pairs)]
    a = rng.integers(0, 14, pairs)
    b = a + 1 + rng.integers(0, 14 - a)
    base = pd.DataFrame(
        {
            "judge": pd.Categorical([f"judge-{j}" for j in range(20)])[judge],
            "self_key": np.where(judge < 15, np.array(KEYS)[np.minimum(judge, 14)], ""),
            "job": 1,
            "instruction": rng.integers(0, 50, pairs),
            "pair": np.arange(pairs),
            "cand_a": np.array(KEYS)[a],
            "cand_b": np.array(KEYS)[b],
            "len_a": rng.integers(20, 800, pairs),
            "len_b": rng.integers(20, 800, pairs),
            "condition": condition,
            "random_arrangement": rng.random(pairs) < 0.5,
        }
    )
    frames = []
    for pres in (1, 2):
        f = base.assign(presentation=pres)
        order_like = f["condition"] == "order"
        f["slot1_is_a"] = np.where(order_like, pres == 1, f["random_arrangement"])
        f["cue_slot"] = np.where(order_like, None, "first" if pres == 1 else "second")
        first = rng.random(pairs) < 0.6  # a first-slot tilt
        f["valid"] = rng.random(pairs) > 0.03
        f["choice"] = np.where(f["valid"], np.where(first, "first", "second"), "")
        f["chosen_is_a"] = f["valid"] & (first == f["slot1_is_a"])
        frames.append(f.drop(columns="random_arrangement"))
    return pd.concat(frames, ignore_index=True)


def main() -> int:
    from analysis.metrics.bias_rows import finish_rows
    from analysis.profiles import get_profile
    from analysis.sections.bias import judge_rows

    runs = []
    for profile_name in ("cobbler-paper",):
        profile = get_profile(profile_name)
        for n in SIZES:
            frame = synthetic_judgments(n)
            started = time.perf_counter()
            observed, random = judge_rows(frame, profile=profile)
            rows = finish_rows(observed, random, correction=profile.correction)
            elapsed = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
            runs.append(
                {
                    "profile": profile_name,
                    "judgments": len(frame),
                    "seconds": round(elapsed, 3),
                    "rows": len(rows),
                    "peak_rss_bytes": peak,
                }
            )
            print(runs[-1], flush=True)
    largest = runs[-1]
    result = {
        "benchmark": "bias table over synthetic judgments",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "runs": runs,
        "target_s": LIMIT_SECONDS,
        "target_peak_bytes": LIMIT_BYTES,
        "passed": largest["seconds"] < LIMIT_SECONDS and largest["peak_rss_bytes"] < LIMIT_BYTES,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cobbler_site.settings")
    import django

    django.setup()
    raise SystemExit(main())
