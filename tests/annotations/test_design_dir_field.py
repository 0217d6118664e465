"""The CoBBLEr design source (issue 10, item 6): no server path on the page, confinement in the API.

The page takes an upload of the letter map (human_annotation_gt_formatted.json); a file that
is not one is a form error, never a 500. The API's cobbler_design_dir names a directory under
DATA_DIR/designs (settings.DESIGNS_DIR) and refuses everything else with one message, so it
does not reveal what exists outside. The command keeps its path argument.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.forms import GenerateBatchesForm
from annotations.models import Batch, Study
from annotations.services.design import LETTER_MAP_PATH, MAX_LETTER_MAP_BYTES
from tests.annotations.conftest import build_cobbler_study, build_study
from tests.conftest import COBBLER_DIR

needs_data = pytest.mark.skipif(not COBBLER_DIR.is_dir(), reason="the shared CoBBLEr data is not present")


def _upload(content: bytes, name: str = "design.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def _post(client, study: Study, upload: SimpleUploadedFile | None = None, **extra):
    data = {"condition": "bandwagon", "seed": 1, "pairs_per_batch": 2, **extra}
    if upload is not None:
        data["cobbler_design"] = upload
    return client.post(reverse("annotations:generate", args=[study.slug]), data, headers={"HX-Request": "true"})


def test_the_form_has_no_server_path_field(researcher_client, researcher, db):
    assert "cobbler_design_dir" not in GenerateBatchesForm().fields
    study = build_study("page", instructions=1, created_by=researcher)
    html = researcher_client.get(reverse("annotations:study", args=[study.slug])).content.decode()
    assert 'type="file" name="cobbler_design"' in html and 'enctype="multipart/form-data"' in html
    assert 'hx-encoding="multipart/form-data"' in html and "cobbler_design_dir" not in html


def test_a_posted_server_path_is_ignored(researcher_client, researcher, db):
    """An old-style path is not read: the fresh, seeded design is generated as without it."""
    study = build_study("ignored", instructions=1, created_by=researcher)
    response = _post(researcher_client, study, cobbler_design_dir=str(COBBLER_DIR))
    assert response.status_code == 200 and study.batches.count() == 1
    assert not study.batches.filter(label__startswith="CoBBLEr").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"PK\x03\x04 this is a zip, not JSON", "The design file is not valid JSON (line 1, column 1"),
        (b"\xff\xfe\x00b\x00a\x00d", "The design file is not UTF-8 text"),
        (b'[{"vicuna": "System L"}, ', "The design file is not valid JSON"),
        (b'{"vicuna": "System L"}', "The design file is not a list of {model: letter} maps"),
        (b'[{"vicuna": 12}]', "The design file is not a list of {model: letter} maps"),
        (b"[]", "The design file is not a list of {model: letter} maps"),
        (b"[" * 100_000 + b"]" * 100_000, "The design file is not valid JSON (nested too deeply)"),
        (b"", "The submitted file is empty."),
        (b" " * (MAX_LETTER_MAP_BYTES + 1), "The design file is larger than 1024 KB"),
    ],
)
def test_a_file_that_is_not_a_letter_map_is_a_form_error(researcher_client, researcher, db, content, message):
    study = build_study("bad", instructions=1, created_by=researcher)
    response = _post(researcher_client, study, _upload(content))
    body = response.content.decode()
    assert response.status_code == 422, body[:300]
    assert message in body.replace("&#x27;", "'").replace("&quot;", '"')
    assert Batch.objects.filter(study=study).count() == 0


@needs_data
def test_the_uploaded_letter_map_reproduces_the_cobbler_design(researcher_client, researcher, db):
    study = build_cobbler_study("cob-page")
    Study.objects.filter(pk=study.pk).update(created_by=researcher)
    upload = _upload((COBBLER_DIR / LETTER_MAP_PATH).read_bytes(), LETTER_MAP_PATH.name)
    response = _post(researcher_client, study, upload)
    assert response.status_code == 200 and response.headers.get("HX-Redirect"), response.content[:300]
    batches = study.batches.filter(condition="bandwagon")
    assert batches.count() == 25 and sum(b.tasks.count() for b in batches) == 750
    assert batches.filter(label__startswith="CoBBLEr").count() == 25


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def designs(settings, tmp_path):
    root = tmp_path / "designs"
    root.mkdir()
    settings.DESIGNS_DIR = root
    return root


def _api_generate(api, design_dir: str):
    return api.post(
        "/api/studies/api-design/batches/generate",
        {"condition": "bandwagon", "cobbler_design_dir": design_dir},
        format="json",
    )


def test_the_api_refuses_paths_outside_designs_alike_whether_they_exist_or_not(api, researcher, designs, tmp_path):
    build_study("api-design", instructions=1, created_by=researcher)
    outside = tmp_path / "outside"
    (outside / LETTER_MAP_PATH).parent.mkdir(parents=True)
    (outside / LETTER_MAP_PATH).write_text(json.dumps([{"m": "System A"}]))
    (designs / "escape").symlink_to(outside)
    (designs / "dangling").symlink_to(tmp_path / "nowhere")
    answers = {
        name: _api_generate(api, name)
        for name in (
            str(outside),
            str(tmp_path / "nowhere"),
            "/etc",
            "/etc/passwd",
            "../outside",
            "../nowhere",
            "escape",
            "dangling",
            "escape/../..",
        )
    }
    bodies = {(r.status_code, r.content) for r in answers.values()}
    assert len(bodies) == 1, {name: (r.status_code, r.content[:120]) for name, r in answers.items()}
    status, body = bodies.pop()
    assert status in (400, 422) and str(tmp_path).encode() not in body
    assert Batch.objects.count() == 0


def test_the_api_reads_designs_under_data_dir_with_clear_errors(api, researcher, designs):
    build_study("api-design", instructions=1, created_by=researcher)
    missing = _api_generate(api, "absent")
    assert (
        missing.status_code == 422
        and missing.json()["detail"] == f"designs/absent/{LETTER_MAP_PATH.as_posix()} not found under DATA_DIR."
    )
    (designs / "broken" / LETTER_MAP_PATH).parent.mkdir(parents=True)
    (designs / "broken" / LETTER_MAP_PATH).write_bytes(b"not json at all")
    broken = _api_generate(api, "broken")
    assert broken.status_code == 422 and broken.json()["detail"].startswith(
        f"designs/broken/{LETTER_MAP_PATH.as_posix()} is not valid JSON (line 1, column 1"
    )
    (designs / "dir-not-file" / LETTER_MAP_PATH).mkdir(parents=True)
    assert _api_generate(api, "dir-not-file").status_code == 422
    assert Batch.objects.count() == 0


def test_the_command_keeps_its_path_and_fails_cleanly_on_a_non_json_file(db, tmp_path):
    build_study("cmd-design", instructions=1)
    (tmp_path / LETTER_MAP_PATH).parent.mkdir(parents=True)
    (tmp_path / LETTER_MAP_PATH).write_bytes(b"\x00\x01 binary")
    with pytest.raises(CommandError, match=r"is not valid JSON \(line 1, column 1"):
        call_command(
            "generate_batches", "--study", "cmd-design", "--condition", "order", "--cobbler-design", str(tmp_path)
        )
    with pytest.raises(CommandError, match="not found"):
        call_command(
            "generate_batches", "--study", "cmd-design", "--condition", "order", "--cobbler-design", str(tmp_path / "x")
        )
    assert Batch.objects.count() == 0
