from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.models import Assignment, Study
from tests.annotations.conftest import build_study, current_task_url
from tests.annotations.helpers import form_fields
from tests.conftest import COBBLER_DIR


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def test_token_is_required(db):
    assert APIClient().get("/api/studies/").status_code == 401


def test_non_staff_tokens_are_refused(django_user_model):
    user = django_user_model.objects.create_user("mallory", password="x" * 12)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert client.get("/api/studies/").status_code == 403


def test_create_generate_and_watch_a_study(api, db):
    build_study("src", instructions=2)
    created = api.post("/api/studies/", {"slug": "s2", "name": "S2", "from_study": "src", "overlap": 2}, format="json")
    assert created.status_code == 201 and created.json()["overlap"] == 2
    assert api.post("/api/studies/", {"slug": "s2", "name": "again"}, format="json").status_code == 422
    gen = api.post(
        "/api/studies/s2/batches/generate", {"condition": "order", "seed": 5, "pairs_per_batch": 3}, format="json"
    )
    assert gen.status_code == 201 and gen.json() == {
        "condition": "order",
        "batches": 2,
        "tasks": 12,
        "round": 1,
        "message": "Round 1 of order: 2 new batches (12 tasks, 4 places for workers at 2 per batch).",
    }
    assert api.post("/api/studies/s2/batches/generate", {"condition": "order"}, format="json").status_code == 400
    progress = api.get("/api/studies/s2/progress").json()["batches"]
    assert [(b["tasks"], b["target"], b["submitted"]) for b in progress] == [(6, 2, 0), (6, 2, 0)]
    assert [s["slug"] for s in api.get("/api/studies/").json()["results"]] == ["s2", "src"]


def test_submissions_and_review(api, worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    worker.post(url, {"token": token, "choice": "B"})
    rows = api.get(f"/api/studies/{pilot.slug}/submissions").json()
    assert rows["count"] == 1 and rows["results"][0]["choice"] == "B"
    assert "participant" in rows["results"][0] and "worker-1" not in str(rows)
    csv_body = api.get(f"/api/studies/{pilot.slug}/submissions?export=csv").content.decode()
    assert csv_body.startswith("submission_id,") and csv_body.count("\n") == 2

    assignment = Assignment.objects.get()
    assert (
        api.post(f"/api/assignments/{assignment.pk}/review", {"decision": "approved"}, format="json").status_code == 422
    )
    Assignment.objects.update(status=Assignment.Status.SUBMITTED)
    ok = api.post(f"/api/assignments/{assignment.pk}/review", {"decision": "approved"}, format="json")
    assert ok.status_code == 200 and ok.json()["review"] == "approved"
    assert api.get(f"/api/studies/{pilot.slug}/assignments").json()["results"][0]["review"] == "approved"


def test_other_researchers_studies_are_invisible(api, other_researcher, db):
    study = build_study("theirs", instructions=1)
    Study.objects.filter(pk=study.pk).update(created_by=other_researcher)
    assert api.get("/api/studies/theirs/").status_code == 404
    assert (
        api.post("/api/studies/theirs/batches/generate", {"condition": "order", "seed": 1}, format="json").status_code
        == 404
    )


@pytest.mark.skipif(not COBBLER_DIR.is_dir(), reason="the shared CoBBLEr data is not present")
def test_the_cobbler_design_through_the_api(api, db, settings, tmp_path):
    from annotations.services.design import LETTER_MAP_PATH
    from tests.annotations.conftest import build_cobbler_study

    # The API names a directory under DATA_DIR/designs (DESIGNS_DIR), never a server path.
    settings.DESIGNS_DIR = tmp_path
    (tmp_path / "cobbler" / LETTER_MAP_PATH).parent.mkdir(parents=True)
    (tmp_path / "cobbler" / LETTER_MAP_PATH).write_bytes((COBBLER_DIR / LETTER_MAP_PATH).read_bytes())
    build_cobbler_study("cob")
    url = "/api/studies/cob/batches/generate"
    outside = api.post(url, {"condition": "bandwagon", "cobbler_design_dir": str(COBBLER_DIR)}, format="json")
    assert outside.status_code == 422 and "DATA_DIR/designs" in outside.json()["detail"]
    r = api.post(url, {"condition": "bandwagon", "cobbler_design_dir": "cobbler"}, format="json")
    assert r.status_code == 201 and r.json()["batches"] == 25 and r.json()["tasks"] == 750 and r.json()["round"] == 1
