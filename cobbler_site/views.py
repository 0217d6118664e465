from __future__ import annotations

from csp.decorators import csp_update
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_GET
from drf_spectacular.utils import extend_schema, inline_serializer
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Study
from cobbler_site.foundation.access import Audience, ResearcherOnly, allow


@allow(Audience.PUBLIC)
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated and request.user.is_staff:
        return redirect("analysis:dashboard")
    studies = Study.objects.filter(is_public_demo=True).order_by("name")
    return render(request, "home.html", {"studies": studies})


@allow(Audience.PUBLIC)
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    # Used by docker-compose healthchecks: proves the database answers.
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


class SchemaApi(SpectacularAPIView):
    """The OpenAPI schema, for researchers' API clients (it maps every endpoint)."""

    permission_classes = (ResearcherOnly,)


class SwaggerDocs(SpectacularSwaggerSplitView):
    """/api/docs/: Swagger UI over the schema, for researchers. The split view serves its init
    script as a separate same-origin file (?script), so the CSP needs no inline script."""

    permission_classes = (ResearcherOnly,)
    url_name = "api-schema"
    template_name = "api_docs/swagger_ui.html"


# Redoc's bundle styles itself with injected <style> elements and builds its search worker
# from a blob: URL; these staff-only pages relax the CSP for exactly that (scripts stay 'self').
@method_decorator(csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["'self'", "blob:"]}), name="dispatch")
class RedocDocs(SpectacularRedocView):
    """/api/redoc/: Redoc over the schema, for researchers."""

    permission_classes = (ResearcherOnly,)
    url_name = "api-schema"
    template_name = "api_docs/redoc.html"


class WhoAmIApi(APIView):
    """Lets an API client check its token before it starts real work."""

    @extend_schema(
        responses=inline_serializer(
            "WhoAmI", {"username": serializers.CharField(), "is_staff": serializers.BooleanField()}
        )
    )
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username(), "is_staff": request.user.is_staff})
