from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotations.vocabulary import RewriteKind
from cobbler_site.foundation.api_input import BudgetField, ClosedInput
from judging import conditions, parsers, prompts
from judging.models import Generation, GenerationJob, JudgeJob, Judgment, PromptTemplate, RegisteredModel
from judging.prompts import templates
from judging.vocabulary import Parser, VerdictFormat


class JudgeSerializer(serializers.ModelSerializer):
    # A researcher's template by its version ("<name>@<hash12>"); null for none.
    own_template: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="version", read_only=True, allow_null=True
    )
    # Whether a key is configured; the key itself is write-only everywhere.
    has_api_key = serializers.BooleanField(read_only=True)
    # Who may use it: no owner = public; else private to the owner unless shared.
    owner: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = RegisteredModel
        fields = (
            "id",
            "name",
            "kind",
            "baseline",
            "base_url",
            "model",
            "api_key_env",
            "has_api_key",
            "generation",
            "max_concurrency",
            "requests_per_minute",
            "price_in_per_1k",
            "price_out_per_1k",
            "self_candidate_key",
            "request_timeout",
            "transport",
            "owner",
            "is_shared",
            "prompt_template",
            "own_template",
            "verdict_format",
            "verdict_spec",
            "created_at",
        )


@extend_schema_field({"type": "array", "items": {"type": "object"}})
class BatchesField(serializers.ReadOnlyField):
    """A batch-mode job's Batch API batches (state, provider status, counts, times); [] in sync mode."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", **kwargs)

    def to_representation(self, job: object) -> list[dict]:
        from judging.batch.driver import summary

        return summary(job) if getattr(job, "mode", "sync") == "batch" else []


class JudgeJobSerializer(serializers.ModelSerializer):
    study: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    judge: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    progress = serializers.SerializerMethodField()
    batches = BatchesField()

    class Meta:
        model = JudgeJob
        fields = (
            "id",
            "study",
            "judge",
            "conditions",
            "pair_set",
            "prompt_version",
            "template_hash",
            "verdict_format",
            "verdict_spec",
            "parser",
            "bandwagon_percent",
            "seed",
            "status",
            "budget_usd",
            "total",
            "done",
            "failed",
            "invalid",
            "ties",
            "cached",
            "calls",
            "tokens_in",
            "tokens_out",
            "cost_usd",
            "error",
            "progress",
            "mode",
            "batches",
            "created_at",
            "started_at",
            "finished_at",
        )

    def get_progress(self, job: JudgeJob) -> dict:
        return job.progress()


class JudgmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Judgment
        fields = (
            "id",
            "pair",
            "condition",
            "presentation",
            "slot1_response",
            "cue",
            "prompt_hash",
            "template_version",
            "template_hash",
            "raw_text",
            "choice",
            "chosen_response",
            "valid",
            "verdict",
            "strength",
            "status",
            "cached",
            "tokens_in",
            "tokens_out",
            "latency_ms",
            "cost_usd",
            "attempts",
            "error",
            "completed_at",
        )


class JobStartInputSerializer(ClosedInput):
    study = serializers.SlugField()
    judge = serializers.SlugField()
    # The names conditions.normalise takes (a derived bias names the run it comes from).
    conditions = serializers.ListField(
        child=serializers.ChoiceField(choices=[*conditions.SUPPORTED, *conditions.DERIVED]), min_length=1
    )
    pair_set = serializers.ChoiceField(choices=JudgeJob.PairSet.values, default="all")
    budget_usd = BudgetField(required=False, allow_null=True)
    bandwagon_percent = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=100)
    parser = serializers.ChoiceField(choices=parsers.PARSERS, default=Parser.ROBUST)
    # Absent: the judge's prompt template if it has one, else the default CoBBLEr prompt version.
    prompt_version = serializers.ChoiceField(
        choices=prompts.available_versions(),
        required=False,
        help_text=f"A CoBBLEr prompt version (default {prompts.DEFAULT_VERSION}); leave it out for a judge "
        "with a prompt template, which is asked with its template.",
    )
    seed = serializers.IntegerField(default=0)
    mode = serializers.ChoiceField(choices=JudgeJob.Mode.choices, default="sync")

    def validate_conditions(self, value: list[str]) -> list[str]:
        try:
            return conditions.normalise(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class JobResumeInputSerializer(ClosedInput):
    budget_usd = BudgetField(required=False, allow_null=True)


# --- generation jobs ----------------------------------------------------------------------


class GenerationJobSerializer(serializers.ModelSerializer):
    study: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    model: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        source="generator", slug_field="name", read_only=True
    )
    candidate: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="key", read_only=True, allow_null=True
    )
    # Blank for a generation job (an enum without "" would call that answer invalid).
    rewrite_kind = serializers.ChoiceField(
        choices=RewriteKind.choices,
        allow_blank=True,
        read_only=True,
        help_text="A rewrite job's kind (sentiment); blank for a generation job.",
    )
    progress = serializers.SerializerMethodField()
    batches = BatchesField()

    class Meta:
        model = GenerationJob
        fields = (
            "id",
            "study",
            "model",
            "candidate_key",
            "candidate",
            "params",
            "prompt_version",
            "pair_policy",
            "pair_sample_size",
            "seed",
            "mode",
            "status",
            "budget_usd",
            "total",
            "done",
            "failed",
            "cached",
            "calls",
            "tokens_in",
            "tokens_out",
            "cost_usd",
            "error",
            "last_error",
            "responses_created",
            "pairs_created",
            "rewrite_kind",
            "rewrites_created",
            "rewrites_rejected",
            "progress",
            "batches",
            "created_at",
            "started_at",
            "finished_at",
        )
        # A rewrite job (sentiment) is started from the rewrites page or run_rewrites, never here.
        read_only_fields = ("rewrites_created", "rewrites_rejected")

    def get_progress(self, job: GenerationJob) -> dict:
        return job.progress()


class GenerationSerializer(serializers.ModelSerializer):
    instruction = serializers.IntegerField(source="instruction.index", read_only=True)

    class Meta:
        model = Generation
        fields = (
            "id",
            "instruction",
            "status",
            "messages",
            "params",
            "prompt_hash",
            "raw_text",
            "response",
            "source",
            "rewrite",
            "cached",
            "tokens_in",
            "tokens_out",
            "latency_ms",
            "cost_usd",
            "attempts",
            "error",
            "completed_at",
        )


class GenerationStartInputSerializer(ClosedInput):
    study = serializers.SlugField()
    model = serializers.SlugField(help_text="A registered model you may use (its name).")
    # The rule judging.generate.services checks (its _KEY), or blank for the model's name.
    candidate_key = serializers.RegexField(
        r"^[A-Za-z0-9_.:-]{0,64}$", required=False, allow_blank=True, default="", help_text="Default: the model's name."
    )
    # The range judging.generation_params allows.
    max_tokens = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=1_000_000)
    budget_usd = BudgetField(required=False, allow_null=True)
    pair_policy = serializers.ChoiceField(choices=GenerationJob.PairPolicy.values, default="all")
    pair_sample_size = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**31 - 1)
    seed = serializers.IntegerField(default=0)
    mode = serializers.ChoiceField(choices=GenerationJob.Mode.choices, default="sync")


# --- prompt templates ---------------------------------------------------------------------


class PromptTemplateSerializer(serializers.ModelSerializer):
    owner: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    labels = serializers.SerializerMethodField()

    class Meta:
        model = PromptTemplate
        fields = (
            "id",
            "name",
            "version",
            "content_hash",
            "owner",
            "system",
            "user",
            "reference_block",
            "labels",
            "verdict_format",
            "verdict_spec",
            "created_at",
        )

    def get_labels(self, template: PromptTemplate) -> list[str]:
        return [template.label_a, template.label_b]


class PromptTemplateInputSerializer(ClosedInput):
    """A researcher's own prompt template (judging.prompts.templates has the placeholders and
    insertion points); saving the same content again returns the version already saved."""

    name = serializers.SlugField(max_length=64)
    system = serializers.CharField(required=False, allow_blank=True, default="", max_length=templates.MAX_SYSTEM)
    user = serializers.CharField(
        max_length=templates.MAX_USER,
        help_text="Must hold {instruction}, {answer_a} and {answer_b} once each; optional {reference}, "
        "{cue} (bandwagon cue, distractor sentence) and {names} (named-model variant).",
    )
    reference_block = serializers.CharField(
        required=False, allow_blank=True, default="{reference}", max_length=templates.MAX_REFERENCE_BLOCK
    )
    labels = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=templates.MAX_LABEL),
        min_length=2,
        max_length=2,
        required=False,
        help_text="The two answer labels the cue sentences name; default Assistant A, Assistant B.",
    )
    verdict_format = serializers.ChoiceField(choices=VerdictFormat.choices)
    verdict_spec = serializers.DictField(
        required=False, help_text="Only for the regex format: a pattern with one group and a label map."
    )
