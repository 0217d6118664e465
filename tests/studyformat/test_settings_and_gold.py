"""settings.jsonl and gold.jsonl: a study's task and quality settings and its gold pairs go out
with export_study and come back with import_study, byte for byte; bad lines change nothing."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Pair, Study
from tests.studyformat.conftest import copy_sample, rows, run_import, write_rows

pytestmark = pytest.mark.django_db
SETTINGS = {
    "allow_ties": True,
    "rationale": "optional",
    "attention_check_rate": 0.1,
    "gold_rate": 0.05,
    "surveys": {"post": [{"id": "clear", "text": "Were the tasks clear?", "kind": "choice", "choices": ["yes", "no"]}]},
    "quality_rules": {"min_median_seconds": 6.0},
}
GOLD = [{"instruction_id": "q1", "model_a": "owl-7b", "model_b": "heron-13b", "gold": "model_b"}]


def _export(slug: str, out) -> None:
    call_command("export_study", "--study", slug, str(out), stdout=io.StringIO())


def _gold(study: Study) -> list[tuple[str, str, str]]:
    return sorted(
        Pair.objects.filter(instruction__study=study, gold_response__isnull=False).values_list(
            "response_a__candidate__key", "response_b__candidate__key", "gold_response__candidate__key"
        )
    )


def test_settings_and_gold_round_trip(tmp_path):
    root = copy_sample(tmp_path / "in")
    write_rows(root / "settings.jsonl", [SETTINGS])
    write_rows(root / "gold.jsonl", GOLD)
    run_import(root, "gold")
    study = Study.objects.get(slug="gold")
    assert (study.allow_ties, study.rationale, study.attention_check_rate, study.gold_rate) == (
        True,
        "optional",
        0.1,
        0.05,
    )
    assert study.quality_rules == {"min_median_seconds": 6.0} and study.surveys["post"][0]["id"] == "clear"
    assert _gold(study) == [("owl-7b", "heron-13b", "heron-13b")]
    _export("gold", tmp_path / "e1")
    assert rows(tmp_path / "e1" / "gold.jsonl") == GOLD
    assert rows(tmp_path / "e1" / "settings.jsonl")[0]["quality_rules"] == {"min_median_seconds": 6.0}
    run_import(tmp_path / "e1", "gold-copy")
    _export("gold-copy", tmp_path / "e2")
    for name in ("settings.jsonl", "gold.jsonl", "votes.jsonl"):
        assert (tmp_path / "e1" / name).read_bytes() == (tmp_path / "e2" / name).read_bytes(), name
    # Without gold.jsonl a re-import leaves no gold pair; an export of default settings writes no settings file.
    (root / "gold.jsonl").unlink()
    (root / "settings.jsonl").unlink()
    run_import(root, "gold")
    assert _gold(Study.objects.get(slug="gold")) == []
    Study.objects.filter(slug="gold").update(
        allow_ties=False, rationale="off", attention_check_rate=0, gold_rate=0, surveys={}, quality_rules={}
    )
    _export("gold", tmp_path / "e1")
    assert not (tmp_path / "e1" / "settings.jsonl").exists() and not (tmp_path / "e1" / "gold.jsonl").exists()


@pytest.mark.parametrize(
    ("name", "lines", "message"),
    [
        (
            "settings.jsonl",
            [{"quality_rules": {"min_median_seconds": "slow"}}],
            "settings.jsonl:1: Quality rule 'min_median_seconds' must be a number",
        ),
        ("settings.jsonl", [{"surveys": {"during": []}}], "settings.jsonl:1: Unknown survey phase"),
        ("settings.jsonl", [{"gold_rate": 0.9}], "settings.jsonl:1: gold_rate"),
        ("settings.jsonl", [{}, {}], "settings.jsonl:2: settings.jsonl holds one line"),
        ("gold.jsonl", [{**GOLD[0], "model_b": "nobody"}], "gold.jsonl:1: model 'nobody' has no response"),
        (
            "gold.jsonl",
            [GOLD[0], {**GOLD[0], "model_a": "heron-13b", "model_b": "owl-7b"}],
            "gold.jsonl:2: duplicate gold pair",
        ),
        ("gold.jsonl", [{**GOLD[0], "gold": "owl-7b"}], "gold.jsonl:1: gold must be model_a or model_b"),
    ],
)
def test_a_bad_extra_line_is_one_clear_error_and_imports_nothing(tmp_path, name, lines, message):
    root = copy_sample(tmp_path / "in")
    write_rows(root / name, lines)
    with pytest.raises(CommandError) as error:
        run_import(root, "bad")
    assert str(error.value).startswith(message), str(error.value)
    assert not Study.objects.filter(slug="bad").exists()
