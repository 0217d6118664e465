"""Gold labels stored on pairs reach the report: its JSON (schema-valid), summary, CSV and HTML."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from analysis.exporters import export, validate
from analysis.services import compose_report
from annotations.models import Instruction, Pair
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study

pytestmark = pytest.mark.django_db


def _gold_study():
    """The worked MT-Bench study (test_length_builders) with three gold pairs and categories.

    Gold: Q1 x (over y), Q2 z (over x), Q3 y (over z); Q1 and Q2 are "math", Q3 has no category.
    """
    study = mtbench_study(slug="gold", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)
    for qid, winner in ((1, "x"), (2, "z"), (3, "y")):
        pair = Pair.objects.get(instruction__study=study, instruction__external_id=str(qid))
        gold = pair.response_a if pair.response_a.candidate.key == winner else pair.response_b
        pair.gold_response = gold
        pair.save()
    Instruction.objects.filter(study=study, external_id__in=["1", "2"]).update(kind="math")
    return study


def test_gold_accuracy_rows_from_the_database():
    report = compose_report(study=_gold_study(), profile="default")
    validate(report)
    rows = {(r["subject"], r["category"]): r for r in report["gold_accuracy"]}
    assert list(rows) == [("humans", None), ("humans", "math"), ("gpt-4", None), ("gpt-4", "math")]
    # gpt-4's one plain verdict per pair: Q1 x (gold), Q2 z (gold), Q3 z (gold y) -> 2 of 3.
    judge = rows["gpt-4", None]
    assert (judge["n"], judge["correct"], judge["both_orders"], judge["gold_pairs"]) == (3, 2, 0, 3)
    # One vote per rater and pair: Q1 e1 x yes, e2 x yes, e3 tie no; Q2 e1 z yes, e2 z yes;
    # Q3 e1 y yes, e2 z no, e3 y yes -> 6 of 8 units, 3 raters, 3 instructions.
    people = rows["humans", None]
    assert (people["n"], people["correct"], people["raters"], people["instructions"]) == (8, 6, 3, 3)
    assert people["ci95"][0] < 0.75 < people["ci95"][1]
    # Math (Q1, Q2): gpt-4 2 of 2; people 4 of 5.
    assert (rows["gpt-4", "math"]["correct"], rows["gpt-4", "math"]["n"]) == (2, 2)
    assert (rows["humans", "math"]["correct"], rows["humans", "math"]["n"]) == (4, 5)
    cards = {c["subject"]: c for c in report["summary"]}
    for subject in ("humans", "gpt-4"):
        assert [c["statistic"] for c in cards[subject]["claims"] if c["kind"] == "accuracy"] == ["gold_accuracy"]
    assert "gold_accuracy" not in report["no_data"]


def test_gold_accuracy_in_the_csv_and_html_exports():
    report = compose_report(study=_gold_study(), profile="default")
    archive = zipfile.ZipFile(io.BytesIO(export(report, "csv")))
    lines = archive.read("gold_accuracy.csv").decode().splitlines()
    assert lines[0].startswith("subject,category,value,n,ci95_low,ci95_high,correct,unit,pairs")
    assert len(lines) == 1 + 4
    html = export(report, "html").decode()
    assert 'data-table="gold_accuracy"' in html and 'data-legend="gold_accuracy"' in html
    assert "Accuracy on gold labels follows JudgeBench" in html


def test_a_study_without_gold_has_no_rows_and_says_why():
    report = compose_report(
        study=mtbench_study(slug="nogold", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS),
        profile="default",
    )
    assert report["gold_accuracy"] == []
    assert "gold labels" in report["no_data"]["gold_accuracy"]["reason"]
    assert not [c for card in report["summary"] for c in card["claims"] if c["kind"] == "accuracy"]
    validate(json.loads(export(report, "json")))
