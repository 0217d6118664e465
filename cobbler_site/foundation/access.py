"""Who may use what: the one access rule behind every route, API view, form and task entry.

Every view declares its audience with ``@allow(Audience...)`` (function views) or a
permission class from here (DRF views); ``tests/foundation/test_authorization_matrix.py``
walks the URLconf and fails for a route that declares none. Objects are then scoped by
the ``manageable_by(user)`` / ``usable_by(user)`` querysets of the models, all built on
``owned_by`` below, so "whose is this" is answered in one place:

- a researcher (active staff) manages what they created and what nobody owns (studies
  and jobs imported or seeded from the command line are shared by everyone on the server);
- a superuser manages everything;
- anyone else manages nothing (another researcher's private object is a 404, never a 403,
  so its existence is not revealed).
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from enum import StrEnum
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from rest_framework.permissions import BasePermission


class Audience(StrEnum):
    PUBLIC = "public"  # anyone: home, health check, login, token, the public demo pages
    WORKER = "worker"  # crowd workers: no account, the signed per-study cookie says who they are
    RESEARCHER = "researcher"  # logged-in active staff; objects scoped by manageable_by(user)
    SUPERUSER = "superuser"  # the site's administrators (Django admin)
    # Machine clients of the built-in simulator: anyone while DEBUG is on; otherwise a staff
    # session, a staff user's API token, or ``Bearer $SIMULATOR_TOKEN`` (README.md, "Point it
    # at a real LLM endpoint").
    SIMULATOR = "simulator"


def is_researcher(user) -> bool:  # a user or AnonymousUser
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)


def owned_by(user, field: str = "created_by") -> Q:
    """The Q of the objects ``user`` manages, for a model whose owner is ``field``."""
    if not is_researcher(user):
        return Q(pk__in=[])
    if user.is_superuser:
        return Q()
    return Q(**{field: user}) | Q(**{f"{field}__isnull": True})


def _bearer(request: HttpRequest) -> str:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() in ("bearer", "token") else ""


def simulator_caller_allowed(request: HttpRequest) -> bool:
    if settings.DEBUG or is_researcher(getattr(request, "user", None)):
        return True
    credential = _bearer(request)
    if not credential:
        return False
    token = settings.SIMULATOR_TOKEN
    if token and hmac.compare_digest(credential.encode(), token.encode()):
        return True
    from rest_framework.authtoken.models import Token  # needs the app registry: imported late

    found = Token.objects.select_related("user").filter(key=credential).first()
    return bool(found and is_researcher(found.user))


def allow(audience: Audience) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """Declare (and enforce) who may call a function view.

    RESEARCHER pages send anonymous visitors to the login page and answer 403 to a
    logged-in non-staff user; SIMULATOR answers 401 (JSON, as an OpenAI client expects) to
    a caller ``simulator_caller_allowed`` refuses; PUBLIC and WORKER views check nothing
    here (worker views identify the worker from the signed cookie themselves).
    """

    def decorate(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if audience == Audience.SIMULATOR and not simulator_caller_allowed(request):
                response = JsonResponse(
                    {"error": {"message": "the simulator needs a staff login or a token when DEBUG is off"}},
                    status=401,
                )
                response["WWW-Authenticate"] = 'Bearer realm="simulator"'
                return response
            if audience in (Audience.RESEARCHER, Audience.SUPERUSER):
                user = request.user
                if not user.is_authenticated:
                    return redirect_to_login(request.get_full_path())
                if not is_researcher(user) or (audience == Audience.SUPERUSER and not user.is_superuser):
                    raise PermissionDenied("researchers only")
            return view(request, *args, **kwargs)

        wrapper.audience = audience  # type: ignore[attr-defined]
        return wrapper

    return decorate


class ResearcherOnly(BasePermission):
    """DRF: active staff, by session or token (the API's default)."""

    audience = Audience.RESEARCHER

    def has_permission(self, request, view) -> bool:
        return is_researcher(request.user)


class Anyone(BasePermission):
    """DRF: no account needed (the token endpoint)."""

    audience = Audience.PUBLIC

    def has_permission(self, request, view) -> bool:
        return True


def audience_of(callback: Callable[..., object]) -> Audience | None:
    """The audience a resolved URL callback declares (function view or DRF view), else None."""
    declared = getattr(callback, "audience", None)
    if declared is not None:
        return Audience(declared)
    view_class = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view_class is None:
        return None
    classes = getattr(view_class, "permission_classes", ())
    audiences = {getattr(c, "audience", None) for c in classes}
    if len(audiences) != 1 or None in audiences:
        return None
    return Audience(cast(str, audiences.pop()))  # one audience, and not None (checked above)
