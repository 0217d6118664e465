from __future__ import annotations

from django.db import models
from django.db.models import Q


class BatchRun(models.Model):
    """One OpenAI Batch API batch carrying some of a job's pending rows.

    Everything needed to resume after a worker restart is here: the provider's ids and
    the rows it carries (``WorkRow.batch`` points back). Exactly one of the two job
    references is set.
    """

    class State(models.TextChoices):
        # Ours: uploading the input file / creating the batch.
        PREPARING = "preparing"
        # The provider's (validating, in_progress, finalizing, cancelling) while it works.
        SUBMITTED = "submitted"
        # The provider finished (completed, expired, cancelled, failed) and the output and
        # error files were read into the rows; failures went back to synchronous calls.
        COLLECTED = "collected"
        FAILED = "failed"

    judge_job = models.ForeignKey("judging.JudgeJob", models.CASCADE, null=True, blank=True, related_name="batches")
    generation_job = models.ForeignKey(
        "judging.GenerationJob", models.CASCADE, null=True, blank=True, related_name="batches"
    )
    state = models.CharField(max_length=12, choices=State, default=State.PREPARING)
    provider_status = models.CharField(max_length=32, blank=True)  # validating, in_progress...
    provider_batch_id = models.CharField(max_length=200, blank=True)
    input_file_id = models.CharField(max_length=200, blank=True)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    request_count = models.PositiveIntegerField(default=0)
    completed_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    collected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(judge_job__isnull=False, generation_job__isnull=True)
                    | Q(judge_job__isnull=True, generation_job__isnull=False)
                ),
                name="batch_belongs_to_one_job",
            ),
        ]

    def __str__(self) -> str:
        return f"batch {self.pk} ({self.state})"

    @property
    def job(self):  # a JudgeJob or a GenerationJob
        return self.judge_job or self.generation_job
