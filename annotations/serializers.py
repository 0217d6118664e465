from __future__ import annotations

from rest_framework import serializers

from annotations.forms import GENERATABLE
from annotations.models import Assignment, Study


class StudySerializer(serializers.ModelSerializer):
    class Meta:
        model = Study
        fields = (
            "slug", "name", "description", "source", "overlap", "bandwagon_percent", "lease_minutes",
            "qualification_attempts_allowed", "code_completed", "code_failed_qualification",
            "code_timed_out", "prolific_redirect", "created_at",
        )
        read_only_fields = fields


class StudyCreateInput(serializers.Serializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    from_study = serializers.SlugField(required=False, allow_blank=True)
    overlap = serializers.IntegerField(min_value=1, max_value=50, default=3)
    bandwagon_percent = serializers.IntegerField(min_value=0, max_value=100, default=85)
    lease_minutes = serializers.IntegerField(min_value=1, max_value=24 * 60, default=90)
    consent_text = serializers.CharField(required=False, allow_blank=True, default="")
    instructions_text = serializers.CharField(required=False, allow_blank=True, default="")


class GenerateInput(serializers.Serializer):
    condition = serializers.ChoiceField(choices=GENERATABLE)
    seed = serializers.IntegerField(min_value=0, required=False)
    pairs_per_batch = serializers.IntegerField(min_value=1, max_value=500, default=15)
    cobbler_design_dir = serializers.CharField(required=False, allow_blank=True, default="")

    def validate(self, data: dict) -> dict:
        if data.get("seed") is None and not data.get("cobbler_design_dir"):
            raise serializers.ValidationError("Give a seed, or cobbler_design_dir for the original design.")
        return data


class BatchProgressSerializer(serializers.Serializer):
    batch = serializers.IntegerField(source="batch.pk")
    condition = serializers.CharField(source="batch.condition")
    index = serializers.IntegerField(source="batch.index")
    label = serializers.CharField(source="batch.label")
    tasks = serializers.IntegerField()
    target = serializers.IntegerField()
    active = serializers.IntegerField()
    submitted = serializers.IntegerField()
    rejected = serializers.IntegerField()
    answers = serializers.IntegerField()
    mean_task_seconds = serializers.FloatField(allow_null=True)
    complete = serializers.BooleanField()


class ReviewInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=[Assignment.Review.APPROVED, Assignment.Review.REJECTED])
    note = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class AssignmentSerializer(serializers.ModelSerializer):
    participant = serializers.CharField(source="participant.label")
    batch = serializers.IntegerField(source="batch_id")

    class Meta:
        model = Assignment
        fields = ("id", "batch", "participant", "status", "review", "review_note", "started_at", "submitted_at", "work_seconds")
        read_only_fields = fields
