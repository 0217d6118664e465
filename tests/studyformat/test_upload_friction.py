"""Issue 22 item 7, upload friction: files survive a failed preview, every problem is listed,
the preview shows content, and an example study can be downloaded (and imports)."""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotations.importers.generic import read_study
from annotations.models import Study, Submission
from annotations.views import study_import as view
from judging.models import JudgeJob
from tests.importers.conftest import table_counts
from tests.studyformat.conftest import SAMPLE, copy_sample, rows, run_import, write_rows

pytestmark = pytest.mark.django_db
PAGE = reverse("annotations:study_import")
CONFIRM = reverse("annotations:study_import_confirm")
EXAMPLE = reverse("annotations:study_import_example")
FIELDS = ("instructions", "responses", "votes", "rankings")


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


def _file(root: Path, name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(f"{name}.jsonl", (root / f"{name}.jsonl").read_bytes())


def _files(root: Path = SAMPLE, names: tuple[str, ...] = FIELDS) -> dict:
    return {name: _file(root, name) for name in names}


def _staged(data_dir: Path) -> list[Path]:
    return sorted(p for p in (data_dir / "uploads" / "study-import").glob("u*/*") if p.is_dir())


def _broken_votes(tmp_path: Path) -> Path:
    root = copy_sample(tmp_path / "bad")
    lines = (root / "votes.jsonl").read_text().splitlines()
    lines[3] = '{"instruction_id": "q1", "model_a": '  # not JSON
    (root / "votes.jsonl").write_text("\n".join(lines) + "\n")
    return root


# 1. Files survive a failed preview -----------------------------------------------------------


def test_after_a_failed_preview_only_the_fixed_file_is_picked_again(researcher_client, researcher, tmp_path, data_dir):
    bad = _broken_votes(tmp_path)
    before = table_counts()
    page = researcher_client.post(PAGE, {**_files(bad), "slug": "friction"})
    assert page.status_code == 422
    body = page.content.decode()
    assert "<code>votes.jsonl:4</code>: invalid JSON" in body
    assert 'id="staged-files"' in body and "Using the files you uploaded:" in body
    for name in ("instructions.jsonl", "responses.jsonl", "votes.jsonl", "rankings.jsonl"):
        assert f"<code>{name}</code>" in body
    assert "using the file you uploaded: votes.jsonl" in body and "Votes (replace)" in body
    assert 'name="instructions" required' not in body  # the browser does not insist on picking it again
    [first] = _staged(data_dir)
    assert first.parent.name == f"u{researcher.pk}"
    assert researcher_client.post(CONFIRM, {"upload": first.name}).status_code == 302  # a failed preview: no
    assert table_counts() == before

    # Only the corrected votes.jsonl, nothing else: the other three are reused.
    page = researcher_client.post(PAGE, {"votes": _file(SAMPLE, "votes"), "slug": "friction"})
    assert page.status_code == 200, page.content.decode()[:3000]
    assert page.context["counts"]["rankings"] == 9 and page.context["counts"]["instructions"] == 3
    [second] = _staged(data_dir)
    assert second != first and page.context["upload_id"] == second.name  # a fresh id per preview
    assert (second / "votes.jsonl").read_bytes() == (SAMPLE / "votes.jsonl").read_bytes()
    assert table_counts() == before and not Study.objects.filter(slug="friction").exists()
    assert researcher_client.post(CONFIRM, {"upload": first.name}).status_code == 302  # the old id is gone
    assert not Study.objects.filter(slug="friction").exists()

    done = researcher_client.post(CONFIRM, {"upload": second.name})
    assert done["Location"] == reverse("annotations:study", args=["friction"])
    study = Study.objects.get(slug="friction")
    expected = len(rows(SAMPLE / "votes.jsonl")) + len(rows(SAMPLE / "rankings.jsonl"))
    assert Submission.objects.filter(assignment__batch__study=study).count() == expected
    assert _staged(data_dir) == []  # removed after the import
    assert 'id="staged-files"' not in researcher_client.get(PAGE).content.decode()


def test_a_form_error_keeps_the_files_too_and_they_can_be_removed(researcher_client, data_dir):
    page = researcher_client.post(PAGE, _files())  # no slug
    assert page.status_code == 422 and "slug" in page.context["form"].errors
    assert len(_staged(data_dir)) == 1
    page = researcher_client.post(PAGE, {"slug": "later"})  # no file picked again
    assert page.status_code == 200 and page.context["counts"]["instructions"] == 3
    gone = researcher_client.post(PAGE, {"forget": "1"})
    assert gone.status_code == 302 and _staged(data_dir) == []
    page = researcher_client.post(PAGE, {"slug": "later"})
    assert page.status_code == 422 and {"instructions", "responses"} <= set(page.context["form"].errors)


def test_an_optional_staged_file_can_be_left_out(researcher_client):
    researcher_client.post(PAGE, _files())
    page = researcher_client.post(PAGE, {"slug": "novotes", "drop_votes": "on"})
    assert page.status_code == 200 and page.context["counts"]["votes"] == 0
    assert page.context["counts"]["rankings"] == 9


def test_one_researcher_never_uses_anothers_staged_files(researcher_client, other_researcher, tmp_path, data_dir):
    researcher_client.post(PAGE, {**_files(_broken_votes(tmp_path)), "slug": "alices"})
    [alices] = _staged(data_dir)
    bob = Client()
    bob.force_login(other_researcher)
    page = bob.post(PAGE, {"votes": _file(SAMPLE, "votes"), "slug": "bobs", "upload": alices.name})
    assert page.status_code == 422 and {"instructions", "responses"} <= set(page.context["form"].errors)
    assert "alices" not in page.content.decode() and alices.name not in page.content.decode()
    # Even a session pointing at alice's id (as if tampered with) finds nothing: only bob's directory is looked in.
    session = bob.session
    session[view.SESSION_KEY] = {"id": alices.name, "user": other_researcher.pk, "files": {}, "ok": True}
    session.save()
    assert bob.post(CONFIRM, {"upload": alices.name}).status_code == 302
    page = bob.post(PAGE, {"slug": "bobs"})
    assert page.status_code == 422 and "instructions" in page.context["form"].errors
    session = bob.session
    session[view.SESSION_KEY] = {"id": alices.name, "user": int(alices.parent.name[1:]), "files": {}, "ok": True}
    session.save()
    assert bob.post(CONFIRM, {"upload": alices.name}).status_code == 302
    assert not Study.objects.exists() and alices.is_dir()


def test_a_user_keeps_only_a_few_staged_uploads(researcher, data_dir):
    for _ in range(view.MAX_STAGED_PER_USER + 2):
        client = Client()
        client.force_login(researcher)
        client.post(PAGE, _files(names=("instructions",)))
    assert len(_staged(data_dir)) == view.MAX_STAGED_PER_USER


# 2. All problems are listed ------------------------------------------------------------------


def test_three_bad_lines_in_two_files_are_all_listed(researcher_client, tmp_path):
    root = _broken_votes(tmp_path)  # votes.jsonl:4 is not JSON
    votes = (root / "votes.jsonl").read_text().splitlines()
    votes[9] = json.dumps(json.loads(votes[9]) | {"winner": "both"})  # after the bad JSON line
    (root / "votes.jsonl").write_text("\n".join(votes) + "\n")
    rankings = (root / "rankings.jsonl").read_text().splitlines()
    rankings[1] = "[1, 2"
    (root / "rankings.jsonl").write_text("\n".join(rankings) + "\n")
    page = researcher_client.post(PAGE, {**_files(root), "slug": "three"})
    assert page.status_code == 422
    problems = [str(p) for p in page.context["plan"].problems]
    assert problems == [
        "votes.jsonl:4: invalid JSON (Expecting value)",
        "votes.jsonl:10: winner must be model_a, model_b or tie, not 'both'",
        "rankings.jsonl:2: invalid JSON (Expecting ',' delimiter)",
    ]
    body = page.content.decode()
    assert "<code>votes.jsonl:4</code>" in body and "<code>votes.jsonl:10</code>" in body
    assert "<code>rankings.jsonl:2</code>" in body and 'id="import-more-problems"' not in body
    # The command still says the first, and counts the others.
    with pytest.raises(CommandError, match=r"^votes.jsonl:4: invalid JSON .*\(and 2 more problem\(s\)\)$"):
        run_import(root, "three")
    assert not Study.objects.exists()


def test_sixty_bad_lines_show_fifty_and_ten_more(researcher_client, tmp_path):
    root = copy_sample(tmp_path / "many")
    (root / "votes.jsonl").write_text("{oops\n" * 60)
    page = researcher_client.post(PAGE, {**_files(root), "slug": "many"})
    assert page.status_code == 422
    assert len(page.context["plan"].problems) == 50 and page.context["plan"].more_problems == 10
    body = page.content.decode()
    assert body.count('<li class="error"><code>votes.jsonl:') == 50
    assert "<code>votes.jsonl:50</code>" in body and "<code>votes.jsonl:51</code>" not in body
    assert '<li class="error" id="import-more-problems">and 10 more</li>' in body
    assert not Study.objects.exists()


def test_reading_goes_on_past_a_line_that_is_too_long(settings, tmp_path):
    settings.IMPORT_MAX_LINE_BYTES = 300
    root = copy_sample(tmp_path / "long")
    lines = (root / "responses.jsonl").read_text().splitlines()
    lines[2] = json.dumps({"instruction_id": "q1", "model": "wren-3b", "text": "x" * 1000})
    lines[5] = "not json"
    (root / "responses.jsonl").write_text("\n".join(lines) + "\n")
    wheres = [p.where for p in read_study(root).problems]
    assert wheres[:2] == ["responses.jsonl:3", "responses.jsonl:6"]


# 3. The preview shows content ----------------------------------------------------------------


def test_the_preview_shows_the_first_instruction_escaped(researcher_client, tmp_path):
    root = copy_sample(tmp_path / "hostile")
    responses = rows(root / "responses.jsonl")
    responses[0]["text"] = "<script>window.__xss=1</script>" + "long " * 200
    write_rows(root / "responses.jsonl", responses)
    votes = rows(root / "votes.jsonl")
    votes[0] |= {"winner": "tie", "annotator": "<b>rater</b>"}
    cued_vote = next(v for v in votes if v["instruction_id"] == "q1" and v.get("cued"))
    votes.remove(cued_vote)
    votes.insert(2, cued_vote)  # among the first ones shown
    write_rows(root / "votes.jsonl", votes)
    page = researcher_client.post(PAGE, {**_files(root), "slug": "content"})
    assert page.status_code == 200, page.content.decode()[:3000]
    body = page.content.decode()
    assert 'id="import-sample"' in body and "Name three primary colours." in body
    assert "<script>window.__xss=1</script>" not in body and "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # kite-70b's answer in the fixture
    assert "(cut short here)" in body and "long " * 200 not in body
    sample = page.context["sample"]
    assert [r.model for r in sample.responses] == ["owl-7b", "heron-13b", "wren-3b", "kite-70b"]
    assert sample.votes[0] == (
        "rater <b>rater</b> (pseudonymised: stored as annotator-1) voted: owl-7b = heron-13b (a tie) "
        "(order; owl-7b shown first, heron-13b second)"
    )
    assert "rater &lt;b&gt;rater&lt;/b&gt; (pseudonymised: stored as annotator-1)" in body
    assert sample.votes[1] == (
        "rater W-PROLIFIC-5f3a9c (pseudonymised: stored as annotator-2) voted: heron-13b > owl-7b "
        "(order; heron-13b shown first, owl-7b second)"
    )
    assert sample.votes[-1].startswith("and ") and sample.votes[-1].endswith("more vote(s) on this instruction")
    assert sample.rankings[0] == (
        "rater W-PROLIFIC-5f3a9c (pseudonymised: stored as annotator-2) ranked: "
        "heron-13b > owl-7b > kite-70b > wren-3b (2 acceptable)"
    )
    cued_model = cued_vote[cued_vote["cued"]]
    assert f"({cued_vote['condition']}; " in sample.votes[2] and sample.votes[2].endswith(f", cue on {cued_model})")


def test_the_preview_shows_judges_and_their_calls(researcher_client):
    files = {
        name: SimpleUploadedFile(f"{name}.jsonl", content)
        for name, content in _example_files(researcher_client).items()
        if name in ("instructions", "responses", "judges", "judgments")
    }
    page = researcher_client.post(PAGE, {**files, "slug": "judged"})
    assert page.status_code == 200, page.content.decode()[:3000]
    lines = page.context["sample"].extension_lines
    assert lines[0].startswith("judge example-judge-") and "verdict format arena-hard" in lines[0]
    assert any(
        "(order; owl-7b shown first, heron-13b second): output read as: heron-13b > owl-7b" in line for line in lines
    )
    assert any(
        "(order; heron-13b shown first, owl-7b second): output read as: heron-13b > owl-7b" in line for line in lines
    )
    assert 'id="sample-judges"' in page.content.decode()


# 4. The example zip --------------------------------------------------------------------------


def _example_files(client: Client) -> dict[str, bytes]:
    response = client.get(EXAMPLE)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert 'filename="example-study.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        return {
            Path(name).name.removesuffix(".jsonl"): archive.read(name)
            for name in archive.namelist()
            if name.endswith(".jsonl")
        }


