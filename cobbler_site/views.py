from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

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
