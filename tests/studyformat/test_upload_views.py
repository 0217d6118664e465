"""The researcher upload: a preview that writes nothing, then a confirm that imports what was previewed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotations.models import Study, Submission
from tests.importers.conftest import table_counts
from tests.studyformat.conftest import SAMPLE, copy_sample, rows, run_import

pytestmark = pytest.mark.django_db
PAGE = reverse("annotations:study_import")
CONFIRM = reverse("annotations:study_import_confirm")
XSS = "<script>window.__xss=1</script>"


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


def _files(root: Path = SAMPLE, *, skip: tuple[str, ...] = ()) -> dict:
    return {
        name: SimpleUploadedFile(f"{name}.jsonl", (root / f"{name}.jsonl").read_bytes())
        for name in ("instructions", "responses", "votes", "rankings")
        if name not in skip
    }


def _uploads(data_dir: Path) -> list[Path]:
    """The staged uploads, each under its user's directory (u<pk>/<random id>)."""
    folder = data_dir / "uploads" / "study-import"
    return sorted(p for p in folder.glob("u*/*") if p.is_dir())


def test_the_page_is_for_researchers(researcher_client, django_user_model):
    assert Client().get(PAGE).status_code == 302
    plain = Client()
    plain.force_login(django_user_model.objects.create_user("dora", password="dora-password"))
    assert plain.get(PAGE).status_code == 403 and plain.post(CONFIRM).status_code == 403
    page = researcher_client.get(PAGE)
    assert page.status_code == 200 and b'enctype="multipart/form-data"' in page.content


def test_a_preview_with_errors_shows_them_by_file_and_line_and_writes_nothing(researcher_client, tmp_path, data_dir):
    root = copy_sample(tmp_path / "bad")
    votes = rows(root / "votes.jsonl")
    votes[16]["winner"] = XSS
    votes[20]["instruction_id"] = "nope"
    (root / "votes.jsonl").write_text("".join(json.dumps(v) + "\n" for v in votes))
    before = table_counts()
    page = researcher_client.post(PAGE, {**_files(root), "slug": "up"})
    assert page.status_code == 422
    body = page.content.decode()
    assert "<code>votes.jsonl:17</code>: winner must be model_a, model_b or tie" in body
    assert "<code>votes.jsonl:21</code>: unknown instruction_id" in body
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body and XSS not in body
    assert 'id="confirm-import"' not in body
    assert table_counts() == before and not Study.objects.filter(slug="up").exists()
    [kept] = _uploads(data_dir)  # a failed upload is kept for the next preview, but cannot be confirmed
    assert kept.parent.name == f"u{page.wsgi_request.user.pk}"
    assert researcher_client.post(CONFIRM, {"upload": "anything"}).status_code == 302
    assert table_counts() == before


def test_a_clean_preview_writes_nothing_and_the_confirm_imports_it(researcher_client, researcher, data_dir):
    before = table_counts()
    page = researcher_client.post(PAGE, {**_files(), "slug": "up", "name": "Uploaded <b>study</b>"})
    assert page.status_code == 200
    body = page.content.decode()
    assert "Create the new study <strong>up</strong> (Uploaded &lt;b&gt;study&lt;/b&gt;)" in body
    counts = page.context["counts"]
    assert counts == {
        "instructions": 3,
        "models": 4,
        "responses": 12,
        "pairs": 18,
        "votes": len(rows(SAMPLE / "votes.jsonl")),
        "rankings": 9,
        "annotators": 4,
    }
    assert f"<td>{counts['votes']}</td>" in body
    assert table_counts() == before and not Study.objects.filter(slug="up").exists()
    [folder] = _uploads(data_dir)
    upload_id = page.context["upload_id"]
    assert folder.name == upload_id and (folder / "votes.jsonl").read_bytes() == (SAMPLE / "votes.jsonl").read_bytes()

    # Another session cannot confirm it, even knowing the id; a posted slug is ignored.
    other = Client()
    other.force_login(researcher)
    assert other.post(CONFIRM, {"upload": upload_id}).status_code == 302
    assert table_counts() == before
    done = researcher_client.post(CONFIRM, {"upload": upload_id, "slug": "evil"})
    assert done.status_code == 302 and done["Location"] == reverse("annotations:study", args=["up"])
    study = Study.objects.get(slug="up")
    assert study.created_by == researcher and study.name == "Uploaded <b>study</b>"
    assert not Study.objects.filter(slug="evil").exists()
    assert Submission.objects.filter(assignment__batch__study=study).count() == counts["votes"] + counts["rankings"]
    assert _uploads(data_dir) == []
    assert "Imported into up" in researcher_client.get(done["Location"]).content.decode()
    # The same confirm again does nothing more.
    after = table_counts()
    assert researcher_client.post(CONFIRM, {"upload": upload_id}).status_code == 302
    assert table_counts() == after


