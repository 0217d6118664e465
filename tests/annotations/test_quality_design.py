"""Attention checks and gold items injected into generated batches (annotations.services.design)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from annotations import services
from annotations.models import Batch, Study, Task
from annotations.quality.checks import INSTRUCTED_TEXT, broken_text, check_count
from tests.annotations.conftest import build_study
from tests.annotations.quality_kit import set_gold

pytestmark = pytest.mark.django_db

SNAPSHOT = Path(__file__).resolve().parent.parent / "fixtures" / "design_snapshot_seed2024.json"
# The designs the snapshot was taken of, with the code before checks existed.
SNAPSHOT_DESIGNS = (("order", 4), ("bandwagon", 6), ("attentional", 3), ("plain", 5), ("ranking", 15))


def task_row(t: Task) -> list:
    """A task by what it shows, in candidate keys (so two studies with other row ids compare)."""
    pair = [t.pair.response_a.candidate.key, t.pair.response_b.candidate.key] if t.pair else None
    return [
        t.position,
        t.kind,
        t.condition,
        t.instruction.index,
        pair,
        t.arrangement,
        t.cue,
        t.pair_index,
        len(t.response_ids),
        t.show_threshold_bar,
    ]


def tasks_of(batch: Batch) -> list[Task]:
    return list(
        batch.tasks.select_related(
            "instruction", "pair__response_a__candidate", "pair__response_b__candidate"
        ).order_by("position")
    )


def design_snapshot(study: Study) -> list:
    return [
        [b.condition, b.index, b.seed, b.label, [task_row(t) for t in tasks_of(b)]]
        for b in Batch.objects.filter(study=study).order_by("condition", "index")
    ]


def test_with_both_rates_zero_batches_are_what_they_were_before_checks():
    study = build_study("snap", instructions=3)
    assert (study.attention_check_rate, study.gold_rate) == (0, 0)
    for condition, per_batch in SNAPSHOT_DESIGNS:
        services.generate_batches(study=study, condition=condition, seed=2024, pairs_per_batch=per_batch)
    # JSON round trip: the snapshot holds lists where the rows hold tuples.
    assert json.loads(json.dumps(design_snapshot(study))) == json.loads(SNAPSHOT.read_text())
    assert not Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM).exists()


def test_gold_pairs_without_a_gold_rate_add_nothing():
    study = build_study("gold-off", instructions=1)
    set_gold(study, "alpha", "beta", "alpha")
    [batch] = services.generate_batches(study=study, condition="order", seed=5, pairs_per_batch=4)
    assert {t.role for t in batch.tasks.all()} == {Task.Role.ITEM} and batch.tasks.count() == 8


@pytest.mark.parametrize("condition", ["order", "bandwagon", "attentional", "plain"])
def test_checks_are_added_at_the_rate_and_items_keep_their_order(condition):
    plain = build_study(f"plain-{condition}", instructions=2)
    checked = build_study(f"checked-{condition}", instructions=2, attention_check_rate=0.25, gold_rate=0.1)
    set_gold(checked, "alpha", "gamma", "gamma")
    before = services.generate_batches(study=plain, condition=condition, seed=9, pairs_per_batch=5)
    after = services.generate_batches(study=checked, condition=condition, seed=9, pairs_per_batch=5)
    for old, new in zip(before, after, strict=True):
        items = [t for t in tasks_of(new) if t.role == Task.Role.ITEM]
        checks = [t for t in tasks_of(new) if t.role != Task.Role.ITEM]
        n_items = len(items)
        assert n_items == 10
        n_attention, n_gold = check_count(0.25, n_items), check_count(0.1, n_items)
        assert (n_attention, n_gold) == (3, 1)  # 2.5 rounds half up
        assert len(checks) == n_attention + n_gold
        # Instructed and catch alternate (in position order), then the gold items.
        assert [t.role for t in checks if t.role != Task.Role.GOLD] == (["instructed", "catch"] * n_attention)[
            :n_attention
        ]
        assert sum(t.role == Task.Role.GOLD for t in checks) == n_gold
        # The items are the design without checks, in the same order (twins spread as before).
        assert [task_row(t)[1:] for t in items] == [task_row(t)[1:] for t in tasks_of(old)]
        assert 0 not in {t.position for t in checks}  # a warm-up item opens every batch
        assert sorted(t.position for t in tasks_of(new)) == list(range(n_items + len(checks)))
        for t in checks:
            assert (t.kind, t.condition, t.pair_index) == ("pairwise", condition, None)
            assert t.pair is not None and t.arrangement in ("ab", "ba")
            if condition in ("bandwagon", "attentional"):
                assert t.cue["cue_slot"] in ("A", "B")
            else:
                assert t.cue == {"order": "first"}


def test_check_expectations_match_what_is_shown():
    study = build_study("expects", instructions=3, attention_check_rate=0.5, gold_rate=0.2)
    gold = set_gold(study, "beta", "delta", "delta")
    services.generate_batches(study=study, condition="bandwagon", seed=3, pairs_per_batch=4)
    checks = Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM).select_related("pair")
    seen = dict.fromkeys(Task.Role.values, 0)
    for t in checks:
        seen[t.role] += 1
        slot = t.expects["slot"]
        assert slot in ("A", "B")
        shown = dict(zip("AB", t.slot_responses(), strict=True))
        if t.role == Task.Role.INSTRUCTED:
            assert (
                t.expects["text"] == INSTRUCTED_TEXT.format(slot=slot) and f"choose System {slot}" in t.expects["text"]
            )
        elif t.role == Task.Role.CATCH:
            broken = t.expects["broken_slot"]
            assert broken != slot and broken in ("A", "B")
            assert t.expects["broken_text"] != shown[broken].text
            assert set(t.expects["broken_text"].split()) - set(shown[broken].text.lower().split())  # gibberish added
        else:
            assert t.pair_id == gold.pk and shown[slot].pk == gold.gold_response_id
        assert t.instruction_id == t.pair.instruction_id
    # 3 batches of 8 items: 4 attention checks and 2 gold items each.
    assert seen == {"item": 0, "instructed": 3 * 2, "catch": 3 * 2, "gold": 3 * 2}
    # Attention checks use a pair of the batch's own instruction.
    for t in checks.exclude(role=Task.Role.GOLD).select_related("batch"):
        assert t.batch.label == f"instruction {t.instruction.index}"


def test_the_same_seed_gives_the_same_checks_and_another_seed_other_positions():
    designs = []
    for slug, seed in (("one", 4), ("two", 4), ("three", 5)):
        study = build_study(slug, instructions=1, attention_check_rate=0.3)
        [batch] = services.generate_batches(study=study, condition="order", seed=seed, pairs_per_batch=6)
        designs.append([(task_row(t), t.role, t.expects) for t in tasks_of(batch)])
    assert designs[0] == designs[1]
    assert [row[0][0] for row in designs[0] if row[1] != "item"] != [
        row[0][0] for row in designs[2] if row[1] != "item"
    ]


@pytest.mark.parametrize(("field", "rate"), [("attention_check_rate", 1.5), ("gold_rate", -0.1)])
def test_a_rate_outside_zero_to_one_is_refused_and_nothing_is_stored(field, rate):
    study = build_study("bad-rate", instructions=1, **{field: rate})
    with pytest.raises(ValidationError, match=f"{field} must be between 0 and 1"):
        services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=2)
    assert not Batch.objects.filter(study=study).exists()


def test_a_small_rate_still_adds_one_check():
    assert check_count(0.01, 4) == 1 and check_count(0, 30) == 0 and check_count(0.1, 30) == 3
    assert check_count(0.25, 10) == 3 and check_count(0.25, 6) == 2  # half up, not Python's half to even


def test_a_broken_text_is_seeded_and_never_the_answer():
    import random

    text = "Yes. The Pacific Ocean covers about a third of the surface of the Earth."
    assert broken_text(text, random.Random(1)) == broken_text(text, random.Random(1))
    for seed in range(20):
        broken = broken_text(text, random.Random(seed))
        assert broken != text and broken.endswith("...") and len(broken.split()) >= 6
    assert broken_text("Yes", random.Random(0)) != "Yes"
