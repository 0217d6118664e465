"""One attempt of one request, in an HTTP thread, and the retry policy.

An HTTP thread never touches the database. The chunk's thread counted the request before
handing it over (``store.admit``); the HTTP thread sends it unless the chunk stopped
meanwhile (pause, cancel, budget), and always reports back exactly one message: ``Answered``
(it was sent: the outcome), ``NotSent`` (the chunk un-counts it) or ``Crashed`` (a bug). A
transient error is not slept on here: the row is deferred (``retry_at``), released, and a
later chunk retries it, so waiting never holds a worker slot.
"""

from __future__ import annotations

import queue
import random
import threading
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from judging import llm
from judging.runner.limits import ModelLimits
from judging.runner.store import Outcome
from judging.runner.work import Request, estimate_tokens


@dataclass(frozen=True)
class Answered:
    """The request was sent (or a baseline answered it): what came back."""

    outcome: Outcome


@dataclass(frozen=True)
class NotSent:
    """The chunk stopped before the request went out: nothing was spent on it."""

    request: Request


@dataclass(frozen=True)
class Crashed:
    """A bug in the HTTP thread: the chunk's thread re-raises it."""

    error: Exception


Report = Answered | NotSent | Crashed


def backoff(attempt: int) -> float:
    """Exponential backoff with half jitter (full jitter would starve the unlucky)."""
    base, cap = settings.JUDGING_BACKOFF_BASE, settings.JUDGING_BACKOFF_CAP
    return min(cap, base * 2 ** max(0, attempt - 1)) * random.uniform(0.5, 1.0)


def retry_delay(exc: llm.TransientError, attempts: int) -> float:
    """Retry-After when the endpoint gave one, else our backoff; never beyond the cap."""
    delay = exc.retry_after if exc.retry_after is not None else backoff(attempts)
    return max(0.0, min(delay, settings.JUDGING_BACKOFF_CAP))


def attempt(
    judge: llm.ModelSnapshot,
    limits: ModelLimits | None,
    request: Request,
    inbox: queue.Queue[Report],
    stop: threading.Event,
) -> None:
    """Runs in an HTTP thread; always posts exactly one report to ``inbox``."""
    try:
        inbox.put(_attempt(judge, limits, request, stop))
    except Exception as exc:  # a bug: the chunk thread re-raises it
        inbox.put(Crashed(exc))


def _attempt(
    judge: llm.ModelSnapshot, limits: ModelLimits | None, request: Request, stop: threading.Event
) -> Answered | NotSent:
    if limits is None:  # a baseline: answered locally, no request, nothing to count
        # Baselines are judges only, and a judge prompt always carries its labels and texts.
        assert request.labels is not None and request.texts is not None
        if stop.is_set():
            return NotSent(request)
        return Answered(
            Outcome(
                request,
                llm.complete(
                    judge, request.messages, seed_parts=request.seed_parts, labels=request.labels, texts=request.texts
                ),
            )
        )
    if not limits.concurrency.acquire(stop.is_set):
        return NotSent(request)
    rate_limited, retry_after = False, None
    try:
        if stop.is_set():
            return NotSent(request)
        limits.requests.acquire(1)
        tokens = estimate_tokens(request) if limits.tpm else 0
        if tokens:
            limits.tokens.acquire(tokens)
        if stop.is_set():  # stopped while this request waited for its rate limits
            if tokens:
                limits.tokens.reserve(-tokens)
            return NotSent(request)
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
        return Answered(outcome)
    finally:
        limits.concurrency.release(rate_limited=rate_limited, retry_after=retry_after)
