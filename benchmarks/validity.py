"""Validity of the report's verdict claims: false claims, power and coverage on simulated studies.

Run as ``.venv/bin/python -m benchmarks.validity [--quick] [--replicates N] [--sizes 120,750,5250]
[--jobs 2]``. No database: each replicate builds the loaders' frames in memory (judgments,
human answers, responses, reviews) and runs them through the report's own code, nothing
re-implemented: ``analysis.sections.bias.section_from_frames`` (bias rows and
``bias_reference`` rows; ``from_frames`` and its bias rows alone on code older than the
reference rows), ``analysis.sections.agreement._pairwise_rows`` (percent agreement, the coin
judge's only: it is slow) and ``analysis.summary.build_summary`` (the cards and their claims).

The simulated study (docs/methods.md "Bias rates" for the designs):

- instructions with K = 6 candidate systems, one response each with a latent quality
  q = system mean + N(0, 1) and a length in characters (log-normal, correlated with q at
  ``rho``); every unordered pair of an instruction's responses is judged (15 per instruction);
- judges run the order run (prompt 2 swaps the responses of prompt 1, prompt 1's arrangement
  counterbalanced within each instruction) and the bandwagon and attentional runs (one
  random arrangement per pair, the cue on slot 1 in prompt 1 and on slot 2 in prompt 2), as
  ``judging.conditions.plan`` lays them out;
- a quality-driven judge picks X over Y with probability Phi((q_X - q_Y) / tau_i), tau_i
  log-normal per instruction around 1.45, which makes it answer the two orders of a pair
  inconsistently about a third of the time, as real chat-model judges do; biases are
  mixtures: with probability beta the call does the biased thing (slot 1, the cued slot, the
  longer response, its own response), else it answers on quality;
- people (30-60 raters, 3 per pair and condition, both twin tasks of a pair) choose by the
  same quality model with their own noise and 5% ties, with no bias at all: the Humans card
  must make no claim either. A "human-like" judge answers as one more such rater. In panel
  ``h-rater-pull`` each rater also has a habit of their own, a slot preference N(0, 0.3) on the
  probit scale (mean 0 over raters): one person's answers across instructions then share it,
  and the Humans card must still make no claim.

Scenarios are grouped in panels: the judges of one panel are judged in the same simulated
study (as a report holds several judges beside the humans), and each judge is one subject
of the report. Claims of bias are counted per subject: a claim where the scenario injected
no such bias is false (strict: whichever direction), one in the injected direction counts
towards power. Truths for the coverage of ``effect_ci95`` come from the per-call
probabilities of the simulation (expected (hits - mirror) / n per replicate, averaged over
replicates); rows no bias touches by design have truth 0 exactly.

Reading the results:

- "False" is strict: any biased claim the scenario did not inject, in either direction. Three
  panels hold no injected bias at all (``null``; ``b-length-quality``: longer answers are
  better; ``c-system-quality``: the judges' own system is the best), so every claim there is
  false, including "toward shorter answers" for a judge that merely follows quality less
  closely than people (the coins of panels b and c) and "toward other models' answers" for
  g, which favours one other system.
- The human-like judge draws its own noise like any rater, so it is one more rater, not the
  average one: sharper or looser than people as drawn. The reference rows compare at equal
  quality (``analysis.metrics.quality_matched``), so how closely a judge follows quality is not
  a preference and their truth is 0 for every judge not injected with that bias (and not g).
- Targets (``TARGETS``): family-wise false claims <= 5% with the Monte-Carlo (Wilson) upper
  bound <= 7%, each row <= 5%, coverage 93-97% (met when the Monte-Carlo 95% interval of the
  measured coverage reaches into 93-97%: with 400 replicates a row that covers exactly 95% lands
  outside 93-97% about once in 14 by chance), power >= 95% for a 10% bias at 750 pairs, and
  the coin never said to agree with people. Coverage is checked against the truth of the
  default profile's definitions (under cobbler-paper only where the truth is 0 by design).
- Replicates (``replicate_counts``): 400 per null panel and size in the full run (200 at 5250
  pairs), fewer for the injected panel and the extras; a few with ``--quick``. Every replicate
  is seeded from (``SEED``, panel, size, replicate), so a run is reproducible at any ``--jobs``.

Writes ``benchmarks/results/validity.json`` (conditions, code commit, run time, every measured
rate with its Monte-Carlo interval) and prints the table with PASS/FAIL per line.
``--humans-only`` simulates the people alone (their draws are the full run's: they come
first), about 20 times faster, and writes ``validity-humans.json``; ``--panels`` runs some
panels only and writes ``validity-panels.json``. Neither replaces the full table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import zlib
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "validity.json"
HUMANS_RESULTS = RESULTS.with_name("validity-humans.json")

K = 6
SYSTEMS = tuple(f"s{k}" for k in range(K))
OWN = "s0"  # every judge is one of the candidate systems (its self key)
FAVOURITE = "s1"  # scenario g: the system the judge favours, not its own
PAIRS_OF = tuple(combinations(range(K), 2))  # 15 per instruction, response a = the earlier system
SIZES = (120, 750, 5250)  # pairs: 8, 50 and 350 instructions
TAU_JUDGE = 1.45  # median tau_i: about a third of pairs answered inconsistently across orders
TAU_SD = 0.5  # log-sd of tau_i across instructions
TAU_HUMAN = 1.2  # median rater tau (log-sd 0.4): people are about as noisy as the judges
TIES = 0.05
ORDER, BANDWAGON, ATTENTIONAL = "order", "bandwagon", "attentional"
# CALM's cue biases of the battery (annotations.biases): the bandwagon design, their own cue.
# Sentiment's cue is a model's rewrite of the cued answer; here every answer has one and the
# rewrite keeps the content exactly (only the tone moves), so its rows measure the tone alone.
CALM_CUES = ("authority", "verbosity", "refinement", "identity", "sentiment")
COBBLER_CUES = (BANDWAGON, ATTENTIONAL)
ALL_CUES = (*COBBLER_CUES, *CALM_CUES)
TESTED = ("position_preference", *ALL_CUES, "egocentric", "salience_longer")
# The bias each injection shows up as, and the direction a correct claim names.
INJECTED_ROW = {
    "position": "position_preference",
    "bandwagon": BANDWAGON,
    "attentional": ATTENTIONAL,
    "length": "salience_longer",
    "self": "egocentric",
    **{cue: cue for cue in CALM_CUES},
}
COBBLER_KINDS = ("position", "bandwagon", "attentional", "length", "self")
TARGETS = {"family_wise": 0.05, "family_wise_upper": 0.07, "row": 0.05, "coverage": (0.93, 0.97), "power": 0.95}
POWER_CHECK = (0.10, 750)  # the power target applies to a 10% bias at 750 pairs
COIN = "coin"  # the judge whose percent-agreement claims are checked
SEED = 19  # issue 19
# Replicates of the full run per size: (null panels, injected panel, extras); see replicate_counts.
FULL_COUNTS = {120: (400, 100, 50), 750: (400, 100, 50), 5250: (200, 25, 12)}


@dataclass(frozen=True)
class JudgeSpec:
    name: str  # the subject in the report
    kind: str = "quality"  # quality | coin | human (answers as one more rater)
    tau_scale: float = 1.0  # x TAU_JUDGE; large = near-random
    invalid: float = 0.0  # share of unparseable outputs
    slot_pull_sd: float = 0.0  # per-instruction position bias N(0, sd), mean 0
    favourite: float = 0.0  # P(pick FAVOURITE when it is in the pair)
    bias: str = ""  # injected: position | bandwagon | attentional | length | self
    beta: float = 0.0


@dataclass(frozen=True)
class StudySpec:
    rho: float = 0.0  # correlation of log-length with quality
    means: tuple[float, ...] = (0.0,) * K  # system mean qualities (OWN first)
    rater_slot_sd: float = 0.0  # each rater's own slot habit N(0, sd) on the probit scale, mean 0
    cues: tuple[str, ...] = COBBLER_CUES  # the cue runs beside the order run (judges and people)

    @property
    def conditions(self) -> tuple[str, ...]:
        return (ORDER, *self.cues)


@dataclass(frozen=True)
class Panel:
    name: str
    study: StudySpec
    judges: tuple[JudgeSpec, ...]
    power: bool = False  # injected biases: fewer replicates (power rows)
    # On its first replicates only (they are slow): the coin's percent-agreement claims, and the
    # same frames under the cobbler-paper profile.
    extras: bool = False


def _injected(kind: str, beta: float) -> JudgeSpec:
    return JudgeSpec(f"{kind}-{round(beta * 100):02d}", bias=kind, beta=beta)


PANELS = (
    Panel(
        "null",
        StudySpec(),
        (
            JudgeSpec("a-realistic"),
            JudgeSpec("d-near-random", tau_scale=10.0),
            JudgeSpec("e-invalid20", invalid=0.2),
            JudgeSpec("f-slot-pull", slot_pull_sd=0.15),
            JudgeSpec("g-prefers-other", favourite=0.2),
            JudgeSpec(COIN, kind="coin"),
        ),
        extras=True,
    ),
    # Where longer (own) answers are better, a judge that follows quality less closely than people
    # (a coin, at the extreme) chooses them less often than people do, with no preference at all.
    Panel(
        "b-length-quality",
        StudySpec(rho=0.4),
        (JudgeSpec("b-realistic"), JudgeSpec("b-human-like", kind="human"), JudgeSpec("b-coin", kind="coin")),
    ),
    Panel(
        "c-system-quality",
        StudySpec(means=(0.5, 0.3, 0.1, -0.1, -0.3, -0.5)),
        (JudgeSpec("c-realistic"), JudgeSpec("c-human-like", kind="human"), JudgeSpec("c-coin", kind="coin")),
    ),
    # People with habits: each rater leans to one slot (mean 0 over raters), so one rater's answers
    # across instructions are not independent: the humans' tests must hold on both clusterings.
    Panel("h-rater-pull", StudySpec(rater_slot_sd=0.3), (JudgeSpec("h-realistic"),)),
    Panel(
        "injected",
        StudySpec(),
        tuple(_injected(kind, beta) for kind in COBBLER_KINDS for beta in (0.05, 0.10, 0.20)),
        power=True,
    ),
    # The bias battery: every cue bias run beside the order run, so a judge's claim family holds
    # ten rows (position, seven cues, egocentric, salience) and the reference rows. No bias, then
    # each CALM cue injected.
    Panel(
        "battery-null",
        StudySpec(cues=ALL_CUES),
        (
            JudgeSpec("a-realistic"),
            JudgeSpec("d-near-random", tau_scale=10.0),
            JudgeSpec("e-invalid20", invalid=0.2),
            JudgeSpec("f-slot-pull", slot_pull_sd=0.15),
        ),
    ),
    Panel(
        "battery-injected",
        StudySpec(cues=ALL_CUES),
        tuple(_injected(kind, beta) for kind in CALM_CUES for beta in (0.10, 0.20)),
        power=True,
    ),
)


# --- the simulated study ---------------------------------------------------------------------


@dataclass
class Study:
    n_instr: int
    q: np.ndarray  # (instructions, K) latent quality
    length: np.ndarray  # (instructions, K) characters
    spec: StudySpec

    @property
    def pairs(self) -> pd.DataFrame:
        """One row per pair: instruction, pair id, systems a < b, their responses and lengths."""
        i = np.repeat(np.arange(self.n_instr), len(PAIRS_OF))
        a = np.tile([p[0] for p in PAIRS_OF], self.n_instr)
        b = np.tile([p[1] for p in PAIRS_OF], self.n_instr)
        return pd.DataFrame(
            {
                "instruction": i,
                "pair": np.arange(i.size),
                "pair_index": np.tile(np.arange(len(PAIRS_OF)), self.n_instr),
                "a": a,
                "b": b,
                "resp_a": i * K + a,
                "resp_b": i * K + b,
                "qa": self.q[i, a],
                "qb": self.q[i, b],
                "len_a": self.length[i, a],
                "len_b": self.length[i, b],
            }
        )


def make_study(rng: np.random.Generator, n_pairs: int, spec: StudySpec) -> Study:
    n_instr = n_pairs // len(PAIRS_OF)
    noise = rng.normal(size=(n_instr, K))
    q = np.asarray(spec.means)[None, :] + noise
    mix = spec.rho * (q - q.mean()) / max(q.std(), 1e-9) + np.sqrt(1 - spec.rho**2) * rng.normal(size=(n_instr, K))
    length = np.round(np.exp(6.3 + 0.45 * mix)).astype(int)  # about 550 characters, rarely equal
    return Study(n_instr, q, length, spec)


def responses_frame(study: Study) -> pd.DataFrame:
    """``response, candidate, instruction, text``; texts of the right length in characters (and words)."""
    n = study.n_instr * K
    lengths = study.length.ravel()
    return pd.DataFrame(
        {
            "response": np.arange(n),
            "candidate": np.tile(SYSTEMS, study.n_instr),
            "instruction": np.repeat(np.arange(study.n_instr), K),
            "text": [("ab " * (m // 3 + 1))[:m] for m in lengths],
        }
    )


def human_tau(rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    return TAU_HUMAN * np.exp(0.4 * rng.normal(size=size))


# --- judges ----------------------------------------------------------------------------------


def arrangement(rng: np.random.Generator, pairs: pd.DataFrame, condition: str) -> tuple[np.ndarray, np.ndarray]:
    """slot1_is_a of prompts 1 and 2, as ``judging.conditions.plan`` lays them out.

    Order run: prompt 1 shows response a first in half the pairs of every instruction (the
    counterbalanced plan), prompt 2 swaps. Cue runs: one random arrangement per pair, the same
    in both prompts (only the cue moves).
    """
    n_instr = int(pairs["instruction"].max()) + 1
    if condition == ORDER:
        ranks = np.argsort(np.argsort(rng.random((n_instr, len(PAIRS_OF))), axis=1), axis=1)
        start = rng.integers(0, 2, size=(n_instr, 1))
        first = ((ranks + start) % 2 == 0).ravel()
        return first, ~first
    first = rng.random(len(pairs)) < 0.5
    return first, first


def p_first(
    spec: JudgeSpec, pairs: pd.DataFrame, slot1_is_a: np.ndarray, prompt: int, condition: str, tau, pull
) -> np.ndarray:
    """P(the judge answers "first" | a valid answer) for every pair, one prompt: the mixtures in order."""
    a, b = pairs["a"].to_numpy(), pairs["b"].to_numpy()
    sys_x, sys_y = np.where(slot1_is_a, a, b), np.where(slot1_is_a, b, a)
    i = pairs["instruction"].to_numpy()
    if spec.kind == "coin":
        p = np.full(len(pairs), 0.5)
    else:
        qa, qb = pairs["qa"].to_numpy(), pairs["qb"].to_numpy()
        p = ndtr(np.where(slot1_is_a, qa - qb, qb - qa) / tau[i])

    def mix(p: np.ndarray, weight, target) -> np.ndarray:
        return weight * np.asarray(target, dtype=float) + (1 - weight) * p

    favourite = SYSTEMS.index(FAVOURITE)
    if spec.favourite:
        p = mix(p, spec.favourite * ((sys_x == favourite) | (sys_y == favourite)), sys_x == favourite)
    if spec.bias == "length":
        lx = np.where(slot1_is_a, pairs["len_a"], pairs["len_b"])
        ly = np.where(slot1_is_a, pairs["len_b"], pairs["len_a"])
        p = mix(p, spec.beta, np.sign(lx - ly) / 2 + 0.5)
    if spec.bias == "self":
        own = SYSTEMS.index(OWN)
        p = mix(p, spec.beta * ((sys_x == own) | (sys_y == own)), sys_x == own)
    if spec.bias in ALL_CUES and spec.bias == condition:
        p = mix(p, spec.beta, prompt == 1)  # the cue sits on slot 1 in prompt 1, slot 2 in prompt 2
    if spec.bias == "position":
        p = mix(p, spec.beta, 1.0)
    if spec.slot_pull_sd:
        p = mix(p, np.abs(pull[i]), pull[i] > 0)
    return p


def judge_calls(
    rng: np.random.Generator, study: Study, pairs: pd.DataFrame, spec: JudgeSpec
) -> tuple[pd.DataFrame, dict, float]:
    """The judge's calls on every pair in every condition (judgments_frame columns), P(first) per prompt, P(invalid)."""
    if spec.kind == "human":
        tau = np.full(study.n_instr, float(human_tau(rng)))
        invalid = TIES  # a tie is no verdict for a judge
    else:
        tau = TAU_JUDGE * spec.tau_scale * np.exp(TAU_SD * rng.normal(size=study.n_instr))
        invalid = spec.invalid
    pull = np.clip(rng.normal(0, spec.slot_pull_sd or 1e-9, size=study.n_instr), -1, 1)
    frames, probs = [], {}
    base = {
        "judge": spec.name,
        "self_key": OWN,
        "job": 1,
        "instruction": pairs["instruction"].to_numpy(),
        "pair": pairs["pair"].to_numpy(),
        "cand_a": np.asarray(SYSTEMS)[pairs["a"].to_numpy()],
        "cand_b": np.asarray(SYSTEMS)[pairs["b"].to_numpy()],
        "len_a": pairs["len_a"].to_numpy(),
        "len_b": pairs["len_b"].to_numpy(),
    }
    for condition in study.spec.conditions:
        slots = arrangement(rng, pairs, condition)
        probs[condition] = []
        for prompt, slot1_is_a in zip((1, 2), slots, strict=True):
            p = p_first(spec, pairs, slot1_is_a, prompt, condition, tau, pull)
            probs[condition].append((p, slot1_is_a))
            valid = rng.random(len(pairs)) >= invalid
            first = rng.random(len(pairs)) < p
            cue = None if condition == ORDER else ("first" if prompt == 1 else "second")
            frames.append(
                pd.DataFrame(
                    base
                    | {
                        "condition": condition,
                        "presentation": prompt,
                        "slot1_is_a": slot1_is_a,
                        "choice": np.where(valid, np.where(first, "first", "second"), ""),
                        "chosen_is_a": valid & (first == slot1_is_a),
                        "valid": valid,
                        "cue_slot": cue,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True), probs, invalid


def judge_truth(pairs: pd.DataFrame, probs: dict, v: float) -> dict[str, float]:
    """Expected effect of every tested row (default profile) from the per-call probabilities.

    Calls are independent given the pair, so a pair outcome's probability is the product of
    its two prompts'. Bias rows: expected (hits - mirror) / n, n = pairs with both prompts
    valid (salience: the consistent pairs with different lengths, its kept set).
    """
    (p1, a1), (p2, a2) = probs[ORDER]
    out = {"position_preference": float(np.mean(p1 * p2 - (1 - p1) * (1 - p2)))}
    for condition in (c for c in ALL_CUES if c in probs):
        (c1, _), (c2, _) = probs[condition]
        out[condition] = float(np.mean(c1 - c2))  # followed twice - against twice
    a, b = pairs["a"].to_numpy(), pairs["b"].to_numpy()
    # P(the judge chooses response a | valid), per prompt, and the pair's share over both prompts.
    chose_a1, chose_a2 = np.where(a1, p1, 1 - p1), np.where(a2, p2, 1 - p2)
    own = SYSTEMS.index(OWN)
    len_a, len_b = pairs["len_a"].to_numpy(), pairs["len_b"].to_numpy()
    targets = {
        # +1: the target is response a, -1: response b, 0: no target in the pair
        "egocentric": np.where(a == own, 1, np.where(b == own, -1, 0)),
        "salience_longer": np.sign(len_a - len_b),
    }
    for bias, sign in targets.items():
        on = sign != 0
        t1 = np.where(sign > 0, chose_a1, 1 - chose_a1)[on]
        t2 = np.where(sign > 0, chose_a2, 1 - chose_a2)[on]
        if bias == "egocentric":  # own chosen twice - other chosen twice, over both-valid self pairs
            out[bias] = float(np.mean(t1 * t2 - (1 - t1) * (1 - t2)))
        else:  # longer twice - shorter twice, over the consistent pairs
            out[bias] = float(np.sum(t1 * t2 - (1 - t1) * (1 - t2)) / np.sum(t1 * t2 + (1 - t1) * (1 - t2)))
    # The reference rows' estimand (the share at equal quality, quality_matched) has no closed
    # form under these mixtures: its truth is 0 where designed_null says so, else unchecked.
    return out


# --- people ----------------------------------------------------------------------------------


def n_raters(n_instr: int) -> int:
    """30 raters for the smallest study, up to 60: each answers whole batches (one instruction's 15 pairs)."""
    return int(np.clip(30 + n_instr // 10, 30, 60))


def human_frames(
    rng: np.random.Generator, study: Study, pairs: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Approved answers (human_pairwise_frame columns), reviews and the humans' true effects.

    Per condition and instruction one batch of 30 tasks (15 pairs x twin tasks, shuffled),
    answered by 3 distinct raters. Order twins swap the presentation; bandwagon and
    attentional twins keep it and put the cue on A, then on B (annotations.services.design).
    """
    n_instr, per = study.n_instr, len(PAIRS_OF)
    raters_total = n_raters(n_instr)
    taus = human_tau(rng, raters_total)
    # Drawn only when asked for, so the other panels' random streams stay as they were.
    pulls = (
        rng.normal(0.0, study.spec.rater_slot_sd, raters_total) if study.spec.rater_slot_sd else np.zeros(raters_total)
    )
    frames, reviews = [], []
    truth_num = truth_den = 0.0
    for c, condition in enumerate(study.spec.conditions):
        raters = np.argsort(rng.random((n_instr, raters_total)), axis=1)[:, :3]  # (instr, 3)
        forward_ab = rng.random(len(pairs)) < 0.5
        position = np.argsort(rng.random((n_instr, 2 * per)), axis=1).reshape(n_instr, per, 2)
        # Index grid (instruction, rater slot, pair, twin), flattened.
        i, j, p, t = (g.ravel() for g in np.meshgrid(*(np.arange(n) for n in (n_instr, 3, per, 2)), indexing="ij"))
        row = i * per + p
        rater = raters[i, j]
        ab = forward_ab[row] if condition != ORDER else forward_ab[row] ^ (t == 1)
        qa, qb = pairs["qa"].to_numpy()[row], pairs["qb"].to_numpy()[row]
        phi = ndtr(np.where(ab, qa - qb, qb - qa) / taus[rater] + pulls[rater])  # P(slot A | no tie)
        u = rng.random(row.size)
        choice = np.where(u < TIES, "T", np.where(u < TIES + (1 - TIES) * phi, "A", "B"))
        cue = None if condition == ORDER else np.where(t == 0, "A", "B")
        frames.append(
            pd.DataFrame(
                {
                    "rater": rater,
                    "rater_label": np.char.add("r", rater.astype(str)),
                    "batch": c * n_instr + i,
                    "instruction": i,
                    "condition": condition,
                    "pair_index": p,
                    "position": position[i, p, t],
                    "pair": pairs["pair"].to_numpy()[row],
                    "resp_a": pairs["resp_a"].to_numpy()[row],
                    "resp_b": pairs["resp_b"].to_numpy()[row],
                    "arrangement": np.where(ab, "ab", "ba"),
                    "cue_slot": cue,
                    "choice": choice,
                }
            )
        )
        reviews.append(
            pd.DataFrame({"condition": condition, "review": "approved", "counts": np.ones(n_instr * 3, bool)})
        )
        if condition == ORDER:
            num, den = _human_salience(pairs, row[t == 0], taus[rater[t == 0]])
            truth_num, truth_den = truth_num + num, truth_den + den
    truth = {
        "position_preference": 0.0,
        **dict.fromkeys(study.spec.cues, 0.0),
        "salience_longer": truth_num / truth_den,
    }
    return pd.concat(frames, ignore_index=True), pd.concat(reviews, ignore_index=True), truth


def _human_salience(pairs: pd.DataFrame, row: np.ndarray, tau: np.ndarray) -> tuple[float, float]:
    """Expected (longer twice - shorter twice) and consistent pairs of one rater's order twins.

    Consistent = two letter votes for the same response (a tie chooses none), lengths differing
    (human_bias.human_bias_records under the default profile): P = (0.95 phi)^2 for response a,
    (0.95 (1 - phi))^2 for b, phi = P(a preferred | no tie).
    """
    qa, qb = pairs["qa"].to_numpy()[row], pairs["qb"].to_numpy()[row]
    phi = ndtr((qa - qb) / tau)
    cons_a, cons_b = ((1 - TIES) * phi) ** 2, ((1 - TIES) * (1 - phi)) ** 2
    len_a, len_b = pairs["len_a"].to_numpy()[row], pairs["len_b"].to_numpy()[row]
    diff = np.sign(len_a - len_b)
    return float(np.sum(diff * (cons_a - cons_b))), float(np.sum((cons_a + cons_b)[diff != 0]))


# --- one replicate through the report's code ---------------------------------------------------


def report_parts(frames: dict, profile_name: str, *, agreement: bool) -> tuple[list[dict], list[dict], list[dict]]:
    """(bias rows, bias_reference rows, summary cards) of the frames under one profile.

    ``section_from_frames`` (bias and reference rows) when the section has it, else the older
    ``from_frames`` (bias rows only), so the harness runs against either version.
    """
    from analysis.profiles import get_profile
    from analysis.sections import agreement as agreement_section
    from analysis.sections import bias as bias_section
    from analysis.summary import build_summary

    profile = get_profile(profile_name)
    args = (frames["judgments"], frames["human_answers"], frames["responses"], frames["reviews"])
    if hasattr(bias_section, "section_from_frames"):
        section = bias_section.section_from_frames(*args, profile=profile)
        rows, references = section["bias"], section.get("bias_reference") or []
    else:
        rows, references = bias_section.from_frames(*args, profile=profile), []
    judgments = frames["judgments"]
    agreement_rows = (
        agreement_section._pairwise_rows(frames["human_answers"], judgments[judgments["judge"] == COIN])
        if agreement
        else []
    )
    report = {
        "profile_choices": profile.choices(),
        "bias": rows,
        "bias_reference": references,
        "agreement": agreement_rows,
        "length_control": {},
        "counted_work": None,
    }
    return rows, references, build_summary(report)


def claim_key(claim: dict) -> str:
    return claim["bias"] + (f"~{claim['reference']}" if claim.get("reference") else "")


def says_agreement(claim: dict) -> bool:
    """Whether a percent-agreement claim tells the reader the judge agrees with people.

    Read from the claim as a reader would: a measured claim whose words say "agrees" and do not
    qualify it as chance-level (fields such as ``above_chance`` False win over the words).
    """
    if claim.get("verdict") in ("not_enough_data", "no_data"):
        return False
    for flag in ("above_chance", "agrees"):
        if flag in claim and claim[flag] is not None:
            return bool(claim[flag])
    text = claim.get("text", "").lower()
    chance_words = (
        "no better than chance",
        "not above chance",
        "chance level",
        "at chance",
        "no evidence of agreement",
    )
    return "agree" in text and not any(w in text for w in chance_words)


def row_values(row: dict, *, reference: bool) -> list | None:
    """[effect, low, high] of a row's tested effect, None without an interval to check.

    Newer rows carry ``effect``/``effect_ci95``; older ones only ``ci95``, which is the
    effect's interval for position_preference (and for reference rows, whose value is the effect).
    """
    if reference or "effect_ci95" not in row:
        if not reference and row["bias"] != "position_preference":
            return None
        effect, ci = row.get("value"), row.get("ci95")
    else:
        effect, ci = row.get("effect"), row.get("effect_ci95")
    if effect is None or not ci or None in ci:
        return None
    return [float(effect), float(ci[0]), float(ci[1])]


def score_subject(subject: str, rows: list[dict], references: list[dict], cards: list[dict]) -> dict:
    """What the report said about one subject: biased claims by key and direction, effects and intervals."""
    out: dict = {"claims": {}, "rows": {}, "agree": None}
    for row in rows:
        if row["subject"] == subject and row["bias"] in TESTED:
            values = row_values(row, reference=False)
            if values is not None:
                out["rows"][row["bias"]] = values
    for row in references:
        if row["subject"] == subject:
            values = row_values(row, reference=True)
            if values is not None:
                out["rows"][claim_key(row)] = values
    card = next((c for c in cards if c["subject"] == subject), None)
    for claim in (card or {}).get("claims", []):
        if claim.get("kind") == "bias" and claim.get("verdict") == "biased":
            direction = claim.get("direction") or (
                "toward" if (claim.get("hits_rate") or 0) >= (claim.get("mirror_rate") or 0) else "against"
            )
            out["claims"][claim_key(claim)] = direction
        if claim.get("kind") == "agreement" and claim.get("metric") == "percent" and subject != "humans":
            out["agree"] = (out["agree"] or []) + [says_agreement(claim)]
    return out


def simulate(panel: Panel, n_pairs: int, seed: list[int], *, humans_only: bool = False) -> tuple[dict, dict]:
    """One replicate's frames and the true effects per subject (``humans_only``: no judge calls)."""
    rng = np.random.default_rng(seed)
    study = make_study(rng, n_pairs, panel.study)
    pairs = study.pairs
    answers, reviews, human_truth = human_frames(rng, study, pairs)
    calls, truths = [], {"humans": human_truth}
    if humans_only:  # the people's draws are the same as in the full run: they come first
        calls.append(judge_calls(rng, study, pairs, panel.judges[0])[0].iloc[:0])
    for spec in () if humans_only else panel.judges:
        frame, probs, invalid = judge_calls(rng, study, pairs, spec)
        calls.append(frame)
        truths[spec.name] = judge_truth(pairs, probs, invalid)
    frames = {
        "judgments": pd.concat(calls, ignore_index=True),
        "human_answers": answers,
        "responses": responses_frame(study),
        "reviews": reviews,
    }
    return frames, truths


@dataclass(frozen=True)
class Task:
    panel: Panel
    size: int
    rep: int
    seed: int
    agreement: bool = False  # also the coin's percent-agreement claims
    paper: bool = False  # also the cobbler-paper profile
    humans_only: bool = False  # the people's rows alone (no judges simulated): fast, many replicates


def run_replicate(task: Task) -> list[dict]:
    """One replicate of one panel at one size: one record per (profile, subject)."""
    panel = task.panel
    seed = [task.seed, zlib.crc32(panel.name.encode()), task.size, task.rep]
    frames, truths = simulate(panel, task.size, seed, humans_only=task.humans_only)
    profiles = ("default", "cobbler-paper") if task.paper else ("default",)
    records = []
    for profile in profiles:
        # Percent agreement is slow (rows per rater): the coin's alone, on a few replicates.
        agreement = task.agreement and profile == "default"
        rows, references, cards = report_parts(frames, profile, agreement=agreement)
        for subject in ["humans", *(() if task.humans_only else (j.name for j in panel.judges))]:
            record = {"panel": panel.name, "size": task.size, "rep": task.rep, "profile": profile, "subject": subject}
            records.append(record | score_subject(subject, rows, references, cards) | {"truth": truths[subject]})
    return records


# --- from records to rates -------------------------------------------------------------------


def wilson_bounds(k: int, n: int) -> tuple[float | None, float | None]:
    """Wilson 95% interval of a Monte-Carlo proportion k / n."""
    from analysis.metrics.stats import wilson

    if not n:
        return None, None
    low, high = wilson(k / n, n)
    return low, high


def spec_of(panel: Panel, subject: str) -> JudgeSpec | None:
    return next((j for j in panel.judges if j.name == subject), None)


def designed_null(panel: Panel, subject: str, key: str) -> bool:
    """Whether the design makes the row's population value exactly 0 (its truth is then 0, not an average)."""
    spec = spec_of(panel, subject) or JudgeSpec(subject)
    bias = key.split("~")[0]
    if "~" in key:
        # Against people at equal quality: 0 for any judge that only follows quality (however
        # closely), so for every judge but the one injected with this bias and g, which favours
        # another system and so, at equal quality, chooses its own answer less often.
        return INJECTED_ROW.get(spec.bias) != bias and not (bias == "egocentric" and spec.favourite)
    if bias in ("position_preference", *ALL_CUES):
        return INJECTED_ROW.get(spec.bias) != bias
    equal_systems = len(set(panel.study.means)) == 1
    if bias == "egocentric":
        return equal_systems and not spec.favourite and spec.bias != "self"
    return panel.study.rho == 0 and spec.bias != "length"  # salience_longer


def is_true_claim(spec: JudgeSpec | None, key: str, direction: str) -> bool:
    """A claim naming the injected bias in the injected direction; every other claim is false."""
    return spec is not None and INJECTED_ROW.get(spec.bias) == key.split("~")[0] and direction == "toward"


def _rate(flags: list[bool]) -> dict:
    k, n = int(sum(flags)), len(flags)
    low, high = wilson_bounds(k, n)
    return {"rate": k / n if n else None, "lower95": low, "upper95": high, "k": k, "n": n}


def aggregate(records: list[dict], panels: tuple[Panel, ...] = PANELS) -> list[dict]:
    """One entry per (size, profile, panel, subject): false claims, coverage, power, agreement."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["size"], r["profile"], r["panel"], r["subject"]), []).append(r)
    by_name = {p.name: p for p in panels}
    names = list(by_name)
    subjects = ["humans", *(j.name for p in panels for j in p.judges)]

    def order(item: tuple) -> tuple:
        (size, profile, panel, subject), _ = item
        return (size, profile != "default", names.index(panel), subjects.index(subject))

    out = []
    for (size, profile, panel_name, subject), group in sorted(groups.items(), key=order):
        panel = by_name[panel_name]
        spec = spec_of(panel, subject)
        keys = sorted({k for r in group for k in (*r["rows"], *r["claims"])}, key=_key_order)
        false_any = [any(not is_true_claim(spec, k, d) for k, d in r["claims"].items()) for r in group]
        entry = {
            "size": size,
            "profile": profile,
            "panel": panel_name,
            "subject": subject,
            "spec": asdict(spec) if spec else None,
            "replicates": len(group),
            "family_wise_false": _rate(false_any),
            "rows": {},
        }
        for key in keys:
            claims = [r["claims"].get(key) for r in group]
            false = [d is not None and not is_true_claim(spec, key, d) for d in claims]
            row = {"false_claims": _rate(false), "against": sum(d == "against" for d in claims)}
            truth = _truth(panel, subject, key, group, profile)
            if truth is not None:
                covered = [lo <= truth <= hi for r in group if key in r["rows"] for _, lo, hi in [r["rows"][key]]]
                effects = [r["rows"][key][0] for r in group if key in r["rows"]]
                row |= {"truth": truth, "mean_effect": float(np.mean(effects)) if effects else None}
                row["coverage"] = _rate(covered) if covered else None
            if profile == "default":
                # Against each replicate's own expected value (the study and judge as drawn), to tell
                # an interval that misses from an estimand that moves with the draw (JSON only).
                given = [
                    lo <= r["truth"][key] <= hi
                    for r in group
                    if key in r["rows"] and key in r["truth"]
                    for _, lo, hi in [r["rows"][key]]
                ]
                row["coverage_given_replicate"] = _rate(given) if given else None
            entry["rows"][key] = row
        if spec is not None and spec.bias:
            target = INJECTED_ROW[spec.bias]
            hits = [any(is_true_claim(spec, k, d) for k, d in r["claims"].items()) for r in group]
            entry["power"] = _rate(hits) | {"row": target, "beta": spec.beta}
        agree = [any(r["agree"]) for r in group if r["agree"] is not None]
        if agree:
            entry["says_agreement"] = _rate(agree)
        out.append(entry)
    return out


def _truth(panel: Panel, subject: str, key: str, group: list[dict], profile: str) -> float | None:
    if designed_null(panel, subject, key):
        return 0.0
    if profile != "default":
        return None  # the simulated truths follow the default profile's definitions
    values = [r["truth"][key] for r in group if key in r["truth"]]
    return float(np.mean(values)) if values else None


def _key_order(key: str) -> tuple[int, str]:
    bias = key.split("~")[0]
    return (TESTED.index(bias) if bias in TESTED else len(TESTED), key)


# --- checks and the printed table ------------------------------------------------------------


def checks(entry: dict) -> list[dict]:
    """PASS/FAIL lines of one entry against TARGETS (a line with no target is information only)."""
    label = f"{entry['size']} pairs {entry['profile']} {entry['panel']}/{entry['subject']}"
    lines = []
    fw = entry["family_wise_false"]
    ok = fw["rate"] <= TARGETS["family_wise"] and fw["upper95"] <= TARGETS["family_wise_upper"]
    lines.append({"label": f"{label} family-wise", "row": "family-wise", "false": fw, "passed": ok})
    for key, row in entry["rows"].items():
        line = {"label": f"{label} {key}", "row": key, "false": row["false_claims"], "truth": row.get("truth")}
        passed = row["false_claims"]["rate"] <= TARGETS["row"]
        cover = row.get("coverage")
        if cover:
            low, high = TARGETS["coverage"]
            line["coverage"] = cover
            passed = passed and cover["lower95"] <= high and cover["upper95"] >= low
        lines.append(line | {"passed": passed})
    if "power" in entry:
        power = entry["power"]
        checked = (power["beta"], entry["size"]) == POWER_CHECK and entry["profile"] == "default"
        passed = power["rate"] >= TARGETS["power"] if checked else None
        lines.append({"label": f"{label} power", "row": f"power {power['row']}", "power": power, "passed": passed})
    if "says_agreement" in entry:
        agree = entry["says_agreement"]
        passed = agree["rate"] == 0 if entry["subject"] == COIN else None
        lines.append({"label": f"{label} agreement", "row": "says it agrees", "agree": agree, "passed": passed})
    return lines


COLUMNS = (
    ("position", "position_preference"),
    ("bandwagon", BANDWAGON),
    ("attentional", ATTENTIONAL),
    *((cue, cue) for cue in CALM_CUES),
    ("egocentric", "egocentric"),
    ("ego~humans", "egocentric~humans"),
    ("salience", "salience_longer"),
    ("sal~humans", "salience_longer~humans"),
)
LEGEND = (
    "cells: false claims % / coverage % of the effect's 95% interval (- = no interval); family-wise: "
    "subjects with any false claim % [Monte-Carlo 95% upper]; power: injected bias claimed toward its "
    "target %; agrees: coin's percent-agreement claims that say it agrees %; ! = misses its target"
)


def _pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}"


def _cell(lines: list[dict], row: str) -> str:
    line = next((x for x in lines if x["row"] == row), None)
    if line is None:
        return ""
    cover = (line.get("coverage") or {}).get("rate")
    mark = "!" if line["passed"] is False else ""
    return f"{_pct(line['false']['rate'])}/{_pct(cover)}{mark}"


def print_table(entries: list[dict]) -> list[str]:
    """One line per subject with its verdict (PASS, FAIL, or - with no target); return the failed checks."""
    failed, heading = [], None
    header = f"{'subject':<17}{'reps':>5}  {'family-wise':<14}" + "".join(f"{t:<13}" for t, _ in COLUMNS)
    header += f"{'power':<8}{'agrees':<8}check"
    print(LEGEND)
    for entry in entries:
        if (entry["size"], entry["profile"]) != heading:
            heading = (entry["size"], entry["profile"])
            print(f"\n== {entry['size']} pairs, profile {entry['profile']} ==\n{header}")
        lines = checks(entry)
        fw = lines[0]
        cells = f"{_pct(fw['false']['rate'])} [{_pct(fw['false']['upper95'])}]" + ("!" if not fw["passed"] else "")
        who = f"humans ({entry['panel'][:8]})" if entry["subject"] == "humans" else entry["subject"]
        text = f"{who[:17]:<17}{entry['replicates']:>5}  {cells:<14}"
        text += "".join(f"{_cell(lines, key):<13}" for _, key in COLUMNS)
        power = next((x for x in lines if x["row"].startswith("power")), None)
        agree = next((x for x in lines if x["row"] == "says it agrees"), None)
        text += f"{_pct(power['power']['rate'], 0) + ('!' if power['passed'] is False else '') if power else '':<8}"
        text += f"{_pct(agree['agree']['rate'], 0) + ('!' if agree['passed'] is False else '') if agree else '':<8}"
        verdicts = [x["passed"] for x in lines if x["passed"] is not None]
        print(text + ("FAIL" if False in verdicts else "PASS" if verdicts else "-"))
        failed += [x["label"] for x in lines if x["passed"] is False]
    return failed


# --- main ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """Replicates of one size: null panels, the injected panel, and extras (agreement, cobbler-paper)."""

    null: int
    power: int
    extras: int


def replicate_counts(
    size: int, *, quick: bool, replicates: int | None, power: int | None, extras: int | None
) -> Counts:
    """Replicates at one size. The full run (``FULL_COUNTS``): 400 per null panel, 100 for the
    injected panel and 50 with extras; at 5250 pairs, whose reports take about 5 times longer,
    200, 25 (every injected bias but 5% self-preference is found in all of them) and 12, to keep
    the run near half an hour on 2 cores. ``--replicates N``: N, N / 4 and N / 8 at every size."""
    if quick:
        default = (4, 2, 2)
    elif replicates:
        default = (replicates, max(2, replicates // 4), max(2, replicates // 8))
    else:
        default = FULL_COUNTS.get(size, FULL_COUNTS[750])
    return Counts(
        default[0],
        power if power is not None else default[1],
        extras if extras is not None else default[2],
    )


def plan(counts: dict[int, Counts], panels: tuple[Panel, ...] = PANELS, *, humans_only: bool = False) -> list[Task]:
    """Every replicate to run, the largest studies first (they take longest: better load balance).

    ``humans_only``: the null panels' people alone (the injected panel's people are the null
    panel's), without the extras."""
    tasks = []
    for size in sorted(counts, reverse=True):
        c = counts[size]
        for panel in panels:
            if humans_only and panel.power:
                continue
            for rep in range(c.power if panel.power else c.null):
                extra = panel.extras and rep < c.extras and not humans_only
                tasks.append(Task(panel, size, rep, SEED, agreement=extra, paper=extra, humans_only=humans_only))
    return tasks


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cobbler_site.settings")
    # No database is touched; the settings module still refuses to load without a key (DEBUG off).
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-deployment-0123456789")
    import django

    django.setup()


def run(tasks: list[Task], jobs: int) -> list[dict]:
    import multiprocessing

    if jobs <= 1:
        return [r for task in tasks for r in run_replicate(task)]
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_setup_django) as pool:
        return [r for batch in pool.imap_unordered(run_replicate, tasks) for r in batch]


def _commit() -> str | None:
    """The code measured: HEAD, marked when the working tree differs from it."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "analysis"], cwd=ROOT, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + (" (analysis/ modified)" if dirty.stdout.strip() else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few replicates at 120 and 750 pairs (smoke)")
    parser.add_argument("--replicates", type=int, default=None, help="per null panel and size (400; 200 at 5250)")
    parser.add_argument("--power-replicates", type=int, default=None, help="injected panel (100; 25 at 5250)")
    parser.add_argument("--extras", type=int, default=None, help="with agreement and cobbler-paper (50; 12 at 5250)")
    parser.add_argument("--sizes", type=str, default=None, help="pairs per study, comma separated")
    parser.add_argument("--panels", type=str, default=None, help="panel names, comma separated (default: all)")
    parser.add_argument(
        "--humans-only",
        action="store_true",
        help="the people's rows alone, no judges simulated; results in validity-humans.json",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=None, help="results file (default: by the run's kind, below)")
    args = parser.parse_args()
    panels = tuple(p for p in PANELS if not args.panels or p.name in args.panels.split(","))
    default_sizes = SIZES[:2] if args.quick else SIZES
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(default_sizes)
    counts = {
        size: replicate_counts(
            size, quick=args.quick, replicates=args.replicates, power=args.power_replicates, extras=args.extras
        )
        for size in sizes
    }

    _setup_django()
    tasks = plan(counts, panels, humans_only=args.humans_only)
    started = time.perf_counter()
    records = run(tasks, args.jobs)
    seconds = time.perf_counter() - started
    entries = aggregate(records, panels)
    failed = print_table(entries)
    print(f"\n{len(tasks)} replicates in {seconds:.0f} s on {args.jobs} processes; {len(failed)} checks FAIL")
    if args.quick:
        print("(--quick: a smoke run; a handful of replicates cannot meet the Monte-Carlo bounds)")
    result = {
        "benchmark": "validity of the report's verdict claims (issue 19 item 7)",
        "commit": _commit(),
        "conditions": {
            "sizes": sizes,
            "replicates": {size: asdict(c) for size, c in counts.items()},
            "quick": args.quick,
            "jobs": args.jobs,
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
            "python": platform.python_version(),
            "seed": SEED,
            "systems": K,
            "tau_judge": [TAU_JUDGE, TAU_SD],
            "tau_human": [TAU_HUMAN, 0.4],
            "ties": TIES,
            "raters": {size: n_raters(size // len(PAIRS_OF)) for size in sizes},
            "panels": [asdict(p) for p in panels],
            "humans_only": args.humans_only,
            "targets": TARGETS,
            "power_check": POWER_CHECK,
        },
        "seconds": round(seconds, 1),
        "results": entries,
        "failed": failed,
        "passed": not failed,
    }
    if args.quick:  # a smoke run never replaces the recorded results
        return 0
    # A partial run (some panels, or the people alone) never replaces the full table either.
    path = args.out or (
        HUMANS_RESULTS
        if args.humans_only
        else RESULTS
        if not args.panels
        else RESULTS.with_name("validity-panels.json")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
