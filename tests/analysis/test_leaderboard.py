"""The judge leaderboard (issue 21, item 2): its own measures by hand, then the report's rows on a
real imported study with judge outputs (judgments.jsonl), schema-checked, and the page and CSV."""

from __future__ import annotations

import csv
import io
import json
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from django.urls import reverse

from analysis.metrics.leaderboard import human_ceiling, null_vs_majority
from analysis.services import compose_report, execute_report_run, start_report_run
from annotations.importers.generic_write import import_study
from annotations.models import Study

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "generic_study"
KEY = {"item": 1, "condition": "order", "a": "x", "b": "y", "cue": ""}


def _votes(winners: list[str], *, unit: int = 1, la: int = 10, lb: int = 20, **key) -> list[dict]:
    return [KEY | key | {"unit": unit, "w": w, "la": la, "lb": lb, "d": abs(la - lb) / max(la, lb)} for w in winners]


def test_the_human_ceiling_is_each_vote_against_the_others_majority():
    # Key 1: a a a b -> each "a" vote faces a 2-1 majority of a (agrees), the "b" vote faces 3-0 a
    # (disagrees): 3 of 4. Key 2: a b -> each faces a 1-vote "majority" of the other: 0 of 2.
    # Key 3: a a b b -> each faces 2-1 against it (disagree): 0 of 4. Key 4: one vote, no others.
    votes = pd.DataFrame(
        _votes(["a", "a", "a", "b"], item=1)
        + _votes(["a", "b"], item=2)
        + _votes(["a", "a", "b", "b"], item=3)
        + _votes(["a"], item=4)
        + _votes(["tie"], item=1)  # a tie is not a decisive vote: neither scored nor counted
    )
    result = human_ceiling(votes)
    assert (result["n"], result["agreement"]) == (10, pytest.approx(3 / 10))


def test_the_null_judge_meets_the_same_majorities_as_a_judge():
    votes = pd.DataFrame(
        _votes(["b", "b", "a"], item=1)  # majority b, b is longer: the null agrees
        + _votes(["a", "a"], item=2)  # majority a, b is longer: disagrees
        + _votes(["a", "b"], item=3)  # no majority: not a key
        + _votes(["a"], item=4, la=5, lb=5)  # equal lengths: the null has no choice
    )
    result = null_vs_majority(votes)
    assert (result["n"], result["agreement"]) == (2, 0.5)


def _always_first_judgments(root: Path) -> None:
    """A judge that always chooses the answer shown first, in both orders of every pair people saw."""
    votes = [json.loads(line) for line in (root / "votes.jsonl").read_text().splitlines()]
    seen, lines = set(), []
    for v in votes:
        pair = (v["instruction_id"], frozenset((v["model_a"], v["model_b"])))
        if pair in seen:
            continue
        seen.add(pair)
        for first in ("model_a", "model_b"):
            lines.append(
                {
                    "judge": "first-picker",
                    "instruction_id": v["instruction_id"],
                    "model_a": v["model_a"],
                    "model_b": v["model_b"],
                    "presented_first": first,
                    "condition": "order",
                    "winner": first,
                    "cost": 0.002,
                }
            )
    (root / "judges.jsonl").write_text(json.dumps({"name": "first-picker"}) + "\n")
    (root / "judgments.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture
def study(db, tmp_path) -> Study:
    root = tmp_path / "study"
    shutil.copytree(SAMPLE, root)
    _always_first_judgments(root)
    import_study(root=root, slug="board")
    return Study.objects.get(slug="board")


def test_the_report_ranks_a_judge_beside_the_null_judge_and_the_human_ceiling(study):
    report = compose_report(study=study, profile="default")  # schema-checked
    board = {r["subject"]: r for r in report["leaderboard"]}
    assert [r["kind"] for r in report["leaderboard"]] == ["judge", "null", "humans"]
    judge = board["first-picker"]
    assert judge["p_first_slot"] == 1.0 and judge["position_consistency"] == 0.0
    assert judge["cost_per_1000"] == pytest.approx(2.0) and judge["seconds_per_1000"] is None  # imported
    # Always the first answer: inconsistent on every pair, so its merged verdict is a tie and it has
    # no decisive verdict to set against the majority.
    assert (judge["agreement"], judge["agreement_n"], judge["agreement_condition"]) == (None, 0, None)
    assert board["length-only null judge"]["p_longer"] == 1.0
    ceiling = board["human ceiling"]
    assert ceiling["agreement"] is not None and 0 <= ceiling["agreement"] <= 1 and ceiling["agreement_n"] > 0
    assert ceiling["p_first_slot"] is not None and judge["method"]


def test_the_page_and_the_csv_show_the_leaderboard(study, researcher_client, researcher):
    study.created_by = researcher
    study.save(update_fields=["created_by"])
    run = start_report_run(study=study, profile="default", user=researcher)
    execute_report_run(run=run)  # what the worker does
    page = researcher_client.get(reverse("analysis:report", args=[study.slug])).content.decode()
    assert 'data-table="leaderboard"' in page and "first-picker" in page and "human ceiling" in page
    assert "analysis/sort_table.js" in page
    dashboard = researcher_client.get(reverse("analysis:dashboard")).content.decode()
    assert "Judge leaderboard" in dashboard and "data-sortable" in dashboard
    export = researcher_client.get(reverse("analysis:report-download", args=[study.slug, "csv"]) + "?profile=default")
    with zipfile.ZipFile(io.BytesIO(export.content)) as bundle:
        name = next(n for n in bundle.namelist() if n.endswith("leaderboard.csv"))
        rows = list(csv.DictReader(io.StringIO(bundle.read(name).decode("utf-8-sig"))))
    assert [r["subject"] for r in rows] == ["first-picker", "length-only null judge", "human ceiling"]
