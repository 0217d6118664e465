"""The model form's "Test connection": one real judging prompt over real HTTP (the simulator, or a
scripted endpoint), latency + raw reply + parse, errors with hints, keys kept to their endpoint,
the allow-list, the throttle and who may press it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import cache
from django.test import Client

from judging import connection_test, prompts
from judging.models import RegisteredModel

SECRET = "sk-test-CONNECTION-" + "k" * 16
HTMX = {"HX-Request": "true"}


class Endpoint:
    """A scripted OpenAI-compatible endpoint: answers ``status`` + ``text``, records every request."""

    def __init__(self) -> None:
        self.status, self.text, self.requests = 200, "System Star is better", []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                endpoint.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if endpoint.status == 200:
                    payload = {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": endpoint.text},
                            }
                        ],
                        "usage": {"prompt_tokens": 90, "completion_tokens": 5, "total_tokens": 95},
                    }
                else:
                    payload = {"error": {"message": "scripted failure", "type": "x", "code": None}}
                raw = json.dumps(payload).encode()
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, prefix: str = "/v1") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{prefix}"


@pytest.fixture(autouse=True)
def _unthrottled(settings) -> None:
    # Test databases reuse user ids across runs and the throttle counts in Redis: only the
    # throttle test below runs with a real rate.
    settings.THROTTLE_CONNECTION_TEST = "100000/min"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.server.shutdown()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mine(owner, base_url: str, model: str = "m", **fields) -> RegisteredModel:
    defaults = {"kind": "openai", "request_timeout": 5.0, "transport": "http", "owner": owner}
    defaults.update(fields)
    return RegisteredModel.objects.create(
        name=fields.pop("name", "mine"),
        base_url=base_url,
        model=model,
        **{k: v for k, v in defaults.items() if k != "name"},
    )


def _form(base_url: str, model: str, **extra) -> dict:
    return {
        "kind": "openai",
        "base_url": base_url,
        "model": model,
        "generation": "{}",
        "request_timeout": 5,
        "transport": "http",
        **extra,
    }


# --- the prompt and the parse ------------------------------------------------------------


def test_it_sends_a_real_judge_prompt_and_parses_the_reply(researcher_client, researcher, simulator):
    judge = _mine(researcher, simulator.base_url, "sim:order_first=1")
    response = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX)
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    assert 'data-ok="true"' in body and " ms</dd>" in body
    assert "System Star: the first answer (the right one)" in body
    assert "System Star is better" in body
    assert f"Connection to {judge.name} works" in body  # the success message, consumed here
    # The prompt is the real template of the default version, for the two made-up answers.
    sent = prompts.render(
        version=prompts.DEFAULT_VERSION,
        condition="order",
        instruction=connection_test.INSTRUCTION,
        reference="",
        first_text=connection_test.ANSWERS[0],
        second_text=connection_test.ANSWERS[1],
    )
    assert simulator.stats.total_calls >= 1
    assert sent.messages[1]["content"].count(connection_test.ANSWERS[0]) == 1


@pytest.mark.parametrize(
    ("knobs", "shown"),
    [
        ("order_last=1", "System Square: the second answer (the wrong one)"),
        ("invalid=1", "invalid: the robust parser found no verdict"),
        ("order_first=1,style=json", "System Star: the first answer (the right one)"),
    ],
)
def test_it_shows_how_the_reply_parsed(researcher_client, researcher, simulator, knobs, shown):
    judge = _mine(researcher, simulator.base_url, f"sim:{knobs}")
    body = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert shown in body


@pytest.mark.parametrize(
    ("knobs", "outcome", "status", "message"),
    [
        ("order_first=1", "works", "Works: it answered with a verdict for the right answer", "works: answered in"),
        ("order_last=1", "wrong", "Reached, but it chose the wrong answer", "reached, but it chose the wrong answer"),
        (
            "invalid=1",
            "unreadable",
            "Reached, but the answer could not be read as a verdict",
            "reached, but the answer could not be read as a verdict",
        ),
    ],
)
def test_only_a_right_readable_verdict_is_shown_as_success(
    researcher_client, researcher, simulator, knobs, outcome, status, message
):
    judge = _mine(researcher, simulator.base_url, f"sim:{knobs}")
    body = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert f'data-outcome="{outcome}"' in body and status in body
    assert f"Connection to {judge.name} {message}" in body
    success = outcome == "works"
    assert ('class="message success"' in body) is success and ('class="message warning"' in body) is not success
    assert ('id="test-status" class="success"' in body) is success
    if not success:
        assert 'id="test-status" class="warning"' in body


def test_the_raw_reply_is_escaped_and_truncated(researcher_client, researcher, endpoint):
    endpoint.text = "<script>alert(1)</script> System Star is better. " + "x" * 2000
    judge = _mine(researcher, endpoint.url())
    body = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "x" * connection_test.RAW_LIMIT not in body and "&hellip;" in body
    assert "System Star: the first answer" in body


# --- errors with hints -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error", "hint"),
    [
        (401, "401", "key variable"),
        (404, "404", "model name"),
        (429, "429 rate limited", "RPM"),
        (503, "503 server error", "5xx"),
    ],
)
def test_an_error_shows_with_its_hint(researcher_client, researcher, endpoint, status, error, hint):
    endpoint.status = status
    judge = _mine(researcher, endpoint.url())
    body = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert 'data-ok="false"' in body and 'id="test-error"' in body and error in body
    assert 'id="test-hint"' in body and hint in body
    assert f"Connection to {judge.name} failed" in body
    assert len(endpoint.requests) == 1  # one call: the test never retries


def test_an_unreachable_server_says_so(researcher_client, researcher):
    judge = _mine(researcher, f"http://127.0.0.1:{_free_port()}/v1", transport="openai")
    body = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert "connection error" in body and "running on that host and port" in body


def test_the_simulator_rate_limit_and_server_errors_come_through(researcher_client, researcher, simulator):
    limited = _mine(researcher, simulator.base_url, "sim:error_rate=1,errors=429", name="limited")
    body = researcher_client.post(f"/judging/judges/{limited.pk}/test/", headers=HTMX).content.decode()
    assert "429 rate limited" in body and "lower the model" in body


def test_a_baseline_answers_locally(researcher_client, db):
    judge = RegisteredModel.objects.create(name="first", kind="baseline", baseline="first-slot")
    body = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert "System Star: the first answer (the right one)" in body


# --- unsaved values and keys -------------------------------------------------------------


def test_unsaved_form_values_are_tested_and_nothing_is_saved(researcher_client, simulator):
    response = researcher_client.post(
        "/judging/judges/new/test/", _form(simulator.base_url, "sim:order_first=1", name="draft"), headers=HTMX
    )
    assert response.status_code == 200 and "System Star: the first answer" in response.content.decode()
    assert not RegisteredModel.objects.exists()


def test_bad_form_values_are_one_line_errors(researcher_client, db):
    response = researcher_client.post("/judging/judges/new/test/", _form("http://127.0.0.1:9/v1", ""), headers=HTMX)
    assert response.status_code == 422 and "needs a base URL and a model" in response.content.decode()


def test_a_typed_key_is_sent_only_to_this_endpoint(researcher_client, endpoint):
    researcher_client.post("/judging/judges/new/test/", _form(endpoint.url(), "m", api_key=SECRET), headers=HTMX)
    assert endpoint.requests[-1]["auth"] == f"Bearer {SECRET}"


def test_the_stored_key_goes_only_with_its_base_url(researcher_client, researcher, endpoint):
    judge = _mine(researcher, endpoint.url("/a/v1"))
    judge.set_api_key(SECRET)
    judge.save()
    same = researcher_client.post(
        f"/judging/judges/{judge.pk}/edit/test/", _form(endpoint.url("/a/v1"), "m"), headers=HTMX
    )
    assert same.status_code == 200 and endpoint.requests[-1]["auth"] == f"Bearer {SECRET}"
    moved = researcher_client.post(
        f"/judging/judges/{judge.pk}/edit/test/", _form(endpoint.url("/b/v1"), "m"), headers=HTMX
    )
    assert moved.status_code == 200 and endpoint.requests[-1]["path"].startswith("/b/v1")
    assert endpoint.requests[-1]["auth"] is None  # a new endpoint never gets the stored key
    assert SECRET not in same.content.decode() + moved.content.decode()
    judge.refresh_from_db()
    assert judge.base_url == endpoint.url("/a/v1") and judge.get_api_key() == SECRET  # nothing saved


def test_a_refused_host_gets_no_request_and_no_key(researcher_client, researcher, endpoint, settings):
    judge = _mine(researcher, endpoint.url())
    judge.set_api_key(SECRET)
    judge.save()
    settings.JUDGE_ALLOWED_HOSTS = ["public-https"]
    form = researcher_client.post("/judging/judges/new/test/", _form(endpoint.url(), "m", api_key=SECRET), headers=HTMX)
    assert form.status_code == 422 and "JUDGE_ALLOWED_HOSTS" in form.content.decode()
    saved = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX).content.decode()
    assert "not allowed by JUDGE_ALLOWED_HOSTS" in saved and "No request (and no key) was sent" in saved
    assert endpoint.requests == []


# --- who, how often, and without JavaScript ----------------------------------------------


def test_only_researchers_who_may_use_it_can_test(client, researcher, other_researcher, django_user_model, simulator):
    judge = _mine(researcher, simulator.base_url, "sim:")
    url = f"/judging/judges/{judge.pk}/test/"
    assert client.post(url).status_code == 302  # to the login page
    client.force_login(django_user_model.objects.create_user("eve", password="eve-password-1"))
    assert client.post(url).status_code == 403
    client.force_login(other_researcher)
    assert client.post(url).status_code == 404  # a private model of someone else does not exist
    assert client.post(f"/judging/judges/{judge.pk}/edit/test/", _form(simulator.base_url, "sim:")).status_code == 404
    client.force_login(researcher)
    assert client.get(url).status_code == 405
    assert simulator.stats.total_calls == 0


def test_it_needs_the_csrf_token(researcher, simulator):
    judge = _mine(researcher, simulator.base_url, "sim:")
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post(f"/judging/judges/{judge.pk}/test/").status_code == 403
    assert simulator.stats.total_calls == 0


def test_it_is_throttled_per_user(researcher_client, researcher, simulator, settings):
    settings.THROTTLE_CONNECTION_TEST = "2/hour"  # one fixed window: the calls never straddle two
    cache.delete(f"throttle:connection-test:user-{researcher.pk}:{int(time.time() // 3600)}")  # a rerun's count
    judge = _mine(researcher, simulator.base_url, "sim:")
    url = f"/judging/judges/{judge.pk}/test/"
    statuses = [researcher_client.post(url, headers=HTMX).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    throttled = researcher_client.post(url, headers=HTMX)
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) >= 1
    assert "Too many connection tests" in throttled.content.decode()
    assert simulator.stats.total_calls == 2


def test_without_htmx_it_is_a_page(researcher_client, researcher, simulator):
    judge = _mine(researcher, simulator.base_url, "sim:order_first=1")
    page = researcher_client.post(f"/judging/judges/{judge.pk}/test/")
    body = page.content.decode()
    assert page.status_code == 200 and "<html" in body and "Connection test: mine" in body
    assert "System Star: the first answer" in body
