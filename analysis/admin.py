from __future__ import annotations

from django.contrib import admin

from analysis.models import ReportRun


@admin.register(ReportRun)
class ReportRunAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "profile", "status", "progress", "created_at", "finished_at")
    list_filter = ("status", "profile")
    # The stored report JSON and figures are large; the report page shows them properly.
    exclude = ("result", "figures")
