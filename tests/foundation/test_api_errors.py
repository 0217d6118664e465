"""Under /api/ every error is JSON in the schema's shape ({"detail": ...}); elsewhere the site's pages."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from cobbler_site.foundation import api_errors


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/nope/", "/api/studies/not%20a%20slug/", "/api/assignments/-1/review"])
def test_unknown_api_paths_are_json_404s(client, path):
    response = client.get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


@pytest.mark.django_db
def test_other_paths_keep_their_html_pages(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_a_server_error_under_api_is_json():
    api, page = RequestFactory().get("/api/studies/"), RequestFactory().get("/dashboard/")
    response = api_errors.server_error(api)
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    assert api_errors.server_error(page)["Content-Type"].startswith("text/html")
    assert api_errors.permission_denied(api, PermissionError()).status_code == 403
    assert api_errors.bad_request(api, ValueError()).status_code == 400
