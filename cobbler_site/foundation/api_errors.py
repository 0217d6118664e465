"""Errors under /api/ answer JSON in the schema's error shape (``{"detail": "..."}``), never a page.

DRF answers JSON for what its views raise; these handlers cover what happens before or
outside a DRF view: a path that matches no route (a malformed id or slug is no route, so a
404), a bad request (a disallowed host), a PermissionDenied and an unhandled exception. Every
other path keeps Django's HTML pages. Set as handler400/403/404/500 in cobbler_site.urls
(Django uses them whenever DEBUG is off).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _json(detail: str, status: int) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _json("Bad request.", 400) if is_api(request) else defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return _json("You do not have permission to perform this action.", 403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _json("Not found.", 404) if is_api(request) else defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    return _json("Server error.", 500) if is_api(request) else defaults.server_error(request)
