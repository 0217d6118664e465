"""The generic runner: judge jobs and generation jobs on the same claims, retries, cache,
budget, limits and progress (docs/judging-runtime.md).

Modules: ``work`` (what differs per job type: rows -> requests, answers -> rows), ``claims``
(who may call for a row), ``calls`` (one attempt, retry policy), ``limits`` (shared token
buckets, adaptive concurrency, chunks per model), ``store`` (counting before sending,
storing once), ``chunk`` (one Celery chunk), ``dispatch`` (queueing, completion).
"""

from __future__ import annotations

from judging.runner.chunk import run_chunk
from judging.runner.dispatch import enqueue_sync, maybe_complete
from judging.runner.store import store_results
from judging.runner.work import Request, Result, WorkKind, generation_cache_key, kind_of, llm_cache_key

__all__ = [
    "Request",
    "Result",
    "WorkKind",
    "enqueue_sync",
    "generation_cache_key",
    "kind_of",
    "llm_cache_key",
    "maybe_complete",
    "run_chunk",
    "store_results",
]
