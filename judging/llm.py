"""The only place that talks to a judge: an OpenAI-compatible endpoint or a built-in baseline.

Runs in HTTP threads, so it never touches the ORM: callers pass a ``ModelSnapshot``.
Errors come out as two kinds: ``TransientError`` (429 with its Retry-After, 5xx, timeouts,
connection errors: worth retrying) and ``PermanentError`` (anything else). Their messages
never contain the API key.
"""

from __future__ import annotations

import functools
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import httpx2
import openai
from openai.types.chat import ChatCompletionMessageParam

from judging import endpoints, generation_params
from judging.conditions import seeded_rng
from judging.key_refusal import KeyNotGranted
from judging.vocabulary import Baseline, ModelKind, Transport


class TransientError(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(Exception):
    pass


@dataclass(frozen=True)
class ModelSnapshot:
    id: int
    kind: str
    baseline: str
    base_url: str
    model: str
    generation: dict[str, Any]
    timeout: float
    max_concurrency: int
    requests_per_minute: int
    transport: str = Transport.OPENAI
    tokens_per_minute: int = 0
    api_key: str = field(default="", repr=False)  # never in a repr, log or page
    # Why no request may be sent (a server key its owner holds no grant for); "" = none.
    refusal: str = ""

    @classmethod
    def of(cls, judge: Any) -> ModelSnapshot:
        """The call settings of ``judge``; an ungranted server key gives a snapshot that refuses
        every call (with the grant's message) instead of raising, so each row fails with it."""
        try:
            api_key = judge.get_api_key() if judge.kind == ModelKind.OPENAI else ""
            refusal = ""
        except KeyNotGranted as exc:
            api_key, refusal = "", str(exc)
        return cls(
            id=judge.pk,
            kind=judge.kind,
            baseline=judge.baseline,
            base_url=judge.base_url,
            model=judge.model,
            generation=dict(judge.generation or {}),
            timeout=judge.request_timeout,
            max_concurrency=max(1, judge.max_concurrency),
            requests_per_minute=judge.requests_per_minute,
            transport=judge.transport,
            tokens_per_minute=getattr(judge, "tokens_per_minute", 0) or 0,
            api_key=api_key,
            refusal=refusal,
        )


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    latency_ms: int


_clients: dict[tuple, openai.OpenAI] = {}
_clients_lock = threading.Lock()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's one verifying TLS context (the system's CAs, or SSL_CERT_FILE/SSL_CERT_DIR
    as the process started with them), shared by every client of both transports.

    A client builds its own otherwise: it loads the CA bundle (about 50 ms of CPU and a
    megabyte per client) while holding the clients' lock, so a model's first calls in a worker
    all waited for it. A worker builds it when it is ready (``judging.tasks``).
    """
    return httpx2.create_ssl_context()


def _new_http_client(judge: ModelSnapshot) -> httpx2.Client:
    limits = httpx2.Limits(
        max_connections=judge.max_concurrency * 2, max_keepalive_connections=judge.max_concurrency * 2
    )
    return httpx2.Client(limits=limits, timeout=judge.timeout, verify=tls_context())


def _client(judge: ModelSnapshot) -> openai.OpenAI:
    key = (judge.base_url, judge.api_key, judge.timeout, judge.max_concurrency)
    with _clients_lock:
        if key not in _clients:
            # Our loop owns retries and backoff, so the SDK must not retry on its own
            # (its default is 2 retries and a 10-minute timeout).
            _clients[key] = openai.OpenAI(
                base_url=judge.base_url,
                api_key=judge.api_key or "not-needed",
                max_retries=0,
                timeout=judge.timeout,
                http_client=_new_http_client(judge),
            )
        return _clients[key]


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Retry-After in seconds, as both transports read it; None when absent or an HTTP date
    (the runner then falls back to its own backoff)."""
    raw = headers.get("retry-after") if headers is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def _redact(message: str, secret: str) -> str:
    return message.replace(secret, "[redacted]") if secret else message


