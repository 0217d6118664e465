"""A researcher uploads the sample study in Chromium: a broken file first, then the sample, then confirms."""

from __future__ import annotations

import json

import pytest

from annotations.models import Study, Submission
from tests.conftest import ARTIFACTS
from tests.studyformat.conftest import SAMPLE, copy_sample, rows

pytestmark = [pytest.mark.browser, pytest.mark.slow]
XSS = '<img src=x onerror="window.__xss=1">'
FIELDS = ("instructions", "responses", "votes", "rankings")


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


def _attach(page, root) -> None:
    for name in FIELDS:
        page.set_input_files(f"input[name={name}]", str(root / f"{name}.jsonl"))


@pytest.mark.django_db(transaction=True)
def test_upload_preview_and_confirm_in_the_browser(live_server, browser, researcher, tmp_path):
    bad = copy_sample(tmp_path / "bad")
    votes = rows(bad / "votes.jsonl")
    votes[2]["annotator"] = ""
    votes[5]["winner"] = XSS
    (bad / "votes.jsonl").write_text("".join(json.dumps(v) + "\n" for v in votes))

    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/?next=/dashboard/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/dashboard/")
    page.click("#import-study-link")
    page.wait_for_url("**/crowd/import/")

    _attach(page, bad)
    page.fill("input[name=slug]", "browser-upload")
    page.click("#upload-preview")
    page.wait_for_selector("#import-problems")
    problems = page.inner_text("#import-problems")
    assert "votes.jsonl:3: annotator must not be empty" in problems
    assert "votes.jsonl:6: winner must be model_a, model_b or tie" in problems and XSS in problems  # shown as text
    assert page.evaluate("window.__xss") is None
    assert page.locator("#confirm-import").count() == 0
    assert not Study.objects.filter(slug="browser-upload").exists()

    _attach(page, SAMPLE)  # file inputs are empty again after a POST
    page.fill("input[name=slug]", "browser-upload")
    page.click("#upload-preview")
    page.wait_for_selector("#import-counts")
    assert "Create the new study browser-upload" in page.inner_text("#import-target")
    assert not Study.objects.filter(slug="browser-upload").exists()
    ARTIFACTS.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "study-import-preview.png"), full_page=True)
    page.click("#confirm-import")
    page.wait_for_url("**/crowd/studies/browser-upload/")
    assert "Imported into browser-upload" in page.content()
    study = Study.objects.get(slug="browser-upload")
    assert study.created_by == researcher
    expected = len(rows(SAMPLE / "votes.jsonl")) + len(rows(SAMPLE / "rankings.jsonl"))
    assert Submission.objects.filter(assignment__batch__study=study).count() == expected


@pytest.mark.django_db(transaction=True)
def test_a_broken_file_is_replaced_alone_and_the_preview_shows_content(live_server, browser, researcher, tmp_path):
    """Issue 22 item 7: all problems at once, only the broken file picked again, content before import."""
    bad = copy_sample(tmp_path / "bad")
    lines = (bad / "votes.jsonl").read_text().splitlines()
    lines[1] = '{"instruction_id": "q1",'  # not JSON: reading goes on past it
    lines[4] = json.dumps(json.loads(lines[4]) | {"winner": "both"})
    lines[7] = json.dumps(json.loads(lines[7]) | {"annotator": ""})
    (bad / "votes.jsonl").write_text("\n".join(lines) + "\n")
    responses = rows(bad / "responses.jsonl")

    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/?next=/crowd/import/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/crowd/import/")
    assert page.locator("#example-zip").count() == 1

    _attach(page, bad)
    page.fill("input[name=slug]", "friction-walk")
    page.click("#upload-preview")
    page.wait_for_selector("#import-problems")
    problems = page.inner_text("#import-problems")
    assert "votes.jsonl:2: invalid JSON" in problems
    assert "votes.jsonl:5: winner must be model_a, model_b or tie" in problems
    assert "votes.jsonl:8: annotator must not be empty" in problems
    staged = page.inner_text("#staged-files")
    assert all(name in staged for name in ("instructions.jsonl", "responses.jsonl", "votes.jsonl", "rankings.jsonl"))
    assert page.input_value("input[name=slug]") == "friction-walk"

    page.set_input_files("input[name=votes]", str(SAMPLE / "votes.jsonl"))  # only the broken file again
    page.click("#upload-preview")
    page.wait_for_selector("#import-sample")
    assert page.locator("#import-problems").count() == 0
    answers = page.inner_text("#sample-responses")
    assert responses[3]["text"] in answers  # kite-70b's <script> answer, as text
    assert page.evaluate("window.__xss") is None
    assert "stored as annotator-1" in page.inner_text("#sample-votes")
    assert " > " in page.inner_text("#sample-rankings")
    assert not Study.objects.filter(slug="friction-walk").exists()
    ARTIFACTS.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "study-import-friction.png"), full_page=True)
    page.click("#confirm-import")
    page.wait_for_url("**/crowd/studies/friction-walk/")
    assert "Imported into friction-walk" in page.content()
    study = Study.objects.get(slug="friction-walk")
    expected = len(rows(SAMPLE / "votes.jsonl")) + len(rows(SAMPLE / "rankings.jsonl"))
    assert Submission.objects.filter(assignment__batch__study=study).count() == expected
