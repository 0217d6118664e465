"""What the API accepts is what its schema says (cobbler_site/foundation/api_input.py), one case per
leniency of DRF that schemathesis' strict run found: unknown fields, trimmed text, a slug with
a final newline, "" as a null budget, an empty ?page=, an unknown export, form bodies."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.models import Study
from judging.serializers import JobResumeInputSerializer
from tests.annotations.conftest import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def _create(api: APIClient, **fields: object):
    return api.post("/api/studies/", {"slug": "s", "name": "S", **fields}, format="json")


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"overlpa": 2}, "Unknown field: 'overlpa'."),  # a typo was ignored in silence
        ({"slug": " s"}, "Enter a valid"),  # was trimmed to "s", which the schema's pattern refuses
        ({"slug": "s\n"}, "line break at the end"),  # Python's "$" matched before the newline
        ({"name": "  "}, None),  # not blank once text is taken as sent: accepted below
    ],
)
def test_a_study_body_is_taken_exactly_as_the_schema_says(api, fields, error):
    response = _create(api, **fields)
    if error is None:
        assert response.status_code == 201 and Study.objects.get().name == "  "
    else:
        assert response.status_code == 400 and error in response.content.decode()
        assert not Study.objects.exists()


def test_api_bodies_are_json_only(api):
    response = api.post("/api/studies/", {"slug": "s", "name": "S"})  # multipart, APIClient's default
    assert response.status_code == 415 and not Study.objects.exists()
    assert _create(api).status_code == 201


@pytest.mark.parametrize(
    ("budget", "stored"),
    [("2.5", Decimal("2.5")), (2.5, Decimal("2.5")), (0.00005, Decimal("0.0001")), (None, None)],
)
def test_a_budget_is_a_decimal_string_or_a_number(budget, stored):
    data = JobResumeInputSerializer(data={"budget_usd": budget})
    assert data.is_valid(), data.errors
    assert data.validated_data["budget_usd"] == stored


@pytest.mark.parametrize("budget", ["", " 2", "2.", "+2", "2e1", "-0", "1.00001", True, -1, 100_000_000, "NaN"])
def test_anything_else_is_not_a_budget(budget):
    data = JobResumeInputSerializer(data={"budget_usd": budget})
    assert not data.is_valid() and list(data.errors) == ["budget_usd"]


@pytest.mark.parametrize("page", ["", "last", "1.0", "-1", "x", "0", "01"])
def test_a_page_is_a_whole_number_from_1(api, researcher, page):
    build_study("mine", created_by=researcher)
    assert api.get("/api/studies/").status_code == 200
    response = api.get("/api/studies/", {"page": page})
    assert response.status_code == 404 and response.json() == {"detail": "Invalid page."}
    # The CSV export ignores the page, but not a malformed one.
    assert api.get("/api/studies/mine/submissions", {"export": "csv", "page": page}).status_code == 404


def test_the_submissions_export_is_csv_or_nothing(api, researcher):
    build_study("mine", created_by=researcher)
    assert api.get("/api/studies/mine/submissions", {"export": "csv"})["Content-Type"].startswith("text/csv")
    response = api.get("/api/studies/mine/submissions", {"export": "xlsx"})  # was the JSON page
    assert response.status_code == 400 and response.json() == {"detail": "export must be csv."}


def test_the_schema_says_so(client, researcher):
    client.force_login(researcher)
    schema = client.get("/api/schema/?format=json").json()
    for path in ("/api/judge-jobs/{id}/pause/", "/api/generation-jobs/{id}/cancel/"):
        assert "requestBody" not in schema["paths"][path]["post"]
    assert "requestBody" in schema["paths"]["/api/judge-jobs/{id}/resume/"]["post"]
    body = schema["components"]["schemas"]["StudyCreateInputRequest"]
    assert body["additionalProperties"] is False and body["properties"]["name"]["minLength"] == 1
