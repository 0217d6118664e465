"""Exports: JSON validates against the schema; CSV and HTML carry exactly the JSON's numbers."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from html.parser import HTMLParser

import pytest

from analysis.exporters import export, render_figures, validate
from analysis.exporters.tidy_tables import tidy_tables
from analysis.services import compose_report
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study

pytestmark = pytest.mark.django_db

# Until the bias/agreement sections land these are empty; rows in the contract's shape
# make sure plots and tables handle them (and that nasty text stays escaped).
BIAS_ROWS = [
    {
        "subject": "humans",
        "bias": "order_first",
        "value": 0.2,
        "n": 750,
        "valid_rate": 1.0,
        "random": 0.25,
        "ci95": [0.17, 0.23],
        "p_value": 0.01,
    },
    {
        "subject": "gpt4",
        "bias": "order_first",
        "value": 0.31,
        "n": 5250,
        "valid_rate": 0.97,
        "random": 0.25,
        "ci95": [0.3, 0.32],
        "p_value": 0.0,
    },
    {
        "subject": "<script>x</script>",
        "bias": "bandwagon",
        "value": 0.4,
        "n": 10,
        "valid_rate": 0.5,
        "random": 0.25,
        "ci95": None,
        "p_value": None,
    },
]
AGREEMENT_ROWS = [
    {
        "kind": "human_vs_judge",
        "metric": "rbo_ext",
        "a": "humans",
        "b": "gpt4",
        "value": 0.4962,
        "n": 50,
        "ci95": [0.45, 0.54],
    },
    {
        "kind": "human_vs_judge",
        "metric": "rbo_ext",
        "a": "humans",
        "b": "llama",
        "value": 0.31,
        "n": 50,
        "ci95": [0.27, 0.35],
    },
]


@pytest.fixture
def report():
    study = mtbench_study(slug="exp", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)
    r = compose_report(study=study, profile="default")
    r["bias"], r["agreement"] = BIAS_ROWS, AGREEMENT_ROWS
    r["paper"] = {"rbo_human_machine_v1": 0.496, "human_bias": {"order_first": 0.2}}
    validate(r)
    return r


def _numbers(report: dict) -> dict[tuple[str, int, str], object]:
    """Every cell of every tidy table, keyed by (table, row, column)."""
    return {(t.name, i, c): row[c] for t in tidy_tables(report) for i, row in enumerate(t.rows) for c in t.columns}


def test_json_matches_the_schema_and_bad_reports_are_refused(report):
    data = json.loads(export(report, "json"))
    validate(data)
    assert data["length_control"]["judge_vs_human"][0]["agreement"] == 0.75
    assert data["manifest"]["choices"]["pair_join"] == "unordered"
    broken = {**report, "length_control": {**report["length_control"], "verdict": "probably fine"}}
    with pytest.raises(ValueError, match="length_control"):
        export(broken, "json")


def test_csv_zip_has_every_table_and_the_json_numbers(report):
    archive = zipfile.ZipFile(io.BytesIO(export(report, "csv")))
    names = set(archive.namelist())
    assert {
        "bias.csv",
        "agreement.csv",
        "paper.csv",
        "manifest.csv",
        "length_control_strata.csv",
        "length_control_judge_vs_human.csv",
    } <= names
    expected = _numbers(report)
    seen = 0
    for name in names:
        rows = list(csv.DictReader(io.StringIO(archive.read(name).decode())))
        for i, row in enumerate(rows):
            for column, text in row.items():
                want = expected[(name.removesuffix(".csv"), i, column)]
                if isinstance(want, float):
                    assert float(text) == want, (name, i, column)
                    seen += 1
                elif want is None:
                    assert text == ""
    assert seen > 80
    strata = list(csv.DictReader(io.StringIO(archive.read("length_control_strata.csv").decode())))
    assert [r["bin"] for r in strata] == ["<5%", "<10%", "10-30%", ">30%"]


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, str]]]] = {}
        self.urls: list[str] = []
        self._table = self._value = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if key in a:
                self.urls.append(a[key])
        if tag == "table":
            self._table = a["data-table"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag == "td":
            self._value, self._text = a.get("data-value"), ""

    def handle_data(self, data):
        self._text += data

    def handle_endtag(self, tag):
        if tag == "td" and self._table:
            self.tables[self._table][-1].append((self._value, self._text.strip()))
        elif tag == "table":
            self._table = None


def test_html_is_self_contained_and_shows_the_json_numbers(report):
    html = export(report, "html", figures=render_figures(report)).decode()
    parser = _Cells()
    parser.feed(html)
    # No URL of any kind: every src is an embedded image, there is no href at all.
    assert parser.urls and all(u.startswith("data:image/svg+xml;base64,") for u in parser.urls)
    assert not re.search(r"https?://|//cdn|<link|<script src", html)
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    checked = 0
    for table in tidy_tables(report):
        cells = [row for row in parser.tables.get(table.name, []) if row]
        assert len(cells) == len(table.rows), table.name
        for row, want in zip(cells, table.rows, strict=True):
            for (value, text), column in zip(row, table.columns, strict=True):
                if isinstance(want[column], float):
                    assert float(value) == want[column] and text == f"{want[column]:.3f}"
                    checked += 1
    assert checked > 80
    assert "profile default" in html and "unordered" in html and "Wilson" in html
    embedded = json.loads(re.search(r'id="report-json" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert embedded["length_control"] == report["length_control"]


def test_empty_sections_export_with_no_data_plots(db):
    from annotations.models import Study

    r = compose_report(study=Study.objects.create(slug="void", name="Void"), profile="cobbler-paper")
    figures = render_figures(r)
    assert [f["name"] for f in figures] == ["bias", "battery", "rbo", "valid", "strata", "bt_rankings"]
    html = export(r, "html", figures=figures).decode()
    assert html.count("<figure") == 6 and "No data." in html
    validate(json.loads(export(r, "json")))
    assert zipfile.ZipFile(io.BytesIO(export(r, "csv"))).read("bias.csv").decode().startswith("subject,bias,value")
