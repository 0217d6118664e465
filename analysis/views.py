from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotations.models import Study


@staff_member_required
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.order_by("-created_at")
    return render(request, "analysis/dashboard.html", {"studies": studies})
