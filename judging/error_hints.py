"""What a call error most likely means and what to check: ``hint_for("401 AuthenticationError")``.

Error texts start with what happened (the runner contract): "401 ...", "403 ...", "404 ...",
"429 rate limited", "<5xx> server error", "timeout", "connection error", and the one-line
refusals of judging.endpoints ("... is not allowed by JUDGE_ALLOWED_HOSTS", "host not allowed: ...").
The classes are tried in a fixed order because a text can name two things: the allow-list
refusal quotes a host that might look like a number, so it is read first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Hint:
    kind: str  # "host_not_allowed" | "auth" | "not_found" | "rate_limited" | "unreachable" | "server_error"
    text: str


HOST_NOT_ALLOWED = Hint(
    "host_not_allowed",
    "The base URL's host is refused by JUDGE_ALLOWED_HOSTS: add that host (e.g. 10.0.0.5:8000) to the "
    "setting, or point the model at an allowed endpoint. No request (and no key) was sent.",
)
AUTH = Hint(
    "auth",
    "The endpoint refused the key: check the key variable (named JUDGE_KEY_...) is set in the workers' "
    "environment, or type the key again; a changed base URL drops the stored key.",
)
NOT_FOUND = Hint(
    "not_found",
    "Nothing answers at that address: check the base URL (it usually ends in /v1) and the model name "
    "the server serves (GET /v1/models lists them).",
)
RATE_LIMITED = Hint(
    "rate_limited",
    "The provider is rate-limiting: lower the model's RPM / TPM limits or its concurrency; the calls "
    "are retried after the Retry-After the provider sends.",
)
UNREACHABLE = Hint(
    "unreachable",
    "Could not reach the server: is it running on that host and port, and reachable from the workers? "
    "A timeout can also mean the model is still loading or the request timeout is too short.",
)
SERVER_ERROR = Hint(
    "server_error",
    "The server failed (5xx): look at its log; it is often overloaded or out of memory (a 504 is a "
    "proxy giving up waiting). Failed calls are retried; lowering concurrency may help.",
)

_STATUS = re.compile(r"(?<![\w.:/])([1-5]\d\d)(?![\w.:/])")
_ALLOWED = re.compile(r"JUDGE_ALLOWED_HOSTS|host not allowed|is not allowed", re.IGNORECASE)
_AUTH = re.compile(r"AuthenticationError|PermissionDenied|unauthori[sz]ed|forbidden|invalid api key", re.IGNORECASE)
_NOT_FOUND = re.compile(r"NotFoundError|not found|does not exist", re.IGNORECASE)
_RATE = re.compile(r"rate.?limit|too many requests", re.IGNORECASE)
_UNREACHABLE = re.compile(
    r"timeout|timed out|connection (?:error|refused|reset)|cannot resolve host|"
    r"name or service not known|unreachable",
    re.IGNORECASE,
)
_SERVER = re.compile(r"server error|internal error|bad gateway|service unavailable", re.IGNORECASE)


def classify(error_text: str) -> Hint | None:
    """The hint class of ``error_text``, or None when the text says nothing we recognise."""
    text = (error_text or "").strip()
    if not text:
        return None
    if _ALLOWED.search(text):
        return HOST_NOT_ALLOWED
    match = _STATUS.search(text)
    code = int(match.group(1)) if match else None
    if code in (401, 403) or (code is None and _AUTH.search(text)):
        return AUTH
    if code == 404 or (code is None and _NOT_FOUND.search(text)):
        return NOT_FOUND
    if code == 429 or (code is None and _RATE.search(text)):
        return RATE_LIMITED
    if code is None and _UNREACHABLE.search(text):
        return UNREACHABLE
    if (code is not None and code >= 500) or _SERVER.search(text):
        return SERVER_ERROR
    return None


def hint_for(error_text: str) -> str:
    """One or two sentences on what to check for this error; "" when there is nothing to say."""
    hint = classify(error_text)
    return hint.text if hint else ""
