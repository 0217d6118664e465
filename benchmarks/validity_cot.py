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

People (``human_cot_row``): the crowd order and cot runs on the same pairs, each instruction's
batch answered by 3 raters drawn per run from the main harness's pool (``n_raters``: 30 at 120
pairs, 35 at 750), so one rater answers several instructions of both runs and links them; each
rater has their own tau and a slot habit N(0, 0.3) on the probit scale kept across instructions
(the ``h-rater-pull`` panel's people), 5% ties. Null: writing the reasoning changes nothing.
Injected: a first-slot pull in the order run (mixture weight 0.25 or 0.45) that the reasoning
removes. The truth is the expected cot-minus-without difference for a rater drawn from the pool.

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
from scipy.special import ndtr

from benchmarks.validity import (
    ORDER,
    SEED,
    TARGETS,
    TAU_JUDGE,
    TAU_SD,
    TIES,
    JudgeSpec,
    StudySpec,
    _commit,
    _setup_django,
    arrangement,
    human_tau,
    make_study,
    n_raters,
    p_first,
    wilson_bounds,
)

COT = "cot"
HUMAN_SLOT_SD = 0.3  # the h-rater-pull panel's rater habit
PEOPLE = ("people-null", 0.0), ("people-gains-10", 0.25), ("people-gains-20", 0.45)
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
    return _scored(row, {o: after[o] - before[o] if spec.bias else 0.0 for o in OUTCOMES})


def _scored(row: dict, truth: dict[str, float]) -> dict:
    """Per outcome of a cot row: its claim and effect, the truth, and whether the interval covers it."""
    out = {}
    for outcome in OUTCOMES:
        res, ci = row[outcome], row[outcome]["ci95"]
        out[outcome] = {
            "claim": res["claim"], "effect": res["effect"], "truth": truth[outcome],
            "covered": ci is not None and ci[0] <= truth[outcome] <= ci[1],
        }  # fmt: skip
    return out


def _people_run(rng, pairs, forward_ab, taus, habits, pull: float, condition: str, n_instr: int) -> pd.DataFrame:
    """One crowd run (human_pairwise_frame columns): per instruction a batch of the 15 pairs'
    twins (the positions swapped), answered by 3 raters drawn from the pool."""
    per = len(pairs) // n_instr
    raters = np.argsort(rng.random((n_instr, taus.size)), axis=1)[:, :3]
    i, j, p, t = (g.ravel() for g in np.meshgrid(*(np.arange(n) for n in (n_instr, 3, per, 2)), indexing="ij"))
    row, rater = i * per + p, raters[i, j]
    ab = forward_ab[row] ^ (t == 1)
    qa, qb = pairs["qa"].to_numpy()[row], pairs["qb"].to_numpy()[row]
    slot_a = pull + (1 - pull) * ndtr(np.where(ab, qa - qb, qb - qa) / taus[rater] + habits[rater])
    u = rng.random(row.size)
    choice = np.where(u < TIES, "T", np.where(u < TIES + (1 - TIES) * slot_a, "A", "B"))
    return pd.DataFrame(
        {
            "rater": rater, "rater_label": np.char.add("r", rater.astype(str)),
            "batch": (condition == COT) * n_instr + i, "instruction": i, "condition": condition,
            "pair_index": p, "position": 2 * p + t, "pair": pairs["pair"].to_numpy()[row],
            "resp_a": pairs["resp_a"].to_numpy()[row], "resp_b": pairs["resp_b"].to_numpy()[row],
            "arrangement": np.where(ab, "ab", "ba"), "cue_slot": None, "choice": choice,
        }
    )  # fmt: skip


def _people_expected(pairs, forward_ab, taus, habits, pull: float, gold_is_a) -> dict[str, float]:
    """Consistency and JudgeBench accuracy of one run for a rater drawn from the pool, mean over pairs."""
    qa, qb = pairs["qa"].to_numpy()[:, None], pairs["qb"].to_numpy()[:, None]
    chose_a = []
    for twin in (0, 1):
        ab = (forward_ab ^ (twin == 1))[:, None]
        slot_a = pull + (1 - pull) * ndtr(np.where(ab, qa - qb, qb - qa) / taus[None, :] + habits[None, :])
        chose_a.append((1 - TIES) * np.where(ab, slot_a, 1 - slot_a))  # P(response a), (pairs, raters)
    a1, a2 = chose_a
    b1, b2 = (1 - TIES) - a1, (1 - TIES) - a2
    consistent = a1 * a2 + b1 * b2 + TIES * TIES
    g1, g2 = (np.where(gold_is_a[:, None], a, b) for a, b in ((a1, b1), (a2, b2)))
    correct = g1 * g2 + TIES * (g1 + g2)  # both right, or one right and one tie
    return {"consistency": float(consistent.mean()), "gold_accuracy": float(correct.mean())}


def people_replicate(size: int, r: int, name: str, pull: float) -> dict:
    """One simulated crowd study with an order and a cot run, through ``human_cot_row``."""
    from analysis.metrics.cot import human_cot_row

    rng = np.random.default_rng([SEED, zlib.crc32(f"cot:{name}".encode()), size, r])
    study = make_study(rng, size, StudySpec())
    pairs = study.pairs
    pool = n_raters(study.n_instr)
    taus, habits = human_tau(rng, pool), rng.normal(0.0, HUMAN_SLOT_SD, pool)
    forward_ab = rng.random(len(pairs)) < 0.5  # the cot run draws the order run's arrangements
    answers = pd.concat(
        [
            _people_run(rng, pairs, forward_ab, taus, habits, pull, ORDER, study.n_instr),
            _people_run(rng, pairs, forward_ab, taus, habits, 0.0, COT, study.n_instr),
        ],
        ignore_index=True,
    )
    gold_is_a = (pairs["qa"] > pairs["qb"]).to_numpy()
    row = human_cot_row(answers, pd.DataFrame({"pair": pairs["pair"], "gold_is_a": gold_is_a}))
    assert row is not None
    before = _people_expected(pairs, forward_ab, taus, habits, pull, gold_is_a)
    after = _people_expected(pairs, forward_ab, taus, habits, 0.0, gold_is_a)
    return _scored(row, {o: after[o] - before[o] for o in OUTCOMES})


def _rate(k: int, n: int) -> dict:
    low, high = wilson_bounds(k, n)
    return {"rate": k / n if n else None, "lower95": low, "upper95": high, "k": k, "n": n}


def run(sizes: list[int], null_reps: int, power_reps: int) -> list[dict]:
    entries = []
    for size in sizes:
        judges = [
            (s.name, s.bias, asdict(s), null_reps if not s.bias else power_reps) for s in (*NULL_JUDGES, *INJECTED)
        ]
        people = [
            (
                name,
                "position" if pull else "",
                {"people": True, "order_pull": pull},
                null_reps if not pull else power_reps,
            )
            for name, pull in PEOPLE
        ]
        for name, bias, spec, reps in (*judges, *people):
            if spec.get("people"):
                results = [people_replicate(size, r, name, spec["order_pull"]) for r in range(reps)]
            else:
                results = [replicate(size, r, JudgeSpec(**spec)) for r in range(reps)]
            entry: dict = {"size": size, "judge": name, "spec": spec, "replicates": reps}
            if bias:
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
