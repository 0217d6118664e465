"""Frames for length control, loaded with ``.values()`` (no model instances, no N+1).

Humans: the pairwise Submissions to study items (never attention checks or gold items)
that count under the profile's ``human_work`` rule
(``analysis.loaders.counted_work``, the rule every section uses: approved work by
default; rejected work never). A tie vote ("T") stays a tie, never a slot.
Judges: every finished Judgment of the study's judge jobs. Both are written in the
orientation the rater saw (slot 1 first), so the pure functions can apply the
profile's join; lengths follow the profile's unit and scope.
"""

from __future__ import annotations

import re

import pandas as pd
from django.db.models import BooleanField, Case, Value, When

from analysis.length import VERDICT_COLUMNS, VOTE_COLUMNS
from analysis.loaders import ITEM_TASKS, counted_judgments, counted_work
from analysis.loaders.report_cache import shared_within_report
from analysis.profiles import Profile
from annotations.models import Response, Study, Submission, Task
from annotations.vocabulary import AS_JUDGE_SLOT, JUDGE_SLOT_OF, CrowdChoice, JudgeSlot

_TOKEN = re.compile(r"\w+|[^\w\s]")
# How an imported pairwise verdict records a tie (MT-Bench gpt4_pair). Anything
# else that failed to parse is not a verdict and is left out.
TIE_TEXTS = ("tie", "tie (inconsistent)")
TIE = "tie"  # the winner column's third value, beside the judge slots
_HUMAN_CHOICE: dict[str, str] = {**JUDGE_SLOT_OF, CrowdChoice.TIE: TIE}


def measure(text: str, unit: str) -> int:
    if unit == "chars":
        return len(text)
    if unit == "words":
        return len(text.split())
    if unit == "tokens":
        return len(_TOKEN.findall(text))
    raise ValueError(f"unknown length unit {unit!r}")


@shared_within_report()
def response_lengths(*, study: Study, profile: Profile) -> dict[int, tuple[str, int]]:
    """Response id -> (candidate key, length) under the profile's unit and scope."""
    fields = ["id", "candidate__key", "text"]
    if profile.length_scope == "conversation":
        fields.append("conversation")
    out = {}
    for row in Response.objects.filter(instruction__study=study).values(*fields):
        conversation = row.get("conversation")
        if profile.length_scope == "conversation" and conversation:
            # The published analysis summed every assistant message, even on turn-1 votes.
            size = sum(
                measure(str(m.get("content") or ""), profile.length_unit)
                for m in conversation
                if isinstance(m, dict) and m.get("role") == "assistant"
            )
        else:
            size = measure(row["text"], profile.length_unit)
        out[row["id"]] = (row["candidate__key"], size)
    return out


def _unit(external_id: str, instruction_id: int) -> str:
    return external_id or f"instruction-{instruction_id}"


@shared_within_report()
def load_votes(*, study: Study, responses: dict[int, tuple[str, int]], profile: Profile | None = None) -> pd.DataFrame:
    rows = Submission.objects.filter(
        counted_work(profile),
        ITEM_TASKS,
        task__batch__study=study,
        task__kind=Task.Kind.PAIRWISE,
        task__pair__isnull=False,
        choice__in=list(_HUMAN_CHOICE),
    ).values_list(
        "task__instruction_id",
        "task__instruction__external_id",
        "task__condition",
        "task__arrangement",
        "task__cue",
        "task__pair__response_a_id",
        "task__pair__response_b_id",
        "choice",
    )
    records = []
    for item, external, condition, arrangement, cue, ra, rb, choice in rows.iterator(chunk_size=5000):
        first, second = (ra, rb) if arrangement != Task.Arrangement.BA else (rb, ra)
        (key1, len1), (key2, len2) = responses[first], responses[second]
        cue_slot = AS_JUDGE_SLOT.get((cue or {}).get("cue_slot", ""), "")
        records.append(
            (_unit(external, item), str(item), condition, key1, key2, cue_slot, _HUMAN_CHOICE[choice], len1, len2)
        )
    return pd.DataFrame.from_records(records, columns=VOTE_COLUMNS)


def load_verdicts(*, study: Study, responses: dict[int, tuple[str, int]]) -> pd.DataFrame:
    is_tie = Case(
        When(verdict=TIE, then=Value(True)),
        # Verdicts imported before judgments kept one (MT-Bench's gpt-4 rows) say it in the text.
        When(valid=False, verdict="", raw_text__in=TIE_TEXTS, then=Value(True)),
        default=Value(False),
        output_field=BooleanField(),
    )
    rows = (
        counted_judgments(study)  # the re-run rule (docs/methods.md "Re-runs"); finished calls only
        .annotate(is_tie=is_tie)
        .values_list(
            "job__judge__name",
            "pair__instruction_id",
            "pair__instruction__external_id",
            "condition",
            "cue",
            "slot1_response_id",
            "pair__response_a_id",
            "pair__response_b_id",
            "choice",
            "valid",
            "is_tie",
        )
    )
    records = []
    for judge, item, external, condition, cue, slot1, ra, rb, choice, valid, tie in rows.iterator(chunk_size=5000):
        if valid and choice in JudgeSlot.values:
            winner = choice
        elif tie:
            winner = TIE
        else:
            continue  # unparseable output: no verdict at all, not a tie
        second = rb if slot1 == ra else ra
        (key1, len1), (key2, len2) = responses[slot1], responses[second]
        cue_slot = AS_JUDGE_SLOT.get((cue or {}).get("cue_slot", ""), "")
        records.append((judge, _unit(external, item), str(item), condition, key1, key2, cue_slot, winner, len1, len2))
    return pd.DataFrame.from_records(records, columns=VERDICT_COLUMNS)
