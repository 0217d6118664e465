"""Keep a key typed into a form out of error pages, DEBUG on or off.

Django's ``sensitive_post_parameters`` and ``sensitive_variables`` only mask when the
exception reporter filter is active, and its ``is_active`` is ``not settings.DEBUG``: on the
DEBUG 500 page (``make run``, a demo) a typed key would show in the POST table. The views that
take a key therefore mark their fields sensitive *and* give the request a filter that is
always active (Django reads ``request.exception_reporter_filter`` first), derived from the
project's configured filter so everything else it hides stays hidden.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.views.debug import SafeExceptionReporterFilter, get_default_exception_reporter_filter
from django.views.decorators.debug import sensitive_post_parameters

_always_active: dict[type, type[SafeExceptionReporterFilter]] = {}


def always_active_filter() -> SafeExceptionReporterFilter:
    """An instance of the configured filter class whose ``is_active`` is always true."""
    base = type(get_default_exception_reporter_filter())
    if base not in _always_active:

        def is_active(self: SafeExceptionReporterFilter, request: Any) -> bool:
            return True

        _always_active[base] = type(f"AlwaysActive{base.__name__}", (base,), {"is_active": is_active})
    return _always_active[base]()


def masks_post_fields(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``sensitive_post_parameters(*names)`` that also holds on the DEBUG 500 page."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        masked = sensitive_post_parameters(*names)(view)

        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            request.exception_reporter_filter = always_active_filter()  # type: ignore[attr-defined]
            return masked(request, *args, **kwargs)

        return wrapper

    return decorate
