"""How a simulated crowd worker answers: pure, seeded functions of the worker's traits and the task.

Nothing here touches the database, so the decisions can be checked in isolation (and the
driver in ``annotations.simulation.crowd`` only moves them through the real services).

A careful worker judges by a hidden quality per system plus a per-question offset that every
worker shares (some questions make one answer look better than usual), with personal noise
scaled by their sensitivity. On top of that each has a small, personal susceptibility to the
first slot, to a bandwagon cue and to a distracting sentence, to CALM's four seeded cues (a
fabricated citation, padding, a claimed refinement, an attribution to a group) and to an answer
rewritten in a confident, cheerful tone (sentiment), so the human bias rates of the report are
those of a plausible crowd. A few careless workers answer fast and without reading:
always "System A", or at random.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from annotations.biases import cot
from annotations.vocabulary import Condition, CrowdChoice

# The demo's five systems (annotations.importers.demo): correct and complete, correct and short,
# correct but padded, a few words, confidently wrong. A reader who checks the reference ranks
# them roughly in this order.
DEMO_QUALITY: Mapping[str, float] = {
    "thorough": 1.0,
    "concise": 0.8,
    "rambling": 0.2,
    "terse": -0.5,
    "wrong": -1.3,
}
# How much one question shifts a system's apparent quality, shared by every worker.
ITEM_SPREAD = 0.35
CARELESS_KINDS = ("always_a", "random")
# CALM's crowd conditions: P(follow the cue) ~ N(mean, sd) clipped to [0, high], per worker. Guesses
# in line with the CoBBLEr ones above (a claimed refinement pulls most, an attribution least).
CALM_SUSCEPTIBILITY: Mapping[str, tuple[float, float, float]] = {
    Condition.AUTHORITY: (0.08, 0.06, 0.3),
    Condition.VERBOSITY: (0.05, 0.05, 0.25),
    Condition.REFINEMENT: (0.10, 0.07, 0.35),
    Condition.IDENTITY: (0.02, 0.03, 0.1),
}
# CALM's biases a model rewrites first (sentiment), added after the four above: a guess as modest
# as authority's (a confident tone reads as competence, as a citation does).
REWRITTEN_SUSCEPTIBILITY: Mapping[str, tuple[float, float, float]] = {
    Condition.SENTIMENT: (0.06, 0.05, 0.25),
}
SUSCEPTIBILITY: Mapping[str, tuple[float, float, float]] = {**CALM_SUSCEPTIBILITY, **REWRITTEN_SUSCEPTIBILITY}


@dataclass(frozen=True)
class SimWorker:
    """The traits of one simulated worker (drawn once by ``make_crowd``)."""

    label: str
    sensitivity: float  # scales how strongly quality differences decide
    first_slot: float  # P(pick System A without weighing the answers)
    bandwagon: float  # P(follow "85% of people prefer ...")
    attentional: float  # P(pick the system a distracting sentence is about)
    median_pair_s: float  # this worker's typical seconds on a pairwise task
    careless: str = ""  # "", or one of CARELESS_KINDS
    fails_qualification: bool = False
    first_attempt_slip: bool = False  # gets one qualification item wrong at the first attempt
    # P(follow the cue) of CALM's crowd conditions (SUSCEPTIBILITY); none by default.
    authority: float = 0.0
    verbosity: float = 0.0
    refinement: float = 0.0
    identity: float = 0.0
    sentiment: float = 0.0

    @property
    def is_careless(self) -> bool:
        return bool(self.careless)


def _clip(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def _susceptibilities(rng: random.Random, table: Mapping[str, tuple[float, float, float]]) -> dict[str, float]:
    """One worker's P(follow the cue) per condition of ``table``, drawn in its order."""
    return {c: _clip(rng.gauss(mean, sd), 0.0, high) for c, (mean, sd, high) in table.items()}


def make_crowd(*, seed: int, size: int, careless: int, failing: int = 1) -> list[SimWorker]:
    """``size`` workers with seeded traits; the last ``careless`` are careless, and ``failing``
    careful ones never pass the qualification. Same arguments, same crowd."""
    if size < careless + failing + 1:
        raise ValueError("the crowd needs at least one careful worker who qualifies")
    rng = random.Random(f"simulated-crowd:{seed}")
    # CALM's susceptibilities on a stream of their own: the traits drawn above them (and so every
    # earlier condition's simulated answers) are what they were before these biases existed.
    calm_rng = random.Random(f"simulated-crowd:{seed}:calm")
    # And the rewritten biases' on another, so the four CALM traits above do not move either.
    rewritten_rng = random.Random(f"simulated-crowd:{seed}:rewritten")
    workers = []
    for i in range(size):
        is_careless = i >= size - careless
        calm = _susceptibilities(calm_rng, CALM_SUSCEPTIBILITY) | _susceptibilities(
            rewritten_rng, REWRITTEN_SUSCEPTIBILITY
        )
        workers.append(
            SimWorker(
                label=f"sim-worker-{i + 1:02d}",
                sensitivity=rng.uniform(0.6, 1.4),
                first_slot=_clip(rng.gauss(0.08, 0.06), 0.0, 0.3),
                bandwagon=_clip(rng.gauss(0.15, 0.1), 0.0, 0.45),
                attentional=_clip(rng.gauss(0.03, 0.03), 0.0, 0.1),
                median_pair_s=rng.uniform(10.0, 22.0),
                careless=CARELESS_KINDS[i % len(CARELESS_KINDS)] if is_careless else "",
                fails_qualification=not is_careless and i >= size - careless - failing,
                first_attempt_slip=not is_careless and rng.random() < 0.15,
                **calm,
            )
        )
    return workers


