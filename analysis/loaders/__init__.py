"""The one place that turns database rows into DataFrames (``.values()`` queries only).

Everything in ``analysis.metrics`` is pure and takes these frames; nothing else in the
analysis app touches the ORM for numbers. Each loader documents its columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd
from django.db.models import Count, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, Length, NullIf

from analysis.loaders.report_cache import shared_within_report
from analysis.profiles import DEFAULT, Profile
from annotations.models import Assignment, Candidate, Instruction, Pair, Response, Study, Submission, Task
from judging.models import AggregateJudgment, JudgeJob, Judgment, RegisteredModel

# Jobs a report names explicitly (``report --jobs``); None = the re-run rule decides.
_NAMED_JOBS: ContextVar[tuple[int, ...] | None] = ContextVar("analysis_named_jobs", default=None)


@shared_within_report()
def candidate_order(study: Study) -> list[str]:
    """Candidate keys in the study's canonical order (CoBBLEr's response-file key order)."""
    return list(Candidate.objects.filter(study=study).order_by("position", "key").values_list("key", flat=True))


@shared_within_report()
def responses_frame(study: Study) -> pd.DataFrame:
    """``response, candidate, instruction, text``: every response of the study."""
    rows = Response.objects.filter(instruction__study=study).values_list(
        "id", "candidate__key", "instruction__index", "text"
    )
    return pd.DataFrame.from_records(list(rows), columns=["response", "candidate", "instruction", "text"])


@shared_within_report()
def gold_pairs_frame(study: Study) -> pd.DataFrame:
    """``pair, instruction, gold_is_a, category``: every pair with a gold answer (``Pair.gold_response``).

    ``category`` is the instruction's ``kind`` (study-format ``category``; "" when it has none).
    """
    rows = Pair.objects.filter(instruction__study=study, gold_response__isnull=False).values_list(
        "id", "instruction__index", "response_a_id", "gold_response_id", "instruction__kind"
    )
    frame = pd.DataFrame.from_records(list(rows), columns=["pair", "instruction", "resp_a", "gold", "category"])
    frame["gold_is_a"] = frame["gold"] == frame["resp_a"]
    return frame[["pair", "instruction", "gold_is_a", "category"]].sort_values("pair").reset_index(drop=True)


@contextmanager
def named_jobs(jobs: Iterable[int] | None) -> Iterator[None]:
    """Within the block every judgments loader counts exactly ``jobs`` (None: the re-run rule)."""
    token = _NAMED_JOBS.set(None if jobs is None else tuple(int(j) for j in jobs))
    try:
        yield
    finally:
        _NAMED_JOBS.reset(token)


def counted_jobs(study: Study, jobs: Iterable[int] | None = None) -> list[dict]:
    """Which job's calls count for each (judge, condition): docs/methods.md "Re-runs".

    Without named jobs (``jobs`` None and none set by ``named_jobs``): the latest
    (highest id) COMPLETED job of that judge that has calls of that condition; queued,
    running, paused, cancelled, budget-stopped and failed jobs never count. With named
    jobs: exactly those, whatever their status, and nothing else; a named id that is not
    a judge job of the study, or two named jobs of one judge sharing a condition, is a
    ValueError. Returns ``[{judge, condition, job, status, named}]`` sorted by judge,
    condition.
    """
    named = _NAMED_JOBS.get() if jobs is None else tuple(int(j) for j in jobs)
    job_rows = {
        pk: (judge, name, status)
        for pk, judge, name, status in JudgeJob.objects.filter(study=study).values_list(
            "pk", "judge_id", "judge__name", "status"
        )
    }
    if named is not None:
        unknown = sorted(set(named) - set(job_rows))
        if unknown:
            raise ValueError(f"job {unknown[0]} is not a judge job of study {study.slug!r}")
    chosen: dict[tuple[int, str], int] = {}
    if named is None:
        chosen = JudgeJob.objects.latest_completed(study)
    else:
        combos = sorted(
            set(Judgment.objects.filter(job__study=study, job__in=named).values_list("job_id", "condition"))
        )
        for job, condition in combos:
            judge, name, _status = job_rows[job]
            key = (judge, condition)
            if key in chosen:
                raise ValueError(
                    f"jobs {chosen[key]} and {job} both hold {condition!r} calls of judge {name!r}; name one of them"
                )
            chosen[key] = job
    rows = [
        {
            "judge": job_rows[job][1],
            "condition": condition,
            "job": job,
            "status": job_rows[job][2],
            "named": named is not None,
        }
        for (_judge, condition), job in chosen.items()
    ]
    return sorted(rows, key=lambda r: (r["judge"], r["condition"], r["job"]))


def counted_judgments(study: Study, jobs: Iterable[int] | None = None) -> QuerySet[Judgment]:
    """The finished calls that count under the re-run rule (``counted_jobs``)."""
    by_job: dict[int, list[str]] = {}
    for row in counted_jobs(study, jobs):
        by_job.setdefault(row["job"], []).append(row["condition"])
    if not by_job:
        return Judgment.objects.none()
    which = Q()
    for job, names in by_job.items():
        which |= Q(job_id=job, condition__in=names)
    return Judgment.objects.filter(job__study=study, status=Judgment.Status.DONE).filter(which)


@shared_within_report(context=lambda: _NAMED_JOBS.get())  # counted jobs depend on it
def judgments_frame(study: Study, jobs: Iterable[int] | None = None) -> pd.DataFrame:
    """One row per finished judge call that counts.

    Columns: ``judge, self_key, job, instruction, pair, cand_a, cand_b, len_a, len_b
    (characters), condition, presentation, slot1_is_a, choice, chosen_is_a, valid, verdict,
    cue_slot``. ``verdict`` is "first" / "second" / "tie" / "" (none); a tie has ``valid``
    False and no ``choice`` (it chose no slot; judging.models.Judgment). Re-runs
    (docs/methods.md "Re-runs"): each (judge, condition) comes from one job only, the latest
    completed one unless jobs are named (``jobs``, or ``named_jobs``), so calls of different
    jobs are never mixed or double-counted.
    """
    qs = counted_judgments(study, jobs).values(
        "condition",
        "presentation",
        "choice",
        "valid",
        "verdict",
        "cue",
        judge=F("job__judge__name"),
        job_id_=F("job_id"),
        # The job's own key (resolved at start, e.g. from a generation job); older jobs: the judge's.
        self_key=Coalesce(NullIf(F("job__self_candidate_key"), Value("")), F("job__judge__self_candidate_key")),
        instruction=F("pair__instruction__index"),
        pair_id_=F("pair_id"),
        resp_a=F("pair__response_a_id"),
        slot1=F("slot1_response_id"),
        chosen=F("chosen_response_id"),
        cand_a=F("pair__response_a__candidate__key"),
        cand_b=F("pair__response_b__candidate__key"),
        len_a=Length("pair__response_a__text"),
        len_b=Length("pair__response_b__text"),
    )
    cols = [
        "judge",
        "self_key",
        "job",
        "instruction",
        "pair",
        "cand_a",
        "cand_b",
        "len_a",
        "len_b",
        "condition",
        "presentation",
        "slot1_is_a",
        "choice",
        "chosen_is_a",
        "valid",
        "verdict",
        "cue_slot",
    ]
    frame = pd.DataFrame.from_records(qs)
    if frame.empty:
        return pd.DataFrame(columns=cols)
    frame = frame.rename(columns={"job_id_": "job", "pair_id_": "pair"})
    frame["slot1_is_a"] = frame["slot1"] == frame["resp_a"]
    frame["chosen_is_a"] = (frame["chosen"] == frame["resp_a"]) & frame["valid"]
    frame["cue_slot"] = [c.get("cue_slot") if isinstance(c, dict) else None for c in frame["cue"]]
    frame = frame.sort_values(["judge", "condition", "pair", "presentation"], kind="stable")
    return frame[cols].reset_index(drop=True)


HUMAN_WORK = {
    "approved": (Assignment.Review.APPROVED,),
    "approved+pending": (Assignment.Review.APPROVED, Assignment.Review.PENDING),
}
FLAGGED_WORK = ("keep", "exclude")
# Only study items are data; attention checks and gold items (Task.role) never are.
ITEM_TASKS = Q(task__role=Task.Role.ITEM)


def counted_work(profile: Profile | None = None, *, prefix: str = "assignment__") -> Q:
    """The one rule for which human work counts, used by every loader of human answers.

    Work counts when its assignment was submitted (every task answered) and its review is
    in the profile's ``human_work`` set: ``approved`` (the default) or ``approved+pending``
    (also submitted work nobody has reviewed yet). Rejected work never counts; open,
    expired and returned leases (partial work) never count either. With the profile's
    ``flagged_work`` "exclude", work with any quality flag (``Assignment.flags``) does not
    count either. ``prefix`` is the lookup path from the queried model to the Assignment
    ("" for Assignment itself).
    """
    chosen = profile or DEFAULT
    rule = chosen.human_work
    try:
        reviews = HUMAN_WORK[rule]
    except KeyError:
        raise ValueError(f"unknown human_work {rule!r}; choose one of {', '.join(HUMAN_WORK)}") from None
    if chosen.flagged_work not in FLAGGED_WORK:
        raise ValueError(f"unknown flagged_work {chosen.flagged_work!r}; choose one of {', '.join(FLAGGED_WORK)}")
    counted = Q(**{f"{prefix}status": Assignment.Status.SUBMITTED, f"{prefix}review__in": reviews})
    if chosen.flagged_work == "exclude":
        counted &= Q(**{f"{prefix}flags": []})
    return counted


@shared_within_report()
def human_pairwise_frame(study: Study, *, profile: Profile | None = None) -> pd.DataFrame:
    """Answers to pairwise study items that count (``counted_work``: approved by default), one row each.

    Columns: ``rater, batch, instruction, condition, pair_index, position, pair, resp_a,
    resp_b, arrangement ("ab"|"ba"), cue_slot ("A"|"B"|None), choice ("A"|"B"|"T")``.
    By default only approved work counts (CoBBLEr's validity rule: every task answered).
    """
    fields = {
        "choice": "choice",
        "rater": "assignment__participant_id",
        "rater_label": "assignment__participant__label",
        "batch": "task__batch_id",
        "instruction": "task__instruction__index",
        "condition": "task__condition",
        "pair_index": "task__pair_index",
        "position": "task__position",
        "pair": "task__pair_id",
        "resp_a": "task__pair__response_a_id",
        "resp_b": "task__pair__response_b_id",
        "arrangement": "task__arrangement",
        "cue": "task__cue",
    }
    # Tuples, not one dict per row (values()): the same rows, a third of the time.
    qs = Submission.objects.filter(
        counted_work(profile), ITEM_TASKS, assignment__batch__study=study, task__kind="pairwise"
    ).values_list(*fields.values())
    cols = [
        "rater",
        "rater_label",
        "batch",
        "instruction",
        "condition",
        "pair_index",
        "position",
        "pair",
        "resp_a",
        "resp_b",
        "arrangement",
        "cue_slot",
        "choice",
    ]
    frame = pd.DataFrame.from_records(list(qs), columns=list(fields))
    if frame.empty:
        return pd.DataFrame(columns=cols)
    frame["cue_slot"] = [c.get("cue_slot") if isinstance(c, dict) else None for c in frame["cue"]]
    # Twins without a source pair index are matched by the pair itself.
    frame["pair_index"] = frame["pair_index"].fillna(-frame["pair"]).astype(np.int64)
    return frame[cols]


def assignment_reviews(study: Study, *, profile: Profile | None = None) -> pd.DataFrame:
    """``condition, review, counts``: one row per submitted assignment (for human valid rates).

    ``counts`` is ``counted_work``'s verdict on the assignment, so a valid rate is the share
    of submitted work that the analysis uses.
    """
    base = Assignment.objects.filter(batch__study=study, status=Assignment.Status.SUBMITTED)
    counted = set(base.filter(counted_work(profile, prefix="")).values_list("pk", flat=True))
    rows = [
        (condition, review, pk in counted)
        for pk, condition, review in base.values_list("pk", "batch__condition", "review")
    ]
    return pd.DataFrame.from_records(rows, columns=["condition", "review", "counts"])


def human_rankings_frame(study: Study, *, profile: Profile | None = None) -> pd.DataFrame:
    """Rankings of study items that count (``counted_work``): ``rater (participant label), instruction, ranking``
    (candidate keys, best first)."""
    qs = Submission.objects.filter(
        counted_work(profile), ITEM_TASKS, assignment__batch__study=study, task__kind="ranking"
    ).values(
        "ranking",
        rater=F("assignment__participant__label"),
        rater_id=F("assignment__participant_id"),
        instruction=F("task__instruction__index"),
    )
    frame = pd.DataFrame.from_records(qs, columns=["ranking", "rater", "rater_id", "instruction"])
    if frame.empty:
        return pd.DataFrame(columns=["rater", "instruction", "ranking"])
    key_of = dict(Response.objects.filter(instruction__study=study).values_list("id", "candidate__key"))
    frame["rater"] = frame["rater"].where(frame["rater"] != "", "participant-" + frame["rater_id"].astype(str))
    frame["ranking"] = [[key_of[int(r)] for r in ranking] for ranking in frame["ranking"]]
    return frame[["rater", "instruction", "ranking"]].sort_values(["rater", "instruction"]).reset_index(drop=True)


def _judge_names(ids: pd.Series) -> pd.Series:
    """Model ids mapped to their names, in one query for the distinct ids."""
    names = dict(RegisteredModel.objects.filter(pk__in=ids.unique().tolist()).values_list("pk", "name"))
    return ids.map(names)


@shared_within_report()
def aggregate_totals_frame(study: Study, *, collection: str) -> pd.DataFrame:
    """Imported wins summed in the database per ``run, judge, instruction`` of one collection,
    with ``k``, the candidates listed there: Table 2's valid rates need no more than these
    (the bias runs hold ~53,000 of the CoBBLEr import's ~78,000 rows). ``instruction`` is the id."""
    cols = ["run", "judge", "instruction", "wins", "k"]
    rows = list(
        AggregateJudgment.objects.filter(study=study, collection=collection)
        .values("run", "judge_id", "instruction_id")
        .annotate(total=Sum("wins"), k=Count("pk"))
        .order_by()
        .values_list("run", "judge_id", "instruction_id", "total", "k")
    )
    if not rows:
        return pd.DataFrame(columns=cols)
    frame = pd.DataFrame.from_records(rows, columns=cols)
    frame["judge"] = _judge_names(frame["judge"])
    return frame


@shared_within_report()
def aggregates_frame(study: Study, *, collection: str | None = None, run: str | None = None) -> pd.DataFrame:
    """Imported win counts: ``judge, collection, run, instruction, candidate, wins``.

    ``collection`` / ``run`` keep only those rows. Foreign keys are read as ids and mapped
    to names here: the CoBBLEr import holds ~78,000 rows, and the three-way join plus one
    dict per row took most of the report's loading time.
    """
    qs = AggregateJudgment.objects.filter(study=study)
    if collection is not None:
        qs = qs.filter(collection=collection)
    if run is not None:
        qs = qs.filter(run=run)
    cols = ["judge", "collection", "run", "instruction", "candidate", "wins"]
    rows = list(
        qs.order_by("pk").values_list("judge_id", "collection", "run", "instruction_id", "candidate_id", "wins")
    )
    if not rows:
        return pd.DataFrame(columns=cols)
    frame = pd.DataFrame.from_records(rows, columns=cols)
    instructions = dict(Instruction.objects.filter(study=study).values_list("pk", "index"))
    candidates = dict(Candidate.objects.filter(study=study).values_list("pk", "key"))
    frame["judge"] = _judge_names(frame["judge"])
    frame["instruction"] = frame["instruction"].map(instructions)
    frame["candidate"] = frame["candidate"].map(candidates)
    return frame
