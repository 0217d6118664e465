"""The OpenAI Batch API calls: upload the JSONL, create, retrieve, cancel, read the files.

Like ``judging.llm`` it never touches the ORM (callers pass a ``ModelSnapshot``), checks the
base URL against ``JUDGE_ALLOWED_HOSTS`` before any request carries the key, and raises the
same two error kinds with the same leading texts ("429 rate limited", "500 server error",
"timeout", "connection error", "host not allowed: ..."), never containing the key.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

from judging import endpoints
from judging.llm import ModelSnapshot, PermanentError, TransientError, tls_context

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
# Provider states after which nothing more will change.
FINAL_STATUSES = ("completed", "failed", "expired", "cancelled")
# Uploading a large JSONL or downloading an output file takes longer than one chat call.
MIN_TIMEOUT = 120.0


@dataclass(frozen=True)
class BatchStatus:
    id: str
    status: str  # validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled
    output_file_id: str
    error_file_id: str
    total: int
    completed: int
    failed: int
    errors: str  # the provider's reasons a whole batch failed, one line

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES


_clients: dict[tuple, openai.OpenAI] = {}
_lock = threading.Lock()


def _client(judge: ModelSnapshot) -> openai.OpenAI:
    timeout = max(judge.timeout, MIN_TIMEOUT)
    key = (judge.base_url, judge.api_key, timeout)
    with _lock:
        if key not in _clients:
            # Our poller owns retries: a failed poll is simply tried again at the next poll.
            _clients[key] = openai.OpenAI(
                base_url=judge.base_url,
                api_key=judge.api_key or "not-needed",
                max_retries=0,
                timeout=timeout,
                http_client=httpx2.Client(timeout=timeout, verify=tls_context()),
            )
        return _clients[key]


def _call(judge: ModelSnapshot, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run one SDK call with the errors of ``judging.llm`` (and the key grant and host checks first)."""
    if judge.refusal:
        raise PermanentError(judge.refusal)
    try:
        endpoints.check_base_url_cached(judge.base_url)
    except ValueError as exc:
        raise PermanentError(f"host not allowed: {exc}") from None
    try:
        return fn(*args, **kwargs)
    except openai.RateLimitError:
        raise TransientError("429 rate limited") from None
    except openai.APIStatusError as exc:
        if exc.status_code >= 500:
            raise TransientError(f"{exc.status_code} server error") from None
        raise PermanentError(_redact(f"{exc.status_code} {type(exc).__name__} ({what})", judge)) from None
    except openai.APITimeoutError:
        raise TransientError("timeout") from None
    except openai.APIConnectionError:
        raise TransientError("connection error") from None
    except openai.OpenAIError as exc:
        raise PermanentError(_redact(f"{type(exc).__name__} ({what}): {exc}", judge)[:300]) from None


def _redact(message: str, judge: ModelSnapshot) -> str:
    return message.replace(judge.api_key, "[redacted]") if judge.api_key else message


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    errors = ""
    if batch.errors and batch.errors.data:
        errors = "; ".join(
            f"{e.code}: {e.message}" + (f" (line {e.line})" if e.line else "") for e in batch.errors.data[:3]
        )
    return BatchStatus(
        id=batch.id,
        status=batch.status,
        output_file_id=batch.output_file_id or "",
        error_file_id=batch.error_file_id or "",
        total=counts.total if counts else 0,
        completed=counts.completed if counts else 0,
        failed=counts.failed if counts else 0,
        errors=errors[:500],
    )


def upload(judge: ModelSnapshot, content: bytes, filename: str) -> str:
    """Upload a batch input file (purpose "batch"); returns its file id."""
    client = _client(judge)
    stored = _call(judge, "upload", client.files.create, file=(filename, content, "application/jsonl"), purpose="batch")
    return stored.id


def create(judge: ModelSnapshot, input_file_id: str, metadata: dict[str, str] | None = None) -> BatchStatus:
    client = _client(judge)
    batch = _call(
        judge,
        "create batch",
        client.batches.create,
        input_file_id=input_file_id,
        endpoint=ENDPOINT,
        completion_window=COMPLETION_WINDOW,
        metadata=metadata or openai.omit,
    )
    return _status(batch)


def retrieve(judge: ModelSnapshot, batch_id: str) -> BatchStatus:
    return _status(_call(judge, "retrieve batch", _client(judge).batches.retrieve, batch_id))


def cancel(judge: ModelSnapshot, batch_id: str) -> BatchStatus:
    return _status(_call(judge, "cancel batch", _client(judge).batches.cancel, batch_id))


def content(judge: ModelSnapshot, file_id: str) -> bytes:
    """An output or error file's bytes (JSONL)."""
    return _call(judge, "file content", _client(judge).files.content, file_id).content


def request_line(custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """One line of a batch input file."""
    return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
