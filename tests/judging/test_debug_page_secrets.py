"""With DEBUG on, a key typed into the model form never appears in the technical 500 page
(sensitive_post_parameters on the views that take one, sensitive_variables where it is held)."""

from __future__ import annotations

import pytest
from django.test import Client

from judging import connection_test
from judging.models import Judge

TYPED_KEY = "sk-typed-" + "T" * 28


def _form() -> dict[str, str]:
    return {
        "name": "boom",
        "kind": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "api_key": TYPED_KEY,
        "generation": "{}",
        "max_concurrency": "8",
        "requests_per_minute": "600",
        "price_in_per_1k": "0",
        "price_out_per_1k": "0",
        "request_timeout": "5",
        "transport": "http",
        "use_as_judge": "on",
        "roles_shown": "on",
    }


@pytest.fixture
def debug_client(researcher, settings) -> Client:
    settings.DEBUG = True
    settings.THROTTLE_CONNECTION_TEST = "100000/min"
    client = Client(raise_request_exception=False)
    client.force_login(researcher)
    return client


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("forced failure")


def test_the_model_form_key_is_masked_on_the_500_page(debug_client, monkeypatch):
    monkeypatch.setattr(Judge, "save", _boom)  # after the key was read from the form
    response = debug_client.post("/judging/judges/new/", _form())
    page = response.content.decode()
    assert response.status_code == 500 and "forced failure" in page and "api_key" in page
    assert TYPED_KEY not in page


def test_the_connection_test_key_is_masked_on_the_500_page(debug_client, monkeypatch):
    monkeypatch.setattr(connection_test, "run", _boom)
    response = debug_client.post("/judging/judges/new/test/", _form())
    page = response.content.decode()
    assert response.status_code == 500 and "forced failure" in page and "api_key" in page
    assert TYPED_KEY not in page
