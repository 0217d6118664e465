"""import -> export -> import round-trips, and a report on an imported generic study shows the human side."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Candidate, Instruction, Response, Study
from tests.studyformat.conftest import FILES, SAMPLE, content, rows, run_import

pytestmark = pytest.mark.django_db


def _export(slug: str, out) -> str:
    buffer = io.StringIO()
    call_command("export_study", "--study", slug, str(out), stdout=buffer)
    return buffer.getvalue()


def test_import_export_import_round_trips_byte_for_byte(tmp_path):
    run_import(SAMPLE, "original")
    _export("original", tmp_path / "e1")
    assert sorted(p.name for p in (tmp_path / "e1").iterdir()) == sorted(FILES)
    run_import(tmp_path / "e1", "copy")
    # The same content (annotators are pseudonyms from the first import on, so their keyed
    # hashes differ; their labels, answers and everything else are equal).
    assert content(Study.objects.get(slug="copy")) == content(Study.objects.get(slug="original"))
    _export("copy", tmp_path / "e2")
    for name in FILES:
        assert (tmp_path / "e1" / name).read_bytes() == (tmp_path / "e2" / name).read_bytes(), name
    # The export is the same data: every sample vote, with its winner and presentation.
    exported = rows(tmp_path / "e1" / "votes.jsonl")
    assert len(exported) == len(rows(SAMPLE / "votes.jsonl"))
    assert {v["annotator"] for v in exported} == {"annotator-1", "annotator-2", "annotator-3"}
    shown_first = sorted(
        (
            v["instruction_id"],
            v["annotator"][-1],
            v[v["presented_first"]],
            v["condition"],
            "tie" if v["winner"] == "tie" else v[v["winner"]],
        )
        for v in exported
    )
    raw_order = {"W-PROLIFIC-5f3a9c": "1", "W-PROLIFIC-77b2e1": "2", "mturk:A1B2C3D4": "3"}
    original = sorted(
        (
            v["instruction_id"],
            raw_order[v["annotator"]],
            v[v.get("presented_first", "model_a")],
            v.get("condition", "plain"),
            "tie" if v["winner"] == "tie" else v[v["winner"]],
        )
        for v in rows(SAMPLE / "votes.jsonl")
    )
    assert shown_first == original
    assert "W-PROLIFIC" not in "".join((tmp_path / "e1" / n).read_text() for n in FILES)


def test_export_refuses_an_unknown_study(tmp_path):
    with pytest.raises(CommandError, match="^--study nope: unknown study"):
        _export("nope", tmp_path)


def test_a_report_on_the_imported_study_shows_human_bias_agreement_and_rbo(tmp_path):
    run_import(SAMPLE, "gen")
    out = tmp_path / "report.json"
    call_command("report", "--study", "gen", "--format", "json", "--out", str(out), stdout=io.StringIO())
    report = json.loads(out.read_text())
    human = {row["bias"]: row for row in report["bias"] if row["subject"] == "humans"}
    assert {"order_first", "order_last", "position_preference", "salience_longer", "bandwagon"} <= set(human)
    votes = rows(SAMPLE / "votes.jsonl")
    # Order twins: one per (annotator, pair) of the order condition.
    twins = {
        (v["annotator"], v["instruction_id"], frozenset((v["model_a"], v["model_b"])))
        for v in votes
        if v.get("condition") == "order"
    }
    assert human["order_first"]["n"] == len(twins)
    # Annotator 2 of the sample picks the first slot on close calls, and nobody ever picks the
    # last slot twice: the first-slot count is those close-call pairs (4 models: 3 adjacent pairs).
    assert human["order_first"]["hits"] == 3 * 3 and human["order_last"]["hits"] == 0
    bandwagon = {
        (v["annotator"], v["instruction_id"], frozenset((v["model_a"], v["model_b"])))
        for v in votes
        if v.get("condition") == "bandwagon"
    }
    assert human["bandwagon"]["n"] == len(bandwagon)
    # Annotator 3 always follows the cue (put on the worse model): a third of the pairs.
    assert human["bandwagon"]["hits"] == len(bandwagon) // 3
    agreement = report["agreement"]
    rbo = [r for r in agreement if r["metric"].startswith("rbo") and r["kind"] == "inter_annotator"]
    raters = {r["annotator"] for r in rows(SAMPLE / "rankings.jsonl")}
    assert len([r for r in rbo if r["a"] != "all"]) == len(raters) * (len(raters) - 1) // 2
    assert all(0 < r["value"] <= 1 for r in rbo)
    alphas = {r.get("condition") for r in agreement if r["metric"] == "krippendorff_alpha"}
    assert {"ranking", "order", "bandwagon", "plain"} <= alphas


def test_an_mtbench_study_exports_one_id_per_turn(tmp_path):
    study = Study.objects.create(slug="mt", name="mt", source=Study.Source.MTBENCH)
    a = Candidate.objects.create(study=study, key="m1", position=0)
    for index, turn in ((0, 1), (1, 2)):
        ins = Instruction.objects.create(study=study, index=index, external_id="81", turn=turn, text=f"turn {turn}")
        Response.objects.create(instruction=ins, candidate=a, text="x")
    _export("mt", tmp_path / "mt")
    assert [r["id"] for r in rows(tmp_path / "mt" / "instructions.jsonl")] == ["81", "81#turn2"]
    run_import(tmp_path / "mt", "mt-copy")
    assert Study.objects.get(slug="mt-copy").instructions.count() == 2
