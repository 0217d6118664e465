"""Generation parameters are an allowlist with types and ranges (judging.generation_params):
the form, `create_judge --generation` and the model's validator refuse anything else naming
the field, and the send path refuses an old row's bad settings instead of sending them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import generation_params, llm
from judging.models import RegisteredModel
from tests.judging.recording_endpoint import RecordingEndpoint, model_form

HTMX = {"HX-Request": "true"}

GOOD = {
    "temperature": 0.7,
    "top_p": 1,
    "max_tokens": 64,
    "seed": 7,
    "stop": ["\n\n", "END"],
    "presence_penalty": -2,
    "frequency_penalty": 2,
    "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}},
    "reasoning_effort": "low",
}

BAD = [
    ({"stream": True}, "stream"),
    ({"extra_headers": {"Host": "evil.example"}}, "extra_headers"),
    ({"extra_query": {"a": "b"}}, "extra_query"),
    ({"extra_body": {"a": "b"}}, "extra_body"),
    ({"model": "other"}, "model"),
    ({"messages": []}, "messages"),
    ({"temperature": 2.5}, "temperature"),
    ({"temperature": "hot"}, "temperature"),
    ({"top_p": -0.1}, "top_p"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"max_tokens": 1_000_001}, "max_tokens"),
    ({"max_tokens": 1.5}, "max_tokens"),
    ({"seed": True}, "seed"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"stop": [1]}, "stop"),
    ({"presence_penalty": 3}, "presence_penalty"),
    ({"frequency_penalty": -2.01}, "frequency_penalty"),
    ({"response_format": {"type": "xml"}}, "response_format"),
    ({"response_format": {"type": "text", "extra": 1}}, "response_format"),
    ({"reasoning_effort": "max"}, "reasoning_effort"),
]


@pytest.fixture
def server() -> Iterator[RecordingEndpoint]:
    endpoint = RecordingEndpoint()
    yield endpoint
    endpoint.stop()


def _form(base_url: str, generation: str) -> dict[str, str]:
    return model_form(name="gen", base_url=base_url, generation=generation)


def test_every_allowed_parameter_passes_with_its_type():
    assert generation_params.check(GOOD) == GOOD
    assert generation_params.check({"stop": "END"}) == {"stop": "END"}
    assert generation_params.check(None) == {}


@pytest.mark.parametrize(("params", "field"), BAD)
def test_anything_else_is_refused_naming_the_field(params, field):
    with pytest.raises(generation_params.GenerationParamError, match=repr(field)) as refused:
        generation_params.check(params)
    assert refused.value.field == field and "\n" not in str(refused.value)


@pytest.mark.parametrize(("params", "field"), BAD[:6])
def test_the_form_refuses_with_422_naming_the_field(researcher_client, server, params, field):
    import json

    response = researcher_client.post("/judging/judges/new/", _form(server.url(), json.dumps(params)))
    assert response.status_code == 422 and f"&#x27;{field}&#x27;" in response.content.decode()
    assert not RegisteredModel.objects.filter(name="gen").exists()
    tested = researcher_client.post("/judging/judges/new/test/", _form(server.url(), json.dumps(params)), headers=HTMX)
    assert tested.status_code == 422 and server.requests == []


def test_the_form_saves_the_allowed_settings(researcher_client, server):
    import json

    assert researcher_client.post("/judging/judges/new/", _form(server.url(), json.dumps(GOOD))).status_code == 302
    assert RegisteredModel.objects.get(name="gen").generation == GOOD


@pytest.mark.parametrize(("params", "field"), [BAD[0], BAD[1], BAD[6]])
def test_create_judge_refuses_in_one_line(db, params, field):
    import json

    with pytest.raises(CommandError, match=repr(field)) as refused:
        call_command(
            "create_judge", "cli", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
            "--generation", json.dumps(params),
        )  # fmt: skip
    assert "\n" not in str(refused.value) and not RegisteredModel.objects.filter(name="cli").exists()


@pytest.mark.parametrize(
    "generation",
    [{"extra_headers": {"Host": "evil.example"}}, {"extra_query": {"x": "1"}}, {"model": "x", "messages": []}],
)
@pytest.mark.parametrize("transport", ["http", "openai"])
def test_an_old_row_with_bad_settings_is_never_sent(researcher, server, generation, transport):
    # Written around the validators (an old row, a raw update): the send path refuses it.
    judge = RegisteredModel.objects.create(
        name="old", kind="openai", base_url=server.url(), model="m", transport=transport, owner=researcher
    )
    RegisteredModel.objects.filter(pk=judge.pk).update(generation=generation)
    judge.refresh_from_db()
    with pytest.raises(llm.PermanentError, match="is not allowed"):
        llm.complete(llm.ModelSnapshot.of(judge), [{"role": "user", "content": "hi"}])
    assert server.requests == []


def test_stream_in_an_old_row_is_an_error_line_not_a_500(researcher_client, researcher, server, settings):
    settings.THROTTLE_CONNECTION_TEST = "100000/min"
    judge = RegisteredModel.objects.create(
        name="old", kind="openai", base_url=server.url(), model="m", owner=researcher
    )
    RegisteredModel.objects.filter(pk=judge.pk).update(generation={"stream": True})
    response = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX)
    assert response.status_code == 200 and "&#x27;stream&#x27; is not allowed" in response.content.decode()
    assert server.requests == []


def test_allowed_settings_are_sent_as_given(researcher, server):
    judge = RegisteredModel.objects.create(
        name="ok", kind="openai", base_url=server.url(), model="m", transport="http", generation=GOOD
    )
    llm.complete(llm.ModelSnapshot.of(judge), [{"role": "user", "content": "hi"}])
    body = server.requests[-1]["body"]
    assert {k: body[k] for k in GOOD} == GOOD and body["model"] == "m"
