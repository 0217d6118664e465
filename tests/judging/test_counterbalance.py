"""The counterbalanced order run (docs/methods.md, "Order run counterbalancing")."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from judging import conditions, services
from judging.models import RegisteredModel


def _fake_pairs(per_instruction: dict[int, int]) -> list[SimpleNamespace]:
    pk = iter(range(1, 10_000))
    return [SimpleNamespace(pk=next(pk), instruction_id=i) for i, n in per_instruction.items() for _ in range(n)]


@pytest.mark.parametrize("seed", [0, 1, 939])
def test_the_plan_is_balanced_in_the_study_and_in_every_instruction(seed):
    # 50 instructions x 105 pairs (the paper's design) plus one odd-sized and one tiny instruction.
    sizes = dict.fromkeys(range(50), 105) | {50: 7, 51: 1}
    pairs = _fake_pairs(sizes)
    plan = conditions.a_first_plan(pairs, seed=seed, version="v1")
    total = sum(plan.values())
    assert abs(total - len(pairs) / 2) <= 1  # exactly half, +-1 (here: ceil or floor)
    per = Counter(p.instruction_id for p in pairs if plan[p.pk])
    for instruction, n in sizes.items():
        assert abs(per[instruction] - n / 2) <= 1
    # Seeded: the same seed gives the same plan, another seed another one.
    assert conditions.a_first_plan(list(reversed(pairs)), seed=seed, version="v1") == plan
    assert conditions.a_first_plan(pairs, seed=seed + 1, version="v1") != plan


def test_hand_worked_two_pairs_one_instruction_split_one_each():
    pairs = _fake_pairs({0: 2})
    for seed in range(20):
        assert sorted(conditions.a_first_plan(pairs, seed=seed, version="v1").values()) == [False, True]


def test_the_paper_prompt_version_keeps_the_authors_canonical_first_slot():
    pairs = _fake_pairs({0: 5, 1: 4})
    assert set(conditions.a_first_plan(pairs, seed=3, version="v1-paper").values()) == {True}


def _job(study, names, **kw):
    judge = RegisteredModel.objects.create(
        name=kw.pop("name", "first-slot"),
        kind="baseline",
        baseline="first-slot",
        self_candidate_key=kw.pop("self_key", ""),
    )
    return services.start_judge_job(study=study, judge=judge, condition_names=names, **kw)


def _first_shown(job, condition):
    return {j.pair_id: j.slot1_response_id for j in job.judgments.filter(condition=condition, presentation=1)}


def test_a_job_stores_the_balanced_seeded_first_slot_and_swaps_it_in_prompt_2(study):
    job = _job(study, ["order", "compassion"], seed=11, self_key="bravo")
    rows = list(job.judgments.select_related("pair", "pair__response_a__candidate", "pair__response_b__candidate"))
    by_pair: dict[tuple[int, str], dict[int, object]] = {}
    for j in rows:
        by_pair.setdefault((j.pair_id, j.condition), {})[j.presentation] = j
    a_first = Counter()
    for (_pair_id, condition), twins in by_pair.items():
        one, two = twins[1], twins[2]
        pair = one.pair
        assert {one.slot1_response_id, two.slot1_response_id} == {pair.response_a_id, pair.response_b_id}
        if condition == "order":
            a_first[pair.instruction_id] += one.slot1_response_id == pair.response_a_id
        else:  # compassion: the names move with the responses, the self marker with its slot
            first = pair.response_a if one.slot1_response_id == pair.response_a_id else pair.response_b
            assert one.cue["names"][0] == first.candidate.key
            if "bravo" in (pair.response_a.candidate.key, pair.response_b.candidate.key):
                own_first = first.candidate.key == "bravo"
                assert one.cue["self_slot"] == ("first" if own_first else "second")
                assert two.cue["self_slot"] == ("second" if own_first else "first")
    # 6 pairs per instruction: exactly 3 show response a first.
    assert sorted(a_first.values()) == [3, 3, 3]
    # Order and compassion share the pair's arrangement.
    assert _first_shown(job, "order") == _first_shown(job, "compassion")


def test_the_plan_is_deterministic_so_reruns_hit_the_cache_and_paper_jobs_stay_canonical(study):
    first = _job(study, ["order"], seed=4, name="first-slot")
    again = _job(study, ["order"], seed=4, name="first-slot-2")
    assert _first_shown(first, "order") == _first_shown(again, "order")
    hashes = lambda job: sorted(job.judgments.values_list("prompt_hash", flat=True))  # noqa: E731
    assert hashes(first) == hashes(again)  # the same prompts: the LLM cache answers a re-run
    paper = _job(study, ["order"], seed=4, name="first-slot-3", prompt_version="v1-paper")
    canonical = {j.pair_id: j.pair.response_a_id for j in paper.judgments.filter(presentation=1).select_related("pair")}
    assert _first_shown(paper, "order") == canonical
