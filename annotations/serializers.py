from __future__ import annotations

from rest_framework import serializers

from annotations.forms import GENERATABLE
from annotations.models import Assignment, RejectReason, ReviewDecision, Study
from annotations.models.review import CHANGE_REASON_MAX
from cobbler_site.foundation.api_input import ClosedInput


class StudySerializer(serializers.ModelSerializer):
    class Meta:
        model = Study
        fields = (
            "slug",
            "name",
            "description",
            "source",
            "overlap",
            "bandwagon_percent",
            "lease_minutes",
            "qualification_attempts_allowed",
            "code_completed",
            "code_failed_qualification",
            "code_timed_out",
            "prolific_redirect",
            "created_at",
        )
        read_only_fields = fields


class StudyCreateInput(ClosedInput):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    from_study = serializers.SlugField(required=False, allow_blank=True)
    overlap = serializers.IntegerField(min_value=1, max_value=50, default=3)
    bandwagon_percent = serializers.IntegerField(min_value=0, max_value=100, default=85)
    lease_minutes = serializers.IntegerField(min_value=1, max_value=24 * 60, default=90)
    consent_text = serializers.CharField(required=False, allow_blank=True, default="")
    instructions_text = serializers.CharField(required=False, allow_blank=True, default="")


class GenerateInput(ClosedInput):
    condition = serializers.ChoiceField(choices=GENERATABLE)
    seed = serializers.IntegerField(min_value=0, required=False)
    pairs_per_batch = serializers.IntegerField(min_value=1, max_value=500, default=15)
    cobbler_design_dir = serializers.CharField(required=False, allow_blank=True, default="")
    new_round = serializers.BooleanField(
        default=False,
        help_text="Add the design beside one the condition already has, as a new round (to add places); "
        "imported batches never need it.",
    )
    # What validate() below asks, in the schema: a seed, or a design directory that is not empty.
    schema_extra = {
        "anyOf": [
            {"required": ["seed"]},
            {"required": ["cobbler_design_dir"], "properties": {"cobbler_design_dir": {"minLength": 1}}},
        ]
    }

    def validate(self, data: dict) -> dict:
        if data.get("seed") is None and not data.get("cobbler_design_dir"):
            raise serializers.ValidationError("Give a seed, or cobbler_design_dir for the original design.")
        return data


class GenerateOutput(serializers.Serializer):
    condition = serializers.CharField()
    batches = serializers.IntegerField(help_text="How many batches were made.")
    tasks = serializers.IntegerField(help_text="How many tasks they hold in all.")
    round = serializers.IntegerField(help_text="The round these batches are (1: the condition's first design).")
    message = serializers.CharField(help_text="What was created, in one sentence (as the hub says it).")


class BatchProgressSerializer(serializers.Serializer):
    batch = serializers.IntegerField(source="batch.pk")
    condition = serializers.CharField(source="batch.condition")
    index = serializers.IntegerField(source="batch.index")
    # A field named "label" shadows Field.label in the stubs only; DRF keeps declared fields apart.
    label = serializers.CharField(source="batch.label")  # type: ignore[assignment]
    tasks = serializers.IntegerField()
    target = serializers.IntegerField()
    active = serializers.IntegerField()
    submitted = serializers.IntegerField()
    rejected = serializers.IntegerField()
    answers = serializers.IntegerField()
    mean_task_seconds = serializers.FloatField(allow_null=True)
    complete = serializers.BooleanField()


class StudyProgressOutput(serializers.Serializer):
    batches = BatchProgressSerializer(many=True)


class SubmissionRowSerializer(serializers.Serializer):
    """One answered task of the export (annotations.services.submission_rows); ids are pseudonymous."""

    submission_id = serializers.IntegerField()
    study = serializers.CharField()
    condition = serializers.CharField()
    batch = serializers.IntegerField(help_text="The batch's index within its condition.")
    participant = serializers.CharField()
    platform = serializers.CharField()
    assignment = serializers.IntegerField()
    assignment_status = serializers.CharField()
    review = serializers.CharField()
    task_position = serializers.IntegerField()
    task_kind = serializers.CharField()
    instruction_index = serializers.IntegerField()
    pair_id = serializers.IntegerField(allow_null=True)
    pair_index = serializers.IntegerField(allow_null=True)
    presentation = serializers.CharField(help_text="ab: response_a in slot A; ba: response_b (the task's arrangement).")
    cue = serializers.JSONField()
    slot_a_response = serializers.IntegerField(allow_null=True)
    slot_b_response = serializers.IntegerField(allow_null=True)
    choice = serializers.CharField(help_text="A, B, T (a tie), or empty for a ranking task.")
    chosen_response = serializers.IntegerField(allow_null=True)
    ranking = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    bar_position = serializers.IntegerField(allow_null=True)
    display_order = serializers.ListField(child=serializers.IntegerField())
    time_on_task_ms = serializers.IntegerField(allow_null=True)
    server_time_ms = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    review_reason = serializers.CharField(
        help_text="Why the work was rejected (annotations.models.RejectReason), or empty."
    )
    review_note = serializers.CharField()
    reviewed_at = serializers.DateTimeField(allow_null=True)
    flags = serializers.JSONField(
        help_text='Quality flags computed on submit: [{"code", "label", "value", "threshold"}].'
    )
    rationale = serializers.CharField(help_text="The worker's free-text reason, where the study asks for one.")
    untouched = serializers.BooleanField(help_text="A ranking submitted exactly as first shown.")
    survey = serializers.JSONField(help_text='The worker\'s survey answers: {"pre": {...}, "post": {...}}.')
    task_role = serializers.CharField(help_text="item, instructed, catch or gold (checks are never analysed as data).")


class ReviewInput(ClosedInput):
    decision = serializers.ChoiceField(choices=[Assignment.Review.APPROVED, Assignment.Review.REJECTED])
    note = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    # Required for a rejection (annotations.services.review_assignment answers 422 without one).
    reason = serializers.ChoiceField(choices=RejectReason.choices, required=False, allow_blank=True, default="")
    change_reason = serializers.CharField(
        max_length=CHANGE_REASON_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why an already decided submission changes (required then: 409 without it); kept in its history.",
    )


class ReviewDecisionSerializer(serializers.ModelSerializer):
    """One decision of the review history (annotations.models.ReviewDecision), oldest first."""

    assignment = serializers.IntegerField(source="assignment_id")
    participant = serializers.CharField(source="assignment.participant.label")
    reviewer = serializers.CharField(source="reviewer_name", help_text="Empty when no person decided.")

    class Meta:
        model = ReviewDecision
        fields = (
            "assignment",
            "participant",
            "sequence",
            "decided_at",
            "reviewer",
            "from_review",
            "to_review",
            "reject_reason",
            "note",
            "change_reason",
        )
        read_only_fields = fields


class AssignmentSerializer(serializers.ModelSerializer):
    participant = serializers.CharField(source="participant.label")
    batch = serializers.IntegerField(source="batch_id")
    review_reason = serializers.CharField(
        read_only=True, help_text="Why the work was rejected (RejectReason), or empty."
    )

    class Meta:
        model = Assignment
        fields = (
            "id",
            "batch",
            "participant",
            "status",
            "review",
            "review_note",
            "started_at",
            "submitted_at",
            "work_seconds",
            "review_reason",
            "reviewed_at",
            "flags",
        )
        read_only_fields = fields
