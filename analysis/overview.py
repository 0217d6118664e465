"""The studies overview: what a researcher sees of every study they manage, in one structure.

The one selector behind the overview page (``analysis:dashboard``). It lives in analysis, the
top-most app, because it reads all three: the crowd's submissions (annotations), the judge jobs
(judging) and the reports (analysis). A fixed number of queries whatever the number of studies;
the page only lays the result out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q

from analysis.models import ReportRun
from annotations.models import Assignment, Study, Submission
from judging.models import JudgeJob

JOBS_PER_STUDY = 5
# Judge jobs read for all studies together, newest first: a bound on one query, not per study.
JOBS_READ = 500


@dataclass(frozen=True)
class ConditionProgress:
    """The crowd's submissions in one condition, and how many of them a researcher approved."""

    condition: str
    submissions: int
    approved: int


@dataclass(frozen=True)
class JobLine:
    id: int
    judge: str
    conditions: list[str]
    status: str
    done: int
    total: int
    created_at: datetime


@dataclass(frozen=True)
class RunLine:
    profile: str
    status: str
    created_at: datetime


@dataclass(frozen=True)
class StudyOverview:
    study: Study
    progress: list[ConditionProgress] = field(default_factory=list)
    jobs: list[JobLine] = field(default_factory=list)  # the newest JOBS_PER_STUDY the user controls
    last_run: RunLine | None = None
    # The judge leaderboard of the latest finished report (its rows, as the report stores them).
    leaderboard: list[dict] = field(default_factory=list)


def studies_overview(*, user) -> list[StudyOverview]:  # a user or AnonymousUser
    """Every study ``user`` manages, newest first, with its crowd progress, judge jobs and reports."""
    studies = list(Study.objects.manageable_by(user).order_by("-created_at"))
    progress: dict[int, list[ConditionProgress]] = defaultdict(list)
    approved = Q(assignment__review=Assignment.Review.APPROVED)
    for row in (
        Submission.objects.filter(task__batch__study__in=studies)
        .values("task__batch__study_id", "task__condition")
        .annotate(total=Count("id"), approved=Count("id", filter=approved))
        .order_by("task__condition")
    ):
        progress[row["task__batch__study_id"]].append(
            ConditionProgress(condition=row["task__condition"], submissions=row["total"], approved=row["approved"])
        )
    jobs: dict[int, list[JobLine]] = defaultdict(list)
    for job in JudgeJob.objects.manageable_by(user).select_related("judge").order_by("-created_at")[:JOBS_READ]:
        if len(jobs[job.study_id]) < JOBS_PER_STUDY:
            jobs[job.study_id].append(
                JobLine(
                    id=job.pk,
                    judge=job.judge.name,
                    conditions=list(job.conditions),
                    status=job.status,
                    done=job.done,
                    total=job.total,
                    created_at=job.created_at,
                )
            )
    runs = ReportRun.objects.filter(study__in=studies).order_by("-created_at")
    last_run: dict[int, RunLine] = {}
    # .values() keeps the big result/figures JSON out of this query.
    for run in runs.values("study_id", "profile", "status", "created_at"):
        last_run.setdefault(
            run["study_id"], RunLine(profile=run["profile"], status=run["status"], created_at=run["created_at"])
        )
    boards: dict[int, list[dict]] = {}
    # Only the leaderboard key of each finished report's JSON is read.
    for study_id, board in runs.filter(status=ReportRun.Status.DONE).values_list("study_id", "result__leaderboard"):
        boards.setdefault(study_id, board if isinstance(board, list) else [])
    return [
        StudyOverview(
            study=study,
            progress=progress[study.pk],
            jobs=jobs[study.pk],
            last_run=last_run.get(study.pk),
            leaderboard=boards.get(study.pk) or [],
        )
        for study in studies
    ]
