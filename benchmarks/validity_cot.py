"""Validity of the cot comparison (``analysis.metrics.cot``): false claims, power and coverage.

Run as ``.venv/bin/python -m benchmarks.validity_cot [--quick] [--replicates N] [--sizes 120,750]``.
No database: the simulated studies and judges of ``benchmarks.validity`` (quality-driven judges
with instruction-level noise, their per-instruction tau and slot pull shared by both runs, as one
judge's mood for an instruction is), an order run and a cot run on the same pairs in the same
arrangements, as ``judging.conditions.plan`` lays them out; gold = the response of higher latent
quality. The frames go through ``cot_rows``, the report's own code.

- Null judges (thinking changes nothing; every claim is false): realistic, near-random, 20%
  invalid, a slot pull that varies by instruction with mean 0.
- Injected: a judge with a first-slot pull in the order run (mixture weight 0.235 or 0.40) that
  thinking step by step removes, so its consistency and its gold accuracy rise in the cot run by
  about 10 and 20 points. The truth of each
  outcome is its expected cot-minus-without difference from the per-call probabilities.

Targets as the main harness: family-wise false claims (either outcome) <= 5%, Monte-Carlo upper
bound <= 7%; coverage 93-97%; power reported (``TARGETS``). Writes
``benchmarks/results/validity-cot.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from benchmarks.validity import (
    ORDER,
    SEED,
    TARGETS,
    TAU_JUDGE,
    TAU_SD,
    JudgeSpec,
    StudySpec,
    _commit,
    _setup_django,
    arrangement,
    make_study,
    p_first,
    wilson_bounds,
)

COT = "cot"
NULL_JUDGES = (
    JudgeSpec("a-realistic"),
    JudgeSpec("d-near-random", tau_scale=10.0),
    JudgeSpec("e-invalid20", invalid=0.2),
    JudgeSpec("f-slot-pull", slot_pull_sd=0.15),
)
# The order run's first-slot pull (mixture weight) that thinking removes, chosen so the expected
# consistency gain is about 10 and 20 points for the realistic judge (the truth is measured).
INJECTED = tuple(JudgeSpec(f"cot-gains-{gain}", bias="position", beta=beta) for gain, beta in ((10, 0.235), (20, 0.40)))
OUTCOMES = ("consistency", "gold_accuracy")
RESULTS_NAME = "validity-cot.json"


def _calls(rng, pairs, spec: JudgeSpec, slots, tau, pull, condition: str) -> tuple[pd.DataFrame, list]:
    frames, probs = [], []
    for prompt, slot1_is_a in zip((1, 2), slots, strict=True):
        p = p_first(spec, pairs, slot1_is_a, prompt, ORDER, tau, pull)
        probs.append((p, slot1_is_a))
        valid = rng.random(len(pairs)) >= spec.invalid
        first = rng.random(len(pairs)) < p
        choice = np.where(valid, np.where(first, "first", "second"), "")
        frames.append(
            pd.DataFrame(
                {
                    "judge": spec.name,
                    "condition": condition,
                    "pair": pairs["pair"].to_numpy(),
                    "instruction": pairs["instruction"].to_numpy(),
                    "presentation": prompt,
                    "choice": choice,
                    "valid": valid,
                    "verdict": choice,
                    "chosen_is_a": valid & (first == slot1_is_a),
                    "cue_slot": "",
                }
            )  # fmt: skip
        )
    return pd.concat(frames, ignore_index=True), probs


def _expected(probs: list, gold_is_a: np.ndarray, invalid: float) -> dict[str, float]:
    """Per-pair expected consistency (given both answered) and JudgeBench correctness of one run."""
    (p1, s1), (p2, _s2) = probs
    # Prompt 2 swaps the answers: the same response twice is first-then-second or second-then-first.
    consistent = p1 * (1 - p2) + (1 - p1) * p2
    right1 = np.where(s1 == gold_is_a, p1, 1 - p1)  # P(prompt 1 chooses the gold answer | valid)
    right2 = np.where(~s1 == gold_is_a, p2, 1 - p2)
    v = 1 - invalid
    # Correct when the sum of +1 / -1 / 0 scores is > 0: both right, or one right and one invalid.
    correct = v * v * right1 * right2 + v * (1 - v) * (right1 + right2)
    return {"consistency": float(consistent.mean()), "gold_accuracy": float(correct.mean())}


def replicate(size: int, r: int, spec: JudgeSpec) -> dict:
    from analysis.metrics.cot import cot_rows

    rng = np.random.default_rng([SEED, zlib.crc32(f"cot:{spec.name}".encode()), size, r])
    study = make_study(rng, size, StudySpec())
    pairs = study.pairs
    tau = TAU_JUDGE * spec.tau_scale * np.exp(TAU_SD * rng.normal(size=study.n_instr))
    pull = np.clip(rng.normal(0, spec.slot_pull_sd or 1e-9, size=study.n_instr), -1, 1)
    slots = arrangement(rng, pairs, ORDER)  # the cot run uses the order run's arrangements
    thinking = replace(spec, bias="", beta=0.0) if spec.bias else spec
    order, order_probs = _calls(rng, pairs, spec, slots, tau, pull, ORDER)
    cot, cot_probs = _calls(rng, pairs, thinking, slots, tau, pull, COT)
    gold_is_a = (pairs["qa"] > pairs["qb"]).to_numpy()
    gold = pd.DataFrame({"pair": pairs["pair"], "gold_is_a": gold_is_a})
    (row,) = cot_rows(pd.concat([order, cot], ignore_index=True), gold)
    before, after = _expected(order_probs, gold_is_a, spec.invalid), _expected(cot_probs, gold_is_a, spec.invalid)
    out = {}
    for outcome in OUTCOMES:
        res = row[outcome]
        truth = after[outcome] - before[outcome] if spec.bias else 0.0
        ci = res["ci95"]
        out[outcome] = {
            "claim": res["claim"], "effect": res["effect"], "truth": truth,
            "covered": ci is not None and ci[0] <= truth <= ci[1],
        }  # fmt: skip
    return out


def _rate(k: int, n: int) -> dict:
    low, high = wilson_bounds(k, n)
    return {"rate": k / n if n else None, "lower95": low, "upper95": high, "k": k, "n": n}


def run(sizes: list[int], null_reps: int, power_reps: int) -> list[dict]:
    entries = []
    for size in sizes:
        for spec, reps in [*((s, null_reps) for s in NULL_JUDGES), *((s, power_reps) for s in INJECTED)]:
            results = [replicate(size, r, spec) for r in range(reps)]
            entry: dict = {"size": size, "judge": spec.name, "spec": asdict(spec), "replicates": reps}
            if spec.bias:
                entry["power"] = {o: _rate(sum(x[o]["claim"] == "higher" for x in results), reps) for o in OUTCOMES}
                entry["wrong_direction"] = sum(x[o]["claim"] == "lower" for x in results for o in OUTCOMES)
            else:
                entry["family_wise_false"] = _rate(sum(any(x[o]["claim"] for o in OUTCOMES) for x in results), reps)
            entry["coverage"] = {o: _rate(sum(x[o]["covered"] for x in results), reps) for o in OUTCOMES}
            entry["mean_effect"] = {o: float(np.mean([x[o]["effect"] for x in results])) for o in OUTCOMES}
            entry["truth"] = {o: float(np.mean([x[o]["truth"] for x in results])) for o in OUTCOMES}
            entries.append(entry)
            print(_line(entry), flush=True)
    return entries


def _line(e: dict) -> str:
    cov = " ".join(f"{o} cover {e['coverage'][o]['rate']:.3f}" for o in OUTCOMES)
    if "power" in e:
        found = " ".join(f"{o} power {e['power'][o]['rate']:.2f} (truth {e['truth'][o]:+.3f})" for o in OUTCOMES)
        return f"{e['size']:>5} {e['judge']:<28} {found} {cov}"
    fw = e["family_wise_false"]
    verdict = (
        "PASS" if fw["rate"] <= TARGETS["family_wise"] and fw["upper95"] <= TARGETS["family_wise_upper"] else "FAIL"
    )
    return f"{e['size']:>5} {e['judge']:<28} false claims {fw['k']}/{fw['n']} [<= {fw['upper95']:.3f}] {verdict} {cov}"


def main() -> None:
    _setup_django()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="120,750")
    parser.add_argument("--replicates", type=int, default=400)
    parser.add_argument("--power-replicates", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    null_reps, power_reps = (20, 10) if args.quick else (args.replicates, args.power_replicates)
    started = time.perf_counter()
    entries = run(sizes, null_reps, power_reps)
    from benchmarks.validity import RESULTS

    out = {
        "benchmark": "validity of the cot comparison (issue 24)",
        "commit": _commit(),
        "conditions": {"sizes": sizes, "replicates": null_reps, "power_replicates": power_reps, "seed": SEED},
        "seconds": round(time.perf_counter() - started, 1),
        "results": entries,
    }
    if not args.quick:
        RESULTS.with_name(RESULTS_NAME).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['seconds']} s")


if __name__ == "__main__":
    main()
