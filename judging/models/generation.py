from __future__ import annotations

from django.db import models

from annotations.models import Candidate, Instruction, Response, ResponseRewrite, Study
from annotations.vocabulary import RewriteKind
from cobbler_site.foundation.access import owned_by
from judging.models.judges import RegisteredModel
from judging.models.work import LLMJob, WorkRow


class GenerationJobQuerySet(models.QuerySet):
    def manageable_by(self, user) -> GenerationJobQuerySet:  # a user or AnonymousUser
        """The same rule as judge jobs: own (or unowned) jobs on a study ``user`` manages."""
        return self.filter(owned_by(user), study__in=Study.objects.manageable_by(user))


class GenerationJob(LLMJob):
    """A registered model answers a study's instructions; its answers become a new candidate.

    When the job completes, every stored answer becomes a ``Response`` of ``candidate``
    (key ``candidate_key``) and the study's pairs are extended with it: against every
    existing candidate (``pair_policy`` all) or a seeded sample of ``pair_sample_size``.

    A *rewrite job* (``rewrite_kind`` set, e.g. sentiment) runs the same way on the same runner,
    but each row asks the model to rewrite one existing response (``Generation.source``); when it
    completes, every usable rewrite becomes a ``ResponseRewrite`` (judging.generate.rewrites) and
    no candidate or pair is made.
    """

    class PairPolicy(models.TextChoices):
        ALL = "all", "Pair with every existing candidate"
        SAMPLE = "sample", "A seeded sample of pairs"
        NONE = "none", "Do not add pairs"

    study = models.ForeignKey(Study, models.CASCADE, related_name="generation_jobs")
    generator = models.ForeignKey(
        RegisteredModel,
        models.PROTECT,
        related_name="generation_jobs",
        help_text="The registered model that writes the answers.",
    )
    candidate_key = models.CharField(max_length=64, blank=True)  # blank for a rewrite job
    rewrite_kind = models.CharField(max_length=16, choices=RewriteKind, blank=True)
    # Settings sent with every request (max_tokens, temperature...) and the prompt version
    # that turns an instruction into messages; both are also copied onto every Generation.
    params = models.JSONField(default=dict, blank=True)
    prompt_version = models.CharField(max_length=32, default="answer-v1")
    pair_policy = models.CharField(max_length=8, choices=PairPolicy, default=PairPolicy.ALL)
    pair_sample_size = models.PositiveIntegerField(null=True, blank=True)
    # Filled when the job completes.
    candidate = models.ForeignKey(Candidate, models.SET_NULL, null=True, blank=True, related_name="+")
    responses_created = models.PositiveIntegerField(default=0)
    pairs_created = models.PositiveIntegerField(default=0)
    rewrites_created = models.PositiveIntegerField(default=0)
    # Answers that were no usable rewrite (empty, a refusal, the original unchanged): no rewrite made.
    rewrites_rejected = models.PositiveIntegerField(default=0)

    objects = GenerationJobQuerySet.as_manager()

    def __str__(self) -> str:
        return f"generation job {self.pk}: {self.generator} on {self.study}"

    @property
    def called_model(self) -> RegisteredModel:
        return self.generator

    @property
    def is_rewrite(self) -> bool:
        return bool(self.rewrite_kind)


class Generation(WorkRow):
    """One answer of a model to one instruction, or (a rewrite job) its rewrite of one response
    (``source``), with exactly what was sent to get it."""

    job = models.ForeignKey(GenerationJob, models.CASCADE, related_name="generations")
    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="+")
    messages = models.JSONField(default=list)
    params = models.JSONField(default=dict, blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    # The Response this answer became (set when the job completes).
    response = models.ForeignKey(Response, models.SET_NULL, null=True, blank=True, related_name="+")
    # A rewrite job's row: the response it rewrites, and the rewrite it became (set when the job completes).
    source = models.ForeignKey(Response, models.CASCADE, null=True, blank=True, related_name="+")
    rewrite = models.ForeignKey(ResponseRewrite, models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "instruction"],
                condition=models.Q(source__isnull=True),
                name="one_generation_per_instruction",
            ),
            models.UniqueConstraint(
                fields=["job", "source"], condition=models.Q(source__isnull=False), name="one_rewrite_row_per_response"
            ),
        ]
        indexes = [models.Index(fields=["job", "status"])]

    def __str__(self) -> str:
        return f"{self.job_id}/{self.instruction_id}"
