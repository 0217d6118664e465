from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Study


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated and request.user.is_staff:
        return redirect("analysis:dashboard")
    studies = Study.objects.filter(is_public_demo=True).order_by("name")
    return render(request, "home.html", {"studies": studies})


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    # Used by docker-compose healthchecks: proves the database answers.
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


class WhoAmIApi(APIView):
    """Lets an API client check its token before it starts real work."""

    @extend_schema(
        responses=inline_serializer(
            "WhoAmI", {"username": serializers.CharField(), "is_staff": serializers.BooleanField()}
        )
    )
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username(), "is_staff": request.user.is_staff})
