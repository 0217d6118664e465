"""import_cobbler on corrupted copies: one-line error naming file and row/element, database unchanged."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Study
from tests.conftest import COBBLER_DIR
from tests.importers.conftest import COBBLER_SLUG, mirror_tree, table_counts

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _rewrite_csv(path: Path, change: Callable[[list[dict[str, str]]], None]) -> None:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    change(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _rewrite_json(path: Path, change: Callable[[list], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _break_evalset(path: Path) -> None:
    path.write_text(path.read_text()[:5000])  # truncated mid-array


def _break_ranking_answer(path: Path) -> None:
    _rewrite_csv(path, lambda rows: rows[1].update({"Answer.taskAnswers": '[{"amt_output_toy": "not json"}]'}))


def _swap_in_model_annot(path: Path) -> None:
    def swap(rows: list[dict[str, str]]) -> None:
        rows[7]["rank_1"], rows[7]["rank_2"] = rows[7]["rank_2"], rows[7]["rank_1"]

    _rewrite_csv(path, swap)


def _change_system_b(path: Path) -> None:
    _rewrite_json(path, lambda items: items[4].update({"System B": "A different answer."}))


def _negative_wins(path: Path) -> None:
    _rewrite_json(path, lambda items: items[3].update({"gpt4": -1}))


CASES = [
    ("datasets/llm_preference_evalset.json", _break_evalset, "datasets/llm_preference_evalset.json:", "invalid JSON"),
    (
        "human/batches/AMT/batch_mid_1.csv",
        _break_ranking_answer,
        "human/batches/AMT/batch_mid_1.csv: row 2",
        "amt_output_toy",
    ),
    (
        "human/batches/AMT/model_annot3.csv",
        _swap_in_model_annot,
        "human/batches/AMT/model_annot3.csv",
        "0 workers' decoded rankings match it",
    ),
    (
        "human/batches/human_bias/distraction/real/random_sampled_examples_distraction_7.json",
        _change_system_b,
        "random_sampled_examples_distraction_7.json: element 4",
        "System B text differs",
    ),
    (
        "human/batches/model_bias/selective/nC2_preferences_gpt4.json",
        _negative_wins,
        "human/batches/model_bias/selective/nC2_preferences_gpt4.json: element 3",
        "must be a count",
    ),
]


@pytest.mark.parametrize(("relative", "corrupt", "where", "what"), CASES, ids=[c[0].split("/")[-1] for c in CASES])
def test_bad_input_names_the_place_and_changes_nothing(cobbler_import, tmp_path, relative, corrupt, where, what):
    broken = mirror_tree(COBBLER_DIR, tmp_path / "cobbler", except_file=Path(relative))
    corrupt(broken)
    before = table_counts()
    for slug in (COBBLER_SLUG, "cobbler-fresh"):  # re-import over existing data, and a first import
        with pytest.raises(CommandError) as caught:
            call_command("import_cobbler", str(tmp_path / "cobbler"), "--study", slug, stdout=io.StringIO())
        message = str(caught.value)
        assert "\n" not in message and where in message and what in message, message
        assert table_counts() == before
    assert not Study.objects.filter(slug="cobbler-fresh").exists()


def test_it_refuses_a_study_of_another_source(db, tmp_path):
    Study.objects.create(slug="mine", name="Mine", source=Study.Source.MANUAL)
    with pytest.raises(CommandError, match="study exists with source 'manual'"):
        call_command("import_cobbler", str(COBBLER_DIR), "--study", "mine", stdout=io.StringIO())


def test_a_missing_directory_is_one_line(db, tmp_path):
    with pytest.raises(CommandError, match="not a directory"):
        call_command("import_cobbler", str(tmp_path / "nope"), "--study", "x", stdout=io.StringIO())


def test_a_bad_study_slug_is_one_line(db):
    before = table_counts()
    with pytest.raises(CommandError, match="must be a slug"):
        call_command("import_cobbler", str(COBBLER_DIR), "--study", "no spaces please", stdout=io.StringIO())
    assert table_counts() == before
