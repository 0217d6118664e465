"""`manage.py report`: writes each format; bad input is one line and nothing written."""

from __future__ import annotations

import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from analysis.exporters import validate
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study
from tests.conftest import SAMPLES_DIR

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return mtbench_study(slug="cmd", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)


def test_it_writes_json_csv_and_html(study, tmp_path):
    sample = SAMPLES_DIR / "mtbench_sample.jsonl"
    call_command(
        "report",
        "--study",
        "cmd",
        "--profile",
        "mtbench-post",
        "--format",
        "json",
        "--out",
        str(tmp_path / "r.json"),
        "--data-file",
        str(sample),
    )
    data = json.loads((tmp_path / "r.json").read_text())
    validate(data)
    assert data["profile"] == "mtbench-post" and data["length_control"]["join"] == "ordered"
    assert len(data["manifest"]["data_files"]["mtbench_sample.jsonl"]) == 64
    call_command("report", "--study", "cmd", "--format", "csv", "--out", str(tmp_path / "r.zip"))
    assert "length_control_strata.csv" in zipfile.ZipFile(tmp_path / "r.zip").namelist()
    call_command("report", "--study", "cmd", "--format", "html", "--out", str(tmp_path / "r.html"))
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--study", "nope", "--format", "json"], "unknown study 'nope'"),
        (["--study", "cmd", "--profile", "paperish", "--format", "json"], "unknown profile 'paperish'"),
        (["--study", "cmd", "--format", "pdf"], "unknown format 'pdf'"),
    ],
)
def test_bad_input_is_one_line(study, tmp_path, args, reason):
    with pytest.raises(CommandError) as info:
        call_command("report", *args, "--out", str(tmp_path / "r.out"))
    assert reason in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "r.out").exists()


def test_an_unwritable_destination_is_refused(study, tmp_path):
    with pytest.raises(CommandError, match="not a writable directory"):
        call_command("report", "--study", "cmd", "--format", "json", "--out", str(tmp_path / "missing" / "r.json"))
    with pytest.raises(CommandError, match="is a directory"):
        call_command("report", "--study", "cmd", "--format", "json", "--out", str(tmp_path))
