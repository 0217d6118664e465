"""One report's loaders read the database once: sections that need the same frame share it.

``build_report`` opens ``report_cache()``; inside it a loader decorated with
``shared_within_report`` runs once per arguments and later calls get a copy of its result
(a section may add columns to its frame without another section seeing them). Outside the
block every call reads the database, as before. The data a report reads is fixed when it
starts (``data_version``), so sharing frames within one report changes no number.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

import pandas as pd
from django.db.models import Model

_RESULTS: ContextVar[dict[tuple, Any] | None] = ContextVar("analysis_report_cache", default=None)

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def report_cache() -> Iterator[None]:
    token = _RESULTS.set({})
    try:
        yield
    finally:
        _RESULTS.reset(token)


def shared_within_report(*, context: Callable[[], object] = lambda: None) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a loader; ``context`` names state besides the arguments that its result depends on."""

    def decorate(loader: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(loader)
        def shared(*args: P.args, **kwargs: P.kwargs) -> R:
            results = _RESULTS.get()
            if results is None:
                return loader(*args, **kwargs)
            key = (
                loader.__module__,
                loader.__qualname__,
                context(),
                tuple(_key(a) for a in args),
                tuple(sorted((k, _key(v)) for k, v in kwargs.items())),
            )
            if key not in results:
                results[key] = loader(*args, **kwargs)
            return _copy(results[key])

        return shared

    return decorate


def _key(value: object) -> object:
    if isinstance(value, Model):
        return (type(value).__name__, value.pk)
    if isinstance(value, dict):  # e.g. response lengths: keyed by content, not identity
        return frozenset(value.items())
    return value  # profiles (frozen dataclasses), strings, None


def _copy(value: Any) -> Any:
    if isinstance(value, pd.DataFrame):
        return value.copy()
    if isinstance(value, list | dict):
        return value.copy()
    return value