def complete(
    judge: ModelSnapshot,
    messages: list[dict[str, str]],
    *,
    seed_parts: tuple = (),
    labels: tuple[str, str] = ("System Star", "System Square"),
    texts: tuple[str, str] = ("", ""),
    body: dict[str, Any] | None = None,
) -> Completion:
    """One call. Baselines answer locally from ``labels``/``texts``/``seed_parts``.

    ``body``: the extra chat.completions parameters (default: the model's generation settings).
    """
    if judge.kind == ModelKind.BASELINE:
        return _baseline(judge.baseline, labels=labels, texts=texts, seed_parts=seed_parts)
    if judge.refusal:
        raise PermanentError(judge.refusal)
    try:  # the allowlist again: a row saved around the validators is refused, never sent
        body = generation_params.check(judge.generation if body is None else body)
    except generation_params.GenerationParamError as exc:
        raise PermanentError(str(exc)) from None
    try:  # JUDGE_ALLOWED_HOSTS, re-resolved at most once a minute: no request (no key) elsewhere
        endpoints.check_base_url_cached(judge.base_url)
    except ValueError as exc:
        raise PermanentError(str(exc)) from None
    if judge.transport == Transport.HTTP:
        return _complete_http(judge, messages, body)
    start = time.monotonic()
    try:
        # Our messages are plain {"role", "content"} dicts, the shape the SDK's TypedDicts describe.
        sdk_messages = cast(list[ChatCompletionMessageParam], messages)
        response = _client(judge).chat.completions.create(model=judge.model, messages=sdk_messages, **body)
    except openai.RateLimitError as exc:
        raise TransientError(
            "429 rate limited", retry_after_seconds(exc.response.headers if exc.response is not None else None)
        ) from None
    except openai.APIStatusError as exc:
        if exc.status_code >= 500:
            raise TransientError(f"{exc.status_code} server error") from None
        raise PermanentError(_redact(f"{exc.status_code} {type(exc).__name__}", judge.api_key)) from None
    except openai.APITimeoutError:
        raise TransientError("timeout") from None
    except openai.APIConnectionError:
        raise TransientError("connection error") from None
    except openai.OpenAIError as exc:
        raise PermanentError(_redact(f"{type(exc).__name__}: {exc}", judge.api_key)[:300]) from None
    latency = int((time.monotonic() - start) * 1000)
    text = (response.choices[0].message.content or "") if response.choices else ""
    tokens_in = response.usage.prompt_tokens if response.usage else 0
    tokens_out = response.usage.completion_tokens if response.usage else 0
    return Completion(text, tokens_in, tokens_out, latency)


_http_clients: dict[tuple, httpx2.Client] = {}


def _http_client(judge: ModelSnapshot) -> httpx2.Client:
    key = (judge.base_url, judge.timeout, judge.max_concurrency)
    with _clients_lock:
        if key not in _http_clients:
            _http_clients[key] = _new_http_client(judge)
        return _http_clients[key]


def _complete_http(judge: ModelSnapshot, messages: list[dict[str, str]], extra: dict[str, Any]) -> Completion:
    """The lean transport: same request, same error classes as the SDK path."""
    headers = {"Authorization": f"Bearer {judge.api_key}"} if judge.api_key else {}
    body = {"model": judge.model, "messages": messages, **extra}
    start = time.monotonic()
    try:
        response = _http_client(judge).post(
            f"{judge.base_url.rstrip('/')}/chat/completions", json=body, headers=headers
        )
    except httpx2.TimeoutException:
        raise TransientError("timeout") from None
    except httpx2.TransportError:
        raise TransientError("connection error") from None
    status = response.status_code
    if status == 429:
        raise TransientError("429 rate limited", retry_after_seconds(response.headers))
    if status >= 500:
        raise TransientError(f"{status} server error")
    if status >= 400:
        raise PermanentError(f"{status} {response.reason_phrase}")
    try:
        data = response.json()
        text = data["choices"][0]["message"]["content"] or ""
        usage = data.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError):
        raise PermanentError("malformed chat completion") from None
    return Completion(
        text,
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        int((time.monotonic() - start) * 1000),
    )


def _baseline(kind: str, *, labels: tuple[str, str], texts: tuple[str, str], seed_parts: tuple) -> Completion:
    """Raw text in the prompt's answer format, so the parser sees what a model would write."""
    if kind == Baseline.FIRST_SLOT:
        slot = 0
    elif kind == Baseline.LAST_SLOT:
        slot = 1
    elif kind == Baseline.LONGER:
        slot = 0 if len(texts[0]) > len(texts[1]) else 1  # ties -> second, as 3.6 does
    elif kind == Baseline.RANDOM:
        slot = seeded_rng("random-judge", *seed_parts).randrange(2)
    else:
        raise PermanentError(f"unknown baseline {kind!r}")
    return Completion(f"{labels[slot]} is better", 0, 0, 0)
