"""What a study is made of: instructions, candidate systems, their responses and the pairs."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from annotations.vocabulary import RewriteKind
from cobbler_site.foundation.access import owned_by


class RationaleMode(models.TextChoices):
    """Whether a worker writes why, per task (Potato's free-text box)."""

    OFF = "off", "No rationale"
    OPTIONAL = "optional", "Optional rationale"
    REQUIRED = "required", "Required rationale"


def _completion_code() -> str:
    return secrets.token_hex(4).upper()


class StudyQuerySet(models.QuerySet):
    def manageable_by(self, user) -> StudyQuerySet:  # a user or AnonymousUser
        """The studies ``user`` may read, change, judge and report on (cobbler_site.foundation.access)."""
        return self.filter(owned_by(user))


class Study(models.Model):
    class Source(models.TextChoices):
        MANUAL = "manual"
        DEMO = "demo"
        COBBLER = "cobbler"
        MTBENCH = "mtbench"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=Source, default=Source.MANUAL)
    # Crowd design: how many distinct workers answer each batch (3 in CoBBLEr).
    overlap = models.PositiveSmallIntegerField(default=3)
    bandwagon_percent = models.PositiveSmallIntegerField(default=85)
    lease_minutes = models.PositiveIntegerField(default=90)
    consent_text = models.TextField(blank=True)
    instructions_text = models.TextField(blank=True)
    # Outcome-specific completion codes, as Prolific expects.
    code_completed = models.CharField(max_length=32, default=_completion_code)
    code_failed_qualification = models.CharField(max_length=32, default=_completion_code)
    code_timed_out = models.CharField(max_length=32, default=_completion_code)
    prolific_redirect = models.BooleanField(default=True)
    # Prolific allows two attempts at a comprehension check; the original study allowed retries.
    qualification_attempts_allowed = models.PositiveSmallIntegerField(default=2)
    # After a failed attempt, mark the wrong items and show their explanations. Off by
    # default: feedback tells a bot the gold answers for its next attempt.
    qualification_reveal_answers = models.BooleanField(default=False)
    # ``?code=`` entry: empty list and unsigned = any well-formed code creates a participant.
    # Otherwise only listed codes, or (entry_codes_signed) codes made by
    # annotations.services.sign_entry_code (an HMAC with this study's key), are let in.
    entry_codes = models.JSONField(default=list, blank=True)
    entry_codes_signed = models.BooleanField(default=False)
    is_public_demo = models.BooleanField(default=False)
    # Task types and quality control (annotations.quality, docs/methods.md "Crowd quality").
    # A tie ("no preference", key 0) on pairwise tasks; CoBBLEr forced a choice.
    allow_ties = models.BooleanField(default=False)
    rationale = models.CharField(max_length=8, choices=RationaleMode, default=RationaleMode.OFF)
    # Share of each generated batch's tasks that are attention checks (instructed-response
    # items and catch pairs) and gold items, injected at seeded positions; 0 adds none.
    attention_check_rate = models.FloatField(default=0.0)
    gold_rate = models.FloatField(default=0.0)
    # {"pre": [question, ...], "post": [...]}; a question is {"id", "text", "kind":
    # "text"|"choice"|"scale", "choices": [...], "required": bool} (annotations.surveys).
    surveys = models.JSONField(default=dict, blank=True)
    # Overrides of annotations.quality.DEFAULT_RULES (thresholds of the submission flags).
    quality_rules = models.JSONField(default=dict, blank=True)
    # {path relative to the imported directory: sha256} of the files an importer read,
    # so every report's reproducibility manifest can name the exact data version.
    source_files = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="studies"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StudyQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.slug


class Instruction(models.Model):
    study = models.ForeignKey(Study, models.CASCADE, related_name="instructions")
    # Position in the study's source (the CoBBLEr eval-set index 0-49).
    index = models.PositiveIntegerField()
    # Id in the source dataset (MT-Bench question_id), if it has one.
    external_id = models.CharField(max_length=64, blank=True)
    turn = models.PositiveSmallIntegerField(default=1)
    kind = models.CharField(max_length=32, blank=True)  # strategyqa, eli5, mtbench, demo...
    text = models.TextField()
    reference = models.TextField(blank=True)

    class Meta:
        ordering = ("study", "index")
        constraints = [
            models.UniqueConstraint(fields=["study", "index"], name="one_instruction_per_index"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}#{self.index}"


class Candidate(models.Model):
    """A system (model) whose answers are judged; also what an evaluator may be 'self' to."""

    study = models.ForeignKey(Study, models.CASCADE, related_name="candidates")
    key = models.CharField(max_length=64)
    name = models.CharField(max_length=200, blank=True)
    # Canonical order (CoBBLEr's response-file key order); the first slot of a pair follows it.
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ("study", "position", "key")
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="one_candidate_per_key"),
        ]

    def __str__(self) -> str:
        return self.key


class Response(models.Model):
    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="responses")
    candidate = models.ForeignKey(Candidate, models.CASCADE, related_name="responses")
    # The judged answer (for multi-turn data: the answer of the judged turn).
    text = models.TextField(blank=True)
    # The whole conversation, for length scope "conversation" (MT-Bench); null otherwise.
    conversation = models.JSONField(null=True, blank=True)
    # Where the text came from when a platform job generated it: model, endpoint, settings,
    # prompt version and the messages sent (judging.GenerationJob); empty for imported text.
    provenance = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["instruction", "candidate"], name="one_response_per_candidate"),
        ]

    def __str__(self) -> str:
        return f"{self.candidate.key} on {self.instruction}"


class ResponseRewrite(models.Model):
    """A registered model's rewrite of one response, for a bias whose perturbation a model makes
    (``sentiment``: the same answer in a more confident, cheerful tone).

    Written by a rewrite job (``judging.GenerationJob`` with a ``rewrite_kind``), one per response
    and kind: the text as the model wrote it (its wrapper removed), and how it was made
    (``provenance``: model, endpoint, prompt version and hash, the messages sent, the job). A judge
    job or a crowd design copies the text into each showing's stored cue, so a showing stays
    reproducible whatever later happens to the rewrite.
    """

    response = models.ForeignKey(Response, models.CASCADE, related_name="rewrites")
    kind = models.CharField(max_length=16, choices=RewriteKind)
    text = models.TextField()
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response", "kind"], name="one_rewrite_per_response_and_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} rewrite of response {self.response_id}"


class Pair(models.Model):
    """An unordered pair of responses to one instruction.

    Stored canonically: ``response_a`` belongs to the candidate earlier in the
    study's candidate order. Which one is *shown* first is a property of a task
    or judgment, never of the pair.
    """

    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="pairs")
    response_a = models.ForeignKey(Response, models.CASCADE, related_name="+")
    response_b = models.ForeignKey(Response, models.CASCADE, related_name="+")
    # A gold item: the answer a careful worker must prefer (one of the pair's two); null if none.
    gold_response = models.ForeignKey(Response, models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["instruction", "response_a", "response_b"], name="one_pair_per_responses"),
            models.CheckConstraint(condition=~models.Q(response_a=models.F("response_b")), name="pair_of_two"),
        ]

    def __str__(self) -> str:
        return f"pair {self.response_a_id}/{self.response_b_id}"