def test_replacing_is_limited_to_the_users_own_manual_studies(researcher_client, researcher, other_researcher):
    run_import(SAMPLE, "mine")
    Study.objects.filter(slug="mine").update(created_by=researcher)
    run_import(SAMPLE, "bobs")
    Study.objects.filter(slug="bobs").update(created_by=other_researcher)
    Study.objects.create(slug="cob", name="c", source=Study.Source.COBBLER, created_by=researcher)
    page = researcher_client.get(PAGE)
    choices = dict(page.context["form"].fields["replace"].choices)
    assert "mine" in choices and "bobs" not in choices and "cob" not in choices
    for slug in ("bobs", "cob"):
        refused = researcher_client.post(PAGE, {**_files(), "replace": slug})
        assert refused.status_code == 422 and "replace" in refused.context["form"].errors
    taken = researcher_client.post(PAGE, {**_files(), "slug": "bobs"})
    assert taken.status_code == 422 and "slug" in taken.context["form"].errors

    # The refused previews staged votes and rankings: left out explicitly, they are not imported.
    page = researcher_client.post(
        PAGE, {**_files(skip=("votes", "rankings")), "replace": "mine", "drop_votes": "on", "drop_rankings": "on"}
    )
    assert page.status_code == 200 and "Replace the content" in page.content.decode()
    assert Submission.objects.filter(assignment__batch__study__slug="mine").exists()  # not yet
    researcher_client.post(CONFIRM, {"upload": page.context["upload_id"]})
    assert not Submission.objects.filter(assignment__batch__study__slug="mine").exists()
    assert Study.objects.get(slug="mine").created_by == researcher


def test_uploads_are_size_limited(researcher_client, settings, data_dir):
    settings.STUDY_IMPORT_MAX_BYTES = 500
    page = researcher_client.post(PAGE, {**_files(), "slug": "big"})
    assert page.status_code == 422 and "votes" in page.context["form"].errors
    assert "larger than 500 bytes" in page.content.decode()
    assert not Study.objects.filter(slug="big").exists()
    [staged] = _uploads(data_dir)  # the files within the limit are kept for the next try, never the big one
    assert "votes.jsonl" not in {p.name for p in staged.iterdir()}
    assert all(p.stat().st_size <= 500 for p in staged.iterdir())


def test_an_oversized_request_is_refused_before_it_is_read(researcher_client, settings, data_dir):
    settings.STUDY_IMPORT_MAX_BYTES = 10
    huge = SimpleUploadedFile("votes.jsonl", b"{}\n" * 400_000)  # 1.2 MB > 4 x 10 bytes + 1 MiB
    page = researcher_client.post(PAGE, {**_files(skip=("votes",)), "votes": huge, "slug": "big"})
    assert page.status_code == 413 and 'id="upload-too-large"' in page.content.decode()
    assert _uploads(data_dir) == [] and not Study.objects.filter(slug="big").exists()


def test_the_upload_still_needs_the_csrf_token(researcher):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(researcher)
    assert strict.post(PAGE, {**_files(), "slug": "csrf"}).status_code == 403
    assert not Study.objects.filter(slug="csrf").exists()
