from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from judging.models import (
    AggregateJudgment,
    BatchRun,
    CachedCompletion,
    Generation,
    GenerationJob,
    JudgeJob,
    Judgment,
    KeyGrant,
    PromptTemplate,
    RegisteredModel,
)


class SuperuserWrites:
    """Add, change and delete for superusers only, whatever the model permissions say."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)


# A model without an owner may use any server key (judging.models.grants): only a superuser
# writes registry rows here; researchers use the model pages, which own what they create.
@admin.register(RegisteredModel)
class JudgeAdmin(SuperuserWrites, admin.ModelAdmin):
    list_display = ("name", "kind", "baseline", "model", "base_url")
    # The encrypted key never appears in a page, not even the admin.
    exclude = ("api_key_encrypted",)
    formfield_overrides = {models.URLField: {"assume_scheme": "http"}}  # local endpoints are http


# Templates are read-only here like the registry: researchers save theirs from the model pages.
@admin.register(PromptTemplate)
class PromptTemplateAdmin(SuperuserWrites, admin.ModelAdmin):
    list_display = ("name", "verdict_format", "owner", "content_hash")
    readonly_fields = ("content_hash",)


@admin.register(KeyGrant)
class KeyGrantAdmin(SuperuserWrites, admin.ModelAdmin):
    """Which users and groups may use a server key variable (also: manage.py grant_key)."""

    list_display = ("variable", "note", "created_at")
    filter_horizontal = ("users", "groups")
    search_fields = ("variable", "users__username", "groups__name")

    # Granting a key is spending it: superusers only, whatever model permissions say.
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)


@admin.register(JudgeJob)
class JudgeJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "judge", "status", "done", "failed", "invalid", "cost_usd")
    list_filter = ("status", "judge")


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ("job", "pair", "condition", "presentation", "choice", "valid", "status")
    list_filter = ("condition", "valid", "status")
    raw_id_fields = ("job", "pair", "slot1_response", "chosen_response")


@admin.register(AggregateJudgment)
class AggregateJudgmentAdmin(admin.ModelAdmin):
    list_display = ("judge", "run", "collection", "instruction", "candidate", "wins")
    list_filter = ("run", "collection", "judge")
    raw_id_fields = ("instruction", "candidate")


@admin.register(CachedCompletion)
class CachedCompletionAdmin(admin.ModelAdmin):
    list_display = ("key", "tokens_in", "tokens_out", "created_at")


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "study", "generator", "candidate_key", "status", "done", "failed", "cost_usd")
    list_filter = ("status", "generator")
    raw_id_fields = ("candidate",)


@admin.register(Generation)
class GenerationAdmin(admin.ModelAdmin):
    list_display = ("job", "instruction", "status", "tokens_out")
    list_filter = ("status",)
    raw_id_fields = ("job", "instruction", "response", "batch")


@admin.register(BatchRun)
class BatchRunAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "judge_job",
        "generation_job",
        "state",
        "provider_status",
        "request_count",
        "completed_count",
        "failed_count",
    )
    list_filter = ("state",)
    raw_id_fields = ("judge_job", "generation_job")
