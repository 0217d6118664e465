from __future__ import annotations

import json
from collections import Counter
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotations import services
from annotations.models import Batch, Task
from tests.annotations.conftest import build_cobbler_study, build_study
from tests.conftest import COBBLER_DIR

PAPER_IDS = [40, 7, 1, 17, 15, 14, 8, 6, 34, 5, 37, 27, 2, 47, 49, 13, 44, 32, 36, 46, 42, 22, 20, 28, 30]
PAPER_PAIRS = [
    ("H", "M"),
    ("B", "C"),
    ("A", "E"),
    ("J", "O"),
    ("C", "L"),
    ("C", "H"),
    ("C", "E"),
    ("B", "F"),
    ("A", "O"),
    ("I", "L"),
    ("G", "H"),
    ("A", "M"),
    ("G", "N"),
    ("E", "J"),
    ("A", "F"),
]
BIAS_DIRS = {"order": "order", "bandwagon": "bandwagon", "attentional": "distraction"}
needs_data = pytest.mark.skipif(not COBBLER_DIR.is_dir(), reason="the shared CoBBLEr data is not present")


def test_it_reproduces_the_paper_sample_constants():
    assert services.cobbler_instruction_ids() == PAPER_IDS
    assert services.cobbler_letter_pairs() == PAPER_PAIRS


def _slot_keys(task: Task) -> tuple[str, str]:
    a, b = task.slot_responses()
    return a.candidate.key, b.candidate.key


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("condition", ["order", "bandwagon", "attentional"])
def test_it_generates_the_original_human_bias_batches(db, condition):
    study = build_cobbler_study()
    letter_map = services.load_cobbler_letter_map(COBBLER_DIR)
    batches = services.generate_cobbler_batches(study=study, condition=condition, letter_map=letter_map)

    assert len(batches) == 25
    assert Task.objects.filter(batch__study=study).count() == 750
    real = COBBLER_DIR / "human" / "batches" / "human_bias" / BIAS_DIRS[condition] / "real"
    for k, batch in enumerate(batches, start=1):
        tasks = list(
            batch.tasks.select_related("instruction", "pair__response_a__candidate", "pair__response_b__candidate")
        )
        assert {t.instruction.index for t in tasks} == {PAPER_IDS[k - 1]}
        ours = Counter((t.pair_index, *_slot_keys(t), t.cue.get("cue_slot") or t.cue.get("order")) for t in tasks)
        source = json.loads((real / f"random_sampled_examples_{BIAS_DIRS[condition]}_{k}.json").read_text())
        theirs = Counter(
            (
                row["pair_idx"],
                row["Model A"],
                row["Model B"],
                {"order": row.get("order"), "bandwagon": row.get("bandwagon_order")}.get(condition),
            )
            for row in source
        )
        if condition == "attentional":  # which side the distractor names: read it off the sentence
            theirs = Counter((r["pair_idx"], r["Model A"], r["Model B"]) for r in source)
            ours = Counter((t.pair_index, *_slot_keys(t)) for t in tasks)
            assert sorted(t.cue["cue_slot"] for t in tasks) == ["A"] * 15 + ["B"] * 15
        assert ours == theirs, f"batch k={k}"


def test_a_fresh_design_is_counterbalanced_and_reproducible(db):
    study = build_study("fresh", instructions=3)
    batches = services.generate_batches(study=study, condition="order", seed=11, pairs_per_batch=4)
    assert [b.tasks.count() for b in batches] == [8, 8, 8]
    for batch in batches:
        tasks = list(batch.tasks.all())
        by_pair = Counter(t.pair_id for t in tasks)
        assert set(by_pair.values()) == {2}
        # Each pair is shown both ways round; half the pairs start with the earlier candidate.
        for pair_id in by_pair:
            assert {t.arrangement for t in tasks if t.pair_id == pair_id} == {"ab", "ba"}
        firsts = Counter(t.arrangement for t in tasks if t.cue["order"] == "first")
        assert firsts == {"ab": 2, "ba": 2}
        assert all(a.pair_index != b.pair_index for a, b in zip(tasks, tasks[1:], strict=False))
    signature = [(t.batch.index, t.position, t.pair_id, t.arrangement) for t in Task.objects.filter(batch__study=study)]

    other = build_study("fresh-2", instructions=3)
    services.generate_batches(study=other, condition="order", seed=11, pairs_per_batch=4)
    pair_key = {
        t.pair_id: (t.pair.response_a.candidate.key, t.pair.response_b.candidate.key) for t in Task.objects.all()
    }
    again = [
        (t.batch.index, t.position, pair_key[t.pair_id], t.arrangement) for t in Task.objects.filter(batch__study=other)
    ]
    assert [(i, p, pair_key[pk], pr) for i, p, pk, pr in signature] == again


def test_bandwagon_cues_each_side_once_per_pair(db):
    study = build_study("bw", instructions=1, bandwagon_percent=70)
    [batch] = services.generate_batches(study=study, condition="bandwagon", seed=3, pairs_per_batch=6)
    tasks = list(batch.tasks.all())
    for pair_id in {t.pair_id for t in tasks}:
        twins = [t for t in tasks if t.pair_id == pair_id]
        assert sorted(t.cue["cue_slot"] for t in twins) == ["A", "B"]
        assert {t.arrangement for t in twins} == {twins[0].arrangement}
        assert all(t.cue["percent"] == 70 for t in twins)


def test_it_refuses_a_second_generation_and_changes_nothing(db):
    study = build_study("twice", instructions=1)
    services.generate_batches(study=study, condition="order", seed=1)
    before = Task.objects.count()
    with pytest.raises(ValidationError):
        services.generate_batches(study=study, condition="order", seed=2)
    assert Task.objects.count() == before


def test_ranking_batches_carry_the_bar(db):
    study = build_study("rank", instructions=3)
    batches = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=2)
    assert [b.tasks.count() for b in batches] == [2, 1]
    task = batches[0].tasks.first()
    assert task.kind == "ranking" and task.show_threshold_bar and len(task.response_ids) == 4


def test_the_command_generates_and_fails_cleanly(db):
    build_study("cmd", instructions=2)
    out = StringIO()
    call_command("generate_batches", "--study", "cmd", "--condition", "attentional", "--seed", "5", stdout=out)
    assert "2 attentional batches, 24 tasks" in out.getvalue()
    with pytest.raises(CommandError, match="already has"):
        call_command("generate_batches", "--study", "cmd", "--condition", "attentional", "--seed", "5")
    with pytest.raises(CommandError, match="not found"):
        call_command("generate_batches", "--study", "cmd", "--condition", "order", "--cobbler-design", "/nonexistent")
    assert Batch.objects.filter(condition="order").count() == 0
