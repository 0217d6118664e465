"""Per-client rate limits kept in the Django cache (Redis in production), failing open.

One rate helper (``hit``) backs every limit: crowd entry (``/s/<slug>/start``), the login
page, the admin login, the API token endpoint and the API's per-user throttle. A limit is a
fixed window counted with ``cache.add`` + ``cache.incr`` (atomic on Redis). When the cache
is unreachable the request is let through and a warning is logged: an outage of Redis must
not turn into an outage of the site.

Rates are settings read on every request ("30/min", "10/s", "1000/hour", "5000/day").
The client is REMOTE_ADDR, or the first X-Forwarded-For hop when TRUSTED_PROXY_COUNT > 0
(only set that behind a proxy that overwrites the header).

Logins are limited per account too (``AccountLockoutBackend``): a password guessed from many
addresses is still ``LOGIN_ACCOUNT_MAX_FAILURES`` tries per ``LOGIN_ACCOUNT_WINDOW_MINUTES``,
then the account refuses every password for ``LOGIN_ACCOUNT_LOCKOUT_MINUTES``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import math
import time
from collections.abc import Callable
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template.loader import render_to_string
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle

logger = logging.getLogger(__name__)

_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """("30/min") -> (30, 60); None or "" (or "0/...") means no limit."""
    if not rate:
        return None
    num, _, unit = str(rate).partition("/")
    unit = unit.strip().lower()
    if unit not in _UNITS and unit.rstrip("s") in _UNITS:
        unit = unit.rstrip("s")
    try:
        count, seconds = int(num), _UNITS[unit]
    except (ValueError, KeyError):
        raise ValueError(f"A rate looks like '30/min', got {rate!r}") from None
    return (count, seconds) if count > 0 else None


def client_ip(request: HttpRequest) -> str:
    """REMOTE_ADDR, or the first X-Forwarded-For hop behind TRUSTED_PROXY_COUNT proxies."""
    if int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0) > 0:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        first = forwarded.split(",")[0].strip()
        if first:
            return first[:64]
    return (request.META.get("REMOTE_ADDR") or "unknown")[:64]


def hit(scope: str, ident: str, rate: str | None) -> int | None:
    """Count one request of ``ident`` in ``scope``; seconds to wait if over the rate, else None.

    Fails open: a cache error is logged as a warning and the request is allowed.
    """
    parsed = parse_rate(rate)
    if parsed is None:
        return None
    limit, window = parsed
    now = time.time()
    slot = int(now // window)
    key = f"throttle:{scope}:{ident}:{slot}"
    try:
        cache.add(key, 0, timeout=window + 1)
        count = cache.incr(key)
    except ValueError:  # the key vanished between add and incr (evicted): count afresh
        try:
            cache.set(key, 1, timeout=window + 1)
            count = 1
        except Exception:
            logger.warning("throttle %s: cache unavailable, request allowed (fail open)", scope, exc_info=True)
            return None
    except Exception:  # any cache backend error (redis ConnectionError, OSError...)
        logger.warning("throttle %s: cache unavailable, request allowed (fail open)", scope, exc_info=True)
        return None
    if count > limit:
        return max(1, math.ceil((slot + 1) * window - now))
    return None


def throttled_response(request: HttpRequest, retry_after: int) -> HttpResponse:
    """429 with Retry-After: JSON for API clients, a short page for browsers."""
    message = f"Too many requests from your address. Try again in {retry_after} seconds."
    wants_json = request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")
    if wants_json:
        response: HttpResponse = JsonResponse({"detail": message, "retry_after": retry_after}, status=429)
    else:
        body = render_to_string("throttled.html", {"message": message, "retry_after": retry_after}, request=request)
        response = HttpResponse(body, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def limit(scope: str, rate_setting: str, *, methods: tuple[str, ...] | None = None) -> Callable:
    """Decorate a view: at most ``settings.<rate_setting>`` requests per client IP.

    ``methods`` limits the count to those methods (e.g. only POSTs of a login form).
    """

    def decorator(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if methods is None or request.method in methods:
                wait = hit(scope, client_ip(request), getattr(settings, rate_setting, None))
                if wait is not None:
                    logger.info("throttle %s: %s over %s", scope, client_ip(request), rate_setting)
                    return throttled_response(request, wait)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


class _HitThrottle(SimpleRateThrottle):
    """A DRF throttle counted by ``hit``, so it fails open (logged) like the page limits."""

    def identity(self, request) -> str:
        raise NotImplementedError

    def allow_request(self, request, view) -> bool:
        self._wait = hit(cast(str, self.scope), self.identity(request), self.rate)  # every subclass sets it
        return self._wait is None

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)


class FailOpenUserRateThrottle(_HitThrottle, UserRateThrottle):
    """REST_FRAMEWORK's default per-user throttle (rate "user"), counted by ``hit``: fails open."""

    def identity(self, request) -> str:
        user = getattr(request, "user", None)
        return f"user-{user.pk}" if user is not None and user.is_authenticated else f"ip-{client_ip(request)}"


