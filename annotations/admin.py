from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from annotations.models import (
    Assignment,
    Batch,
    Candidate,
    Instruction,
    Pair,
    Participant,
    QualificationItem,
    Response,
    ResponseRewrite,
    ReviewDecision,
    Study,
    Submission,
    Task,
)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "source", "overlap", "created_at")
    search_fields = ("slug", "name")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Instruction)
class InstructionAdmin(admin.ModelAdmin):
    list_display = ("study", "index", "kind", "text")
    list_filter = ("study", "kind")
    search_fields = ("text",)


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ("study", "key", "name", "position")
    list_filter = ("study",)


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ("instruction", "candidate")
    list_filter = ("candidate__study",)
    list_select_related = ("instruction__study", "candidate")
    raw_id_fields = ("instruction", "candidate")


@admin.register(ResponseRewrite)
class ResponseRewriteAdmin(admin.ModelAdmin):
    list_display = ("response", "kind", "created_at")
    list_filter = ("kind", "response__candidate__study")
    list_select_related = ("response__instruction__study", "response__candidate")
    raw_id_fields = ("response",)


@admin.register(Pair)
class PairAdmin(admin.ModelAdmin):
    list_display = ("instruction", "response_a", "response_b")
    raw_id_fields = ("instruction", "response_a", "response_b")


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("study", "condition", "index", "label", "seed")
    list_filter = ("study", "condition")


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("batch", "position", "kind", "condition", "arrangement")
    list_filter = ("condition", "kind")
    raw_id_fields = ("batch", "instruction", "pair")


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    # The hash is shown, never a platform id: we do not store one.
    list_display = ("label", "study", "platform", "qualified", "created_at")
    list_filter = ("study", "platform")


class ReviewDecisionInline(admin.TabularInline):
    """The review history, read only: decisions are records (annotations.models.review)."""

    model = ReviewDecision
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "sequence",
        "decided_at",
        "reviewer_name",
        "from_review",
        "to_review",
        "reject_reason",
        "note",
        "change_reason",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(admin.ModelAdmin):
    """The study-wide review history, to search and read; rows are records, never edited here."""

    list_display = ("assignment", "sequence", "decided_at", "reviewer_name", "from_review", "to_review")
    list_filter = ("to_review", "assignment__batch__study")
    search_fields = ("reviewer_name", "change_reason", "note")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("batch", "participant", "status", "review", "started_at", "submitted_at")
    list_filter = ("status", "review", "batch__study")
    raw_id_fields = ("batch", "participant")
    # Decisions are made on the review page, which keeps the history; here they are only shown.
    readonly_fields = ("review", "review_note", "review_reason", "reviewed_at", "review_version")
    inlines = (ReviewDecisionInline,)


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("assignment", "task", "choice", "source", "created_at")
    list_filter = ("source",)
    raw_id_fields = ("assignment", "task", "chosen_response")


@admin.register(QualificationItem)
class QualificationItemAdmin(admin.ModelAdmin):
    list_display = ("study", "position", "instruction", "gold")
    list_filter = ("study",)
