"""A report computation, run by the worker; the page polls its progress."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotations.models import Study

# A run still "running" after this long lost its worker (killed, redeployed):
# the redelivered message may take it over. Far above the task's time limit.
STALE_AFTER = timedelta(minutes=15)


class ReportRunQuerySet(models.QuerySet):
    def active(self) -> ReportRunQuerySet:
        return self.filter(status__in=(ReportRun.Status.QUEUED, ReportRun.Status.RUNNING))

    def manageable_by(self, user) -> ReportRunQuerySet:  # a user or AnonymousUser
        """Runs of the studies ``user`` manages: a report is as private as its study."""
        return self.filter(study__in=Study.objects.manageable_by(user))

    def latest_done(self, *, study: Study, profile: str) -> ReportRun | None:
        done = self.filter(study=study, profile=profile, status=ReportRun.Status.DONE)
        return done.order_by("-finished_at", "-pk").first()


class ReportRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    study = models.ForeignKey(Study, models.CASCADE, related_name="report_runs")
    profile = models.CharField(max_length=32)
    status = models.CharField(max_length=8, choices=Status, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    stage = models.CharField(max_length=64, blank=True)
    # The cobbler-report/1 JSON, and the rendered figures (data: URIs) the page and
    # the HTML export share, so downloads never recompute anything in a request.
    result = models.JSONField(null=True, blank=True)
    figures = models.JSONField(default=list, blank=True)
    # analysis.data_version.data_version(study) when the run started: the page warns when
    # the study's data has changed since (new answers, reviews or judgments).
    data_version = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ReportRunQuerySet.as_manager()

    class Meta:
        constraints = [
            # At most one queued-or-running run per study and profile: a double click
            # or a second tab joins the run already under way.
            models.UniqueConstraint(
                fields=["study", "profile"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_active_report_run",
            ),
        ]
        indexes = [models.Index(fields=["study", "profile", "status"])]

    def __str__(self) -> str:
        return f"report {self.pk}: {self.study} / {self.profile} ({self.status})"

    def claim(self) -> bool:
        """Move QUEUED (or a stale RUNNING) to RUNNING; False if another worker has it.

        A conditional UPDATE, so a redelivered message and the original never both run.
        """
        now = timezone.now()
        fresh = models.Q(status=self.Status.QUEUED)
        stale = models.Q(status=self.Status.RUNNING, started_at__lt=now - STALE_AFTER)
        claimed = ReportRun.objects.filter(fresh | stale, pk=self.pk).update(
            status=self.Status.RUNNING, started_at=now, progress=0.0, stage="starting"
        )
        if claimed:
            self.refresh_from_db(fields=["status", "started_at", "progress", "stage"])
        return bool(claimed)

    def report_progress(self, stage: str, fraction: float) -> None:
        ReportRun.objects.filter(pk=self.pk, status=self.Status.RUNNING).update(
            stage=stage[:64], progress=max(0.0, min(1.0, fraction))
        )

    def finish(self, *, result: dict, figures: list[dict]) -> None:
        self.status, self.result, self.figures = self.Status.DONE, result, figures
        self.progress, self.stage, self.finished_at = 1.0, "done", timezone.now()
        self.save(update_fields=["status", "result", "figures", "progress", "stage", "finished_at"])

    def mark_failed(self, error: str) -> None:
        ReportRun.objects.filter(pk=self.pk).update(
            status=self.Status.FAILED, error=error[:2000], finished_at=timezone.now()
        )
