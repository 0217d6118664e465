"""With DEBUG on, a key typed into the model form never appears in the technical 500 page
(sensitive_post_parameters on the views that take one, sensitive_variables where it is held)."""

from __future__ import annotations

import pytest
from django.test import Client

from judging import connection_test
from judging.models import RegisteredModel
from tests.judging.recording_endpoint import model_form

TYPED_KEY = "sk-typed-" + "T" * 28


def _form() -> dict[str, str]:
    return model_form(name="boom", api_key=TYPED_KEY)


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
    monkeypatch.setattr(RegisteredModel, "save", _boom)  # after the key was read from the form
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