def test_the_example_zip_downloads_and_imports_through_the_page(researcher_client, researcher, data_dir):
    page = researcher_client.get(PAGE)
    assert f'href="{EXAMPLE}"' in page.content.decode()
    files = _example_files(researcher_client)
    assert set(files) == {"instructions", "responses", "votes", "rankings", "judges", "judgments"}
    upload = {name: SimpleUploadedFile(f"{name}.jsonl", content) for name, content in files.items()}
    page = researcher_client.post(PAGE, {**upload, "slug": "example"})
    assert page.status_code == 200, page.content.decode()[:3000]
    counts = page.context["counts"]
    assert (counts["instructions"], counts["models"], counts["votes"], counts["rankings"]) == (2, 3, 5, 2)
    done = researcher_client.post(CONFIRM, {"upload": page.context["upload_id"]}, follow=True)
    assert "Imported into example" in done.content.decode()
    study = Study.objects.get(slug="example")
    assert study.created_by == researcher
    assert Submission.objects.filter(assignment__batch__study=study).count() == 7
    assert JudgeJob.objects.get(study=study).judgments.count() == 3
    assert _staged(data_dir) == []


def test_the_example_zip_imports_with_the_command(researcher_client, tmp_path):
    response = researcher_client.get(EXAMPLE)
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        archive.extractall(tmp_path)
    assert (tmp_path / "example-study" / "README.txt").is_file()
    out = run_import(tmp_path / "example-study", "example-cmd")
    assert "judge calls: 3" in out
    assert Study.objects.get(slug="example-cmd").instructions.count() == 2