def item_quality(*, seed: int, quality: Mapping[str, float], instruction: int, system: str) -> float:
    """The quality of ``system``'s answer to one question, as every worker sees it (before noise)."""
    offset = random.Random(f"item-quality:{seed}:{instruction}:{system}").gauss(0.0, ITEM_SPREAD)
    return quality.get(system, 0.0) + offset


def qualification_choices(worker: SimWorker, *, gold: Sequence[str], attempt: int, rng: random.Random) -> list[str]:
    """The worker's answers ("A"/"B") to the qualification items, whose right answers are ``gold``."""
    if worker.fails_qualification:
        return [CrowdChoice.B if g == CrowdChoice.A else CrowdChoice.A for g in gold]
    if worker.is_careless and attempt == 0:
        return [rng.choice("AB") for _ in gold]
    answers = list(gold)
    if worker.first_attempt_slip and attempt == 0 and answers:
        slip = rng.randrange(len(answers))
        answers[slip] = CrowdChoice.B if answers[slip] == CrowdChoice.A else CrowdChoice.A
    return answers


def _follows(worker: SimWorker, condition: str, cue: Mapping[str, object]) -> float:
    """P(follow the cue): CALM's conditions by name; CoBBLEr's as before (a distractor, else bandwagon)."""
    if condition in SUSCEPTIBILITY:
        return float(getattr(worker, condition))
    return worker.attentional if cue.get("distractor") else worker.bandwagon


def choose_pair(
    worker: SimWorker,
    *,
    quality_a: float,
    quality_b: float,
    cue: Mapping[str, object],
    rng: random.Random,
    condition: str = "",
) -> str:
    """The slot ("A" or "B") this worker picks for a pair shown with ``cue`` under ``condition``.

    Every cue costs one draw whatever the condition, so a worker's draws line up across them.
    """
    if worker.careless == "always_a":
        return CrowdChoice.A
    if worker.careless == "random":
        return rng.choice("AB")
    cue_slot = cue.get("cue_slot")
    # cot: the reasoning written first (annotations.biases.cot) weakens the habit and sharpens the read.
    focus = cot.SIMULATED_FOCUS if condition == Condition.COT else 0.0
    if rng.random() < worker.first_slot * (1 - focus):
        return CrowdChoice.A
    if cue_slot in (CrowdChoice.A, CrowdChoice.B) and rng.random() < _follows(worker, condition, cue):
        return str(cue_slot)
    # Thurstone-like: a larger quality gap decides more reliably, a sensitive worker more so.
    p_a = 1.0 / (1.0 + math.exp(-2.5 * worker.sensitivity * (1 + focus) * (quality_a - quality_b)))
    return CrowdChoice.A if rng.random() < p_a else CrowdChoice.B


def reasoning(*, quality_a: float, quality_b: float, rng: random.Random) -> str:
    """A simulated worker's written reasoning on a cot task: long enough to pass, naming the
    better-looking answer (no draw of ``choose_pair``'s stream: ``rng`` is the caller's own)."""
    better, worse = ("System A", "System B") if quality_a >= quality_b else ("System B", "System A")
    detail = rng.choice(("follows the reference more closely", "answers the question asked", "makes fewer mistakes"))
    return f"Step by step: {better} {detail}; {worse} leaves out part of what the instruction asks for."


def rank_answers(
    worker: SimWorker, *, shown: Sequence[int], quality_of: Mapping[int, float], rng: random.Random
) -> tuple[list[int], int]:
    """(response ids best first, how many sit above the "acceptable" bar) for a ranking task.

    Careful workers order by quality plus personal noise, drawn in id order so the ranking does
    not depend on the shown order (which the services seed by database ids); careless ones
    submit the page as it loaded (the shown order, the bar still on top), which the services
    store as an untouched ranking.
    """
    if worker.is_careless:
        return list(shown), 0
    noise = 0.85 / worker.sensitivity
    score = {rid: quality_of[rid] + rng.gauss(0.0, noise) for rid in sorted(shown)}
    ranking = sorted(shown, key=lambda rid: -score[rid])
    acceptable = sum(1 for rid in ranking if score[rid] > 0.0)
    return ranking, acceptable


def task_seconds(worker: SimWorker, *, ranking: bool, rng: random.Random) -> float:
    """Seconds on one task: lognormal around the worker's pace (rankings take ~5 pairs' time)."""
    if worker.is_careless:
        return rng.uniform(1.5, 3.5) if ranking else rng.uniform(1.0, 2.0)
    median = worker.median_pair_s * (5.0 if ranking else 1.0)
    low, high = (40.0, 240.0) if ranking else (6.0, 60.0)
    return _clip(rng.lognormvariate(math.log(median), 0.4), low, high)
