"""The simulated crowd's behaviour: seeded traits, noisy but quality-driven choices, biases that show.

Pure functions (annotations.simulation.behaviour), so every claim is checked over many draws
without a database; the run through the real services is tested in tests/importers/test_seed_demo.py.
"""

from __future__ import annotations

import random
from dataclasses import replace
from statistics import median

import pytest

from annotations.simulation.behaviour import (
    SimWorker,
    choose_pair,
    make_crowd,
    qualification_choices,
    rank_answers,
    task_seconds,
)

DRAWS = 4000
CAREFUL = SimWorker(
    label="careful", sensitivity=1.0, first_slot=0.0, bandwagon=0.0, attentional=0.0, median_pair_s=15.0
)


def _share(worker: SimWorker, *, quality_a: float, quality_b: float, cue: dict | None = None, pick: str = "A") -> float:
    rng = random.Random(7)
    picks = [
        choose_pair(worker, quality_a=quality_a, quality_b=quality_b, cue=cue or {}, rng=rng) for _ in range(DRAWS)
    ]
    return picks.count(pick) / DRAWS


def test_the_crowd_is_seeded_and_has_its_careless_and_failing_members():
    crowd = make_crowd(seed=2024, size=48, careless=4)
    assert crowd == make_crowd(seed=2024, size=48, careless=4)
    assert crowd != make_crowd(seed=2025, size=48, careless=4)
    assert [w.label for w in crowd[:2]] == ["sim-worker-01", "sim-worker-02"]
    assert sum(w.is_careless for w in crowd) == 4
    assert {w.careless for w in crowd if w.is_careless} == {"always_a", "random"}
    assert sum(w.fails_qualification for w in crowd) == 1
    # Susceptibilities differ from worker to worker and stay small.
    assert len({w.bandwagon for w in crowd}) > 40
    assert all(0 <= w.first_slot <= 0.3 and 0 <= w.bandwagon <= 0.45 and 0 <= w.attentional <= 0.1 for w in crowd)


def test_a_crowd_without_a_careful_worker_is_refused():
    with pytest.raises(ValueError, match="careful worker"):
        make_crowd(seed=1, size=3, careless=2, failing=1)


def test_a_careful_worker_prefers_the_better_answer_but_not_always():
    clear = _share(CAREFUL, quality_a=1.0, quality_b=-1.3)
    close = _share(CAREFUL, quality_a=1.0, quality_b=0.8)
    assert 0.95 < clear < 1.0
    assert 0.5 < close < 0.75  # near-equal answers are close to a coin flip
    assert _share(CAREFUL, quality_a=-1.3, quality_b=1.0) < 0.05  # the slot does not matter


def test_position_bandwagon_and_distractor_susceptibility_move_the_choice():
    equal = {"quality_a": 0.5, "quality_b": 0.5}
    assert _share(CAREFUL, **equal) == pytest.approx(0.5, abs=0.03)
    assert _share(replace(CAREFUL, first_slot=0.3), **equal) == pytest.approx(0.65, abs=0.03)
    bandwagon = {"cue_slot": "B", "percent": 85}
    assert _share(replace(CAREFUL, bandwagon=0.4), **equal, cue=bandwagon, pick="B") == pytest.approx(0.7, abs=0.03)
    # A distracting sentence pulls by the attentional susceptibility, not the bandwagon one.
    distractor = {"cue_slot": "B", "distractor": "System B plays a lot of soccer and basketball."}
    assert _share(replace(CAREFUL, bandwagon=0.4), **equal, cue=distractor, pick="B") == pytest.approx(0.5, abs=0.03)
    assert _share(replace(CAREFUL, attentional=0.1), **equal, cue=distractor, pick="B") == pytest.approx(0.55, abs=0.03)


def test_careless_workers_do_not_read():
    always_a = replace(CAREFUL, careless="always_a")
    assert _share(always_a, quality_a=-1.3, quality_b=1.0) == 1.0
    assert _share(replace(CAREFUL, careless="random"), quality_a=-1.3, quality_b=1.0) == pytest.approx(0.5, abs=0.03)
    ranking, acceptable = rank_answers(
        always_a, shown=[5, 3, 9, 1], quality_of={5: -1, 3: 0, 9: 1, 1: 2}, rng=random.Random(1)
    )
    assert (ranking, acceptable) == ([5, 3, 9, 1], 0)  # as the page loaded: the bar still on top


def test_rankings_are_noisy_orderings_of_the_hidden_quality():
    quality = {1: 1.0, 2: 0.8, 3: 0.2, 4: -0.5, 5: -1.3}
    rng = random.Random(3)
    rankings = [rank_answers(CAREFUL, shown=[5, 4, 3, 2, 1], quality_of=quality, rng=rng) for _ in range(500)]
    tops = [ranking[0] for ranking, _bar in rankings]
    assert tops.count(1) + tops.count(2) > 0.8 * len(tops)  # a correct answer comes first
    assert len({tuple(ranking) for ranking, _bar in rankings}) > 10  # but people differ
    # The bar sits below the answers judged acceptable (quality above zero), on average about three.
    assert 2.5 < sum(bar for _r, bar in rankings) / len(rankings) < 3.5


def test_qualification_answers_slip_once_and_fail_for_the_failing_worker():
    gold = ["A", "B", "A"]
    rng = random.Random(0)
    assert qualification_choices(CAREFUL, gold=gold, attempt=0, rng=rng) == gold
    slipped = qualification_choices(replace(CAREFUL, first_attempt_slip=True), gold=gold, attempt=0, rng=rng)
    assert sum(a != g for a, g in zip(slipped, gold, strict=True)) == 1
    assert qualification_choices(replace(CAREFUL, first_attempt_slip=True), gold=gold, attempt=1, rng=rng) == gold
    failing = replace(CAREFUL, fails_qualification=True)
    assert all(a != g for a, g in zip(qualification_choices(failing, gold=gold, attempt=1, rng=rng), gold, strict=True))


def test_times_are_human_for_careful_workers_and_instant_for_careless_ones():
    rng = random.Random(5)
    pairs = [task_seconds(CAREFUL, ranking=False, rng=rng) for _ in range(2000)]
    rankings = [task_seconds(CAREFUL, ranking=True, rng=rng) for _ in range(500)]
    careless = [task_seconds(replace(CAREFUL, careless="random"), ranking=False, rng=rng) for _ in range(500)]
    assert 13 < median(pairs) < 17 and min(pairs) >= 6 and max(pairs) <= 60
    assert 65 < median(rankings) < 85 and min(rankings) >= 40
    assert min(careless) >= 1 and max(careless) <= 2
