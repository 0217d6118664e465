"""Every hint class of judging.error_hints, from the error texts the runner and llm.complete write."""

from __future__ import annotations

import pytest

from judging import error_hints
from judging.error_hints import classify, hint_for


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("401 AuthenticationError", "auth"),
        ("403 PermissionDeniedError", "auth"),
        ("403 Forbidden", "auth"),
        ("404 NotFoundError", "not_found"),
        ("404 Not Found", "not_found"),
        ("429 rate limited", "rate_limited"),
        ("500 server error", "server_error"),
        ("502 server error", "server_error"),
        ("503 server error", "server_error"),
        ("timeout", "unreachable"),
        ("connection error", "unreachable"),
        ("cannot resolve host 'no-such-host.invalid'", "unreachable"),
        ("host not allowed: 10.0.0.5", "host_not_allowed"),
        (
            "base URL host 10.0.0.5 (private or reserved address) is not allowed by JUDGE_ALLOWED_HOSTS",
            "host_not_allowed",
        ),
        # A host that looks like a status code is still the allow-list refusal, never a 404.
        (
            "base URL host 404.example.org (public address) over http (use https) is not allowed by "
            "JUDGE_ALLOWED_HOSTS",
            "host_not_allowed",
        ),
    ],
)
def test_each_error_text_gets_its_class(text, kind):
    hint = classify(text)
    assert hint is not None and hint.kind == kind
    assert hint_for(text) == hint.text != ""


def test_the_hints_say_what_to_check():
    assert "key variable" in hint_for("401 AuthenticationError")
    assert "base URL" in hint_for("404 NotFoundError") and "model name" in hint_for("404 NotFoundError")
    assert "RPM" in hint_for("429 rate limited") and "concurrency" in hint_for("429 rate limited")
    assert "running on that host and port" in hint_for("connection error")
    assert "JUDGE_ALLOWED_HOSTS" in hint_for("host not allowed: x")
    assert "5xx" in hint_for("500 server error")


@pytest.mark.parametrize("text", ["", "   ", "malformed chat completion", "budget exhausted"])
def test_unknown_texts_get_no_hint(text):
    assert classify(text) is None and hint_for(text) == ""


def test_a_port_or_version_number_is_not_a_status():
    # "v1/" and ":8000" are not statuses: only the words decide here (a connection error).
    assert classify("connection error to http://127.0.0.1:500/v1") is error_hints.UNREACHABLE
