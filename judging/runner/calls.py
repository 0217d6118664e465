"""One attempt of one request, in an HTTP thread, and the retry policy.

An HTTP thread never touches the database: before sending it asks the chunk's thread, which
counts the request (``store.admit``) and answers yes or no; after the call it hands the
outcome back. A transient error is not slept on here: the row is deferred (``retry_at``),
released, and a later chunk retries it, so waiting never holds a worker slot.
"""

from __future__ import annotations

import queue
import random
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from judging import llm
from judging.runner.limits import ModelLimits
from judging.runner.store import Outcome
from judging.runner.work import Request, estimate_tokens

ADMIT_TIMEOUT = 60.0  # a chunk thread that died never answers: give up, send nothing


def backoff(attempt: int) -> float:
    """Exponential backoff with half jitter (full jitter would starve the unlucky)."""
    base, cap = settings.JUDGING_BACKOFF_BASE, settings.JUDGING_BACKOFF_CAP
    return min(cap, base * 2 ** max(0, attempt - 1)) * random.uniform(0.5, 1.0)


def retry_delay(exc: llm.TransientError, attempts: int) -> float:
    """Retry-After when the endpoint gave one, else our backoff; never beyond the cap."""
    delay = exc.retry_after if exc.retry_after is not None else backoff(attempts)
    return max(0.0, min(delay, settings.JUDGING_BACKOFF_CAP))


@dataclass
class Ticket:
    """An HTTP thread's "may I send this?" to the chunk thread."""

    request: Request
    estimate: Decimal
    answered: threading.Event = field(default_factory=threading.Event)
    allowed: bool = False


def attempt(
    judge: llm.JudgeSnapshot,
    limits: ModelLimits | None,
    request: Request,
    estimate: Decimal,
    inbox: queue.Queue,
    stop: threading.Event,
) -> None:
    """Runs in an HTTP thread; always posts exactly one ("done"|"skip", ...) message."""
    try:
        inbox.put(_attempt(judge, limits, request, estimate, inbox, stop))
    except Exception as exc:  # a bug: the chunk thread re-raises it
        inbox.put(("crash", exc))


def _attempt(
    judge: llm.JudgeSnapshot,
    limits: ModelLimits | None,
    request: Request,
    estimate: Decimal,
    inbox: queue.Queue,
    stop: threading.Event,
) -> tuple[str, object]:
    if limits is None:  # a baseline: answered locally, no request, nothing to count
        # Baselines are judges only, and a judge prompt always carries its labels and texts.
        assert request.labels is not None and request.texts is not None
        if stop.is_set():
            return "skip", request
        return "done", Outcome(
            request,
            llm.complete(
                judge, request.messages, seed_parts=request.seed_parts, labels=request.labels, texts=request.texts
            ),
        )
    if not limits.concurrency.acquire(stop.is_set):
        return "skip", request
    rate_limited, retry_after = False, None
    try:
        if stop.is_set():
            return "skip", request
        limits.requests.acquire(1)
        tokens = estimate_tokens(request) if limits.tpm else 0
        if tokens:
            limits.tokens.acquire(tokens)
        ticket = Ticket(request, estimate)
        inbox.put(("ask", ticket))
        if not ticket.answered.wait(ADMIT_TIMEOUT) or not ticket.allowed:
            if tokens:
                limits.tokens.reserve(-tokens)
            return "skip", request
        outcome = Outcome(request)
        try:
            outcome.completion = llm.complete(
                judge,
                request.messages,
                seed_parts=request.seed_parts,
                labels=request.labels or ("System Star", "System Square"),
                texts=request.texts or ("", ""),
                body=request.body,
            )
        except llm.PermanentError as exc:
            outcome.error = str(exc)
        except llm.TransientError as exc:
            outcome.error = str(exc)
            rate_limited = str(exc).startswith("429")
            retry_after = exc.retry_after
            delay = retry_delay(exc, request.row.attempts)
            outcome.retry_at = timezone.now() + timedelta(seconds=delay)
        if tokens:  # settle the estimate with what the call really used
            used = (outcome.completion.tokens_in + outcome.completion.tokens_out) if outcome.completion else 0
            if used != tokens:
                limits.tokens.reserve(used - tokens)
        return "done", outcome
    finally:
        limits.concurrency.release(rate_limited=rate_limited, retry_after=retry_after)