def test_the_example_is_for_researchers_only(django_user_model):
    assert Client().get(EXAMPLE).status_code == 302
    plain = Client()
    plain.force_login(django_user_model.objects.create_user("dora", password="dora-password"))
    assert plain.get(EXAMPLE).status_code == 403


def test_staged_uploads_older_than_a_day_are_swept(researcher_client, other_researcher, data_dir):
    root = data_dir / "uploads" / "study-import"
    stale, old_layout = root / f"u{other_researcher.pk}" / "stale-id", root / "older-layout-id"
    for folder in (stale, old_layout):
        folder.mkdir(parents=True)
        (folder / "instructions.jsonl").write_text("{}\n")
        os.utime(folder, (time.time() - view.STALE_SECONDS - 60,) * 2)
    researcher_client.post(PAGE, _files(names=("instructions",)))
    assert not stale.exists() and not old_layout.exists()
    assert len(_staged(data_dir)) == 1  # the new one


def test_one_mistake_is_listed_once():
    """The vote schema reaches 'required' through three branches: one line, one sentence."""
    from annotations.importers.generic import schema_problems

    assert schema_problems("vote", {"instruction_id": "i1", "model_a": "a"}) == [
        "missing field model_b, winner, annotator"
    ]


def test_a_new_upload_of_every_required_file_starts_afresh(researcher_client):
    """Kept files correct a failed preview; they never slip into the next, different upload."""
    researcher_client.post(PAGE, _files())
    required = tuple(name.removesuffix(".jsonl") for name in sorted(view.REQUIRED))
    page = researcher_client.post(PAGE, {"slug": "fresh", **_files(names=required)})
    assert [f["name"] for f in page.context["staged_files"]] == sorted(view.REQUIRED, key=view.UPLOAD_FILES.index)
