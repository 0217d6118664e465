"""Error reports that never show a connection string, a key or a URL's credentials.

Django's default filter hides settings whose *name* looks secret; here that also covers
DATABASE_URL, REDIS_URL, the broker and the caches, and every *value* (settings, request
META, which holds the environment under runserver, frame variables, the exception message)
has the user:password part of any URL replaced, so ``redis://:hunter2@redis:6379/0``
shows as ``redis://********@redis:6379/0``.
"""

from __future__ import annotations

import re
from typing import Any

from django.views.debug import ExceptionReporter
from django.views.debug import SafeExceptionReporterFilter as _DjangoFilter

CLEANSED = "********"
# scheme://userinfo@ -> scheme://********@ (userinfo: anything up to the first '@' of the authority)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<userinfo>[^/@\s'\"<>]+)@")


def scrub_url_credentials(text: str) -> str:
    """Hide the credentials of every URL in ``text``."""
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{CLEANSED}@", text)


class SafeExceptionReporterFilter(_DjangoFilter):
    hidden_settings = re.compile(
        r"API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|COOKIE|CREDENTIAL|PRIVATE|DSN"
        r"|DATABASE|REDIS|BROKER|CACHES",
        flags=re.IGNORECASE,
    )

    def is_active(self, request: Any) -> bool:
        # Django masks sensitive_variables / sensitive_post_parameters only when DEBUG is off;
        # a key typed into a form must stay off the DEBUG 500 page of a demo or `make run` too.
        return True

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        value = super().cleanse_setting(key, value)
        return scrub_url_credentials(value) if isinstance(value, str) else value

    def cleanse_special_types(self, request: Any, value: Any) -> Any:
        value = super().cleanse_special_types(request, value)
        return scrub_url_credentials(value) if isinstance(value, str) else value


class SafeExceptionReporter(ExceptionReporter):
    """Scrubs the rendered report too: a repr or an exception message can hold a URL."""

    # A plain str on purpose: the scrubbed text is not re-marked safe (django-stubs says SafeString).
    def get_traceback_html(self) -> str:  # type: ignore[override]
        return scrub_url_credentials(str(super().get_traceback_html()))

    def get_traceback_text(self) -> str:  # type: ignore[override]  # as above
        return scrub_url_credentials(str(super().get_traceback_text()))