class TokenRateThrottle(_HitThrottle):
    """Per-IP limit on /api/token/ (settings.THROTTLE_TOKEN), counted by the shared helper."""

    scope = "token"

    def get_rate(self) -> str | None:
        return getattr(settings, "THROTTLE_TOKEN", None)

    def identity(self, request) -> str:
        return client_ip(request)


# --- Per-account login failures -------------------------------------------------------------


def _account_key(username: str) -> str:
    """A keyed hash of the (case-folded) username: no username in cache keys or Redis dumps."""
    key = f"{settings.SECRET_KEY}:cobbler_site.foundation.throttle.account".encode()
    return hmac.new(key, username.strip().casefold().encode(), hashlib.sha256).hexdigest()[:32]


def account_locked(username: str) -> bool:
    """Whether this account refuses logins right now (too many recent failures). Fails open."""
    if not username:
        return False
    try:
        return bool(cache.get(f"login-lock:{_account_key(username)}"))
    except Exception:
        logger.warning("throttle login-account: cache unavailable, login allowed (fail open)", exc_info=True)
        return False


def count_login_failure(username: str) -> bool:
    """Count one failed login of ``username``; True when this failure locks the account."""
    limit_ = int(getattr(settings, "LOGIN_ACCOUNT_MAX_FAILURES", 10) or 0)
    if not username or limit_ <= 0:
        return False
    window = 60 * max(1, int(getattr(settings, "LOGIN_ACCOUNT_WINDOW_MINUTES", 15)))
    lockout = 60 * max(1, int(getattr(settings, "LOGIN_ACCOUNT_LOCKOUT_MINUTES", 15)))
    account = _account_key(username)
    try:
        cache.add(f"login-fail:{account}", 0, timeout=window)
        failures = cache.incr(f"login-fail:{account}")
        if failures < limit_:
            return False
        cache.set(f"login-lock:{account}", 1, timeout=lockout)
        cache.delete(f"login-fail:{account}")  # after the lockout, a fresh window
    except Exception:  # evicted between add and incr, or the cache is down: fail open
        logger.warning("throttle login-account: cache unavailable, failure not counted", exc_info=True)
        return False
    logger.warning("throttle login-account: account locked for %s s after %s failures", lockout, limit_)
    return True


class AccountLockoutBackend(ModelBackend):
    """Django's ModelBackend, except that a locked account authenticates with no password.

    First in AUTHENTICATION_BACKENDS (ModelBackend stays listed after it, so sessions made
    before keep working). Raising PermissionDenied stops Django's ``authenticate`` before any
    other backend (so the right password does not get in either) and counts as a failed
    login; a wrong password stops the same way, so it is hashed once, not once per backend.
    Every login path goes through ``authenticate``: the login page, the admin login and
    /api/token/. The form says only that the credentials are wrong, so a lockout does not
    reveal that an account exists.
    """

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        if username is None:
            return None  # not a username/password login
        if account_locked(username):
            raise PermissionDenied("account temporarily locked")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            raise PermissionDenied("wrong credentials")  # counted by user_login_failed, like any failure
        return user


@receiver(user_login_failed, dispatch_uid="cobbler_site.foundation.throttle.count_login_failure")
def _on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    username = credentials.get("username")
    if isinstance(username, str) and not account_locked(username):  # a locked try does not extend it
        count_login_failure(username)
