"""The one place that turns database rows into DataFrames (``.values()`` queries only).

Everything in ``analysis.metrics`` is pure and takes these frames; nothing else in the
analysis app touches the ORM for numbers. Each loader documents its columns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from django.db.models import F
from django.db.models.functions import Length

from annotations.models import Assignment, Candidate, Instruction, Response, Study, Submission
from judging.models import AggregateJudgment, Judge, Judgment


def candidate_order(study: Study) -> list[str]:
    """Candidate keys in the study's canonical order (CoBBLEr's response-file key order)."""
    return list(Candidate.objects.filter(study=study).order_by("position", "key").values_list("key", flat=True))


def responses_frame(study: Study) -> pd.DataFrame:
    """``response, candidate, instruction, text``: every response of the study."""
    rows = Response.objects.filter(instruction__study=study).values_list(
        "id", "candidate__key", "instruction__index", "text"
    )
    return pd.DataFrame.from_records(list(rows), columns=["response", "candidate", "instruction", "text"])


def judgments_frame(study: Study) -> pd.DataFrame:
    """One row per finished judge call.

    Columns: ``judge, self_key, job, instruction, pair, cand_a, cand_b, len_a, len_b
    (characters), condition, presentation, slot1_is_a, choice, chosen_is_a, valid,
    cue_slot``. When a judge ran the same call in several jobs, the latest job wins,
    so a re-run replaces rather than double-counts.
    """
    qs = Judgment.objects.filter(job__study=study, status=Judgment.Status.DONE).values(
        "condition", "presentation", "choice", "valid", "cue",
        judge=F("job__judge__name"), self_key=F("job__judge__self_candidate_key"), job_id_=F("job_id"),
        instruction=F("pair__instruction__index"), pair_id_=F("pair_id"),
        resp_a=F("pair__response_a_id"), slot1=F("slot1_response_id"), chosen=F("chosen_response_id"),
        cand_a=F("pair__response_a__candidate__key"), cand_b=F("pair__response_b__candidate__key"),
        len_a=Length("pair__response_a__text"), len_b=Length("pair__response_b__text"),
    )
    cols = ["judge", "self_key", "job", "instruction", "pair", "cand_a", "cand_b", "len_a", "len_b",
            "condition", "presentation", "slot1_is_a", "choice", "chosen_is_a", "valid", "cue_slot"]
    frame = pd.DataFrame.from_records(qs)
    if frame.empty:
        return pd.DataFrame(columns=cols)
    frame = frame.rename(columns={"job_id_": "job", "pair_id_": "pair"})
    frame["slot1_is_a"] = frame["slot1"] == frame["resp_a"]
    frame["chosen_is_a"] = (frame["chosen"] == frame["resp_a"]) & frame["valid"]
    frame["cue_slot"] = [c.get("cue_slot") if isinstance(c, dict) else None for c in frame["cue"]]
    frame = frame.sort_values("job").drop_duplicates(["judge", "condition", "pair", "presentation"], keep="last")
    return frame[cols].reset_index(drop=True)


def human_pairwise_frame(study: Study) -> pd.DataFrame:
    """Approved answers to pairwise tasks, one row each.

    Columns: ``rater, batch, instruction, condition, pair_index, position, pair, resp_a,
    resp_b, presentation ("ab"|"ba"), cue_slot ("A"|"B"|None), choice ("A"|"B"|"T")``.
    Only approved work counts (CoBBLEr's validity rule: every task answered).
    """
    fields = {
        "choice": "choice",
        "rater": "assignment__participant_id", "rater_label": "assignment__participant__label",
        "batch": "task__batch_id", "instruction": "task__instruction__index",
        "condition": "task__condition", "pair_index": "task__pair_index", "position": "task__position",
        "pair": "task__pair_id", "resp_a": "task__pair__response_a_id", "resp_b": "task__pair__response_b_id",
        "presentation": "task__presentation", "cue": "task__cue",
    }
    # Tuples, not one dict per row (values()): the same rows, a third of the time.
    qs = Submission.objects.filter(
        assignment__batch__study=study,
        task__kind="pairwise",
        assignment__review=Assignment.Review.APPROVED,
    ).values_list(*fields.values())
    cols = ["rater", "rater_label", "batch", "instruction", "condition", "pair_index", "position", "pair",
            "resp_a", "resp_b", "presentation", "cue_slot", "choice"]
    frame = pd.DataFrame.from_records(list(qs), columns=list(fields))
    if frame.empty:
        return pd.DataFrame(columns=cols)
    frame["cue_slot"] = [c.get("cue_slot") if isinstance(c, dict) else None for c in frame["cue"]]
    # Twins without a source pair index are matched by the pair itself.
    frame["pair_index"] = frame["pair_index"].fillna(-frame["pair"]).astype(np.int64)
    return frame[cols]


def assignment_reviews(study: Study) -> pd.DataFrame:
    """``condition, review``: one row per submitted assignment (for human valid rates)."""
    qs = Assignment.objects.filter(batch__study=study, status=Assignment.Status.SUBMITTED).values(
        "review", condition=F("batch__condition")
    )
    return pd.DataFrame.from_records(qs, columns=["condition", "review"])


def human_rankings_frame(study: Study) -> pd.DataFrame:
    """Approved rankings: ``rater (participant label), instruction, ranking`` (candidate keys, best first)."""
    qs = Submission.objects.filter(
        assignment__batch__study=study, task__kind="ranking", assignment__review=Assignment.Review.APPROVED
    ).values("ranking", rater=F("assignment__participant__label"), rater_id=F("assignment__participant_id"),
             instruction=F("task__instruction__index"))
    frame = pd.DataFrame.from_records(qs, columns=["ranking", "rater", "rater_id", "instruction"])
    if frame.empty:
        return pd.DataFrame(columns=["rater", "instruction", "ranking"])
    key_of = dict(Response.objects.filter(instruction__study=study).values_list("id", "candidate__key"))
    frame["rater"] = frame["rater"].where(frame["rater"] != "", "participant-" + frame["rater_id"].astype(str))
    frame["ranking"] = [[key_of[int(r)] for r in ranking] for ranking in frame["ranking"]]
    return frame[["rater", "instruction", "ranking"]].sort_values(["rater", "instruction"]).reset_index(drop=True)


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
    rows = list(qs.order_by("pk").values_list("judge_id", "collection", "run", "instruction_id", "candidate_id", "wins"))
    if not rows:
        return pd.DataFrame(columns=cols)
    frame = pd.DataFrame.from_records(rows, columns=cols)
    judges = dict(Judge.objects.filter(pk__in=frame["judge"].unique().tolist()).values_list("pk", "name"))
    instructions = dict(Instruction.objects.filter(study=study).values_list("pk", "index"))
    candidates = dict(Candidate.objects.filter(study=study).values_list("pk", "key"))
    frame["judge"] = frame["judge"].map(judges)
    frame["instruction"] = frame["instruction"].map(instructions)
    frame["candidate"] = frame["candidate"].map(candidates)
    return frame
