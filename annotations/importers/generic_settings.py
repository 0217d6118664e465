"""The generic format's two optional extras (docs/study-format.md): ``settings.jsonl``, one line of
per-study task and quality settings, and ``gold.jsonl``, the pairs with an expected answer.

Read into the plan by annotations.importers.generic.read_study, written by apply_extras inside the
import's transaction, and written back by annotations.exporters, so the round trip keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError

from annotations.importers.generic_plan import GoldRow, checked_pair
from annotations.models import Pair, Study
from annotations.quality.rules import validate_rules
from annotations.surveys import validate_surveys

if TYPE_CHECKING:
    from annotations.importers.generic_plan import StudyPlan

# file name -> (schema $defs entry, required); optional, so the upload page's four files still suffice.
EXTRA_FILES = {
    "settings.jsonl": ("settings", False),
    "gold.jsonl": ("gold", False),
}
SETTINGS_DEFAULTS = {
    "allow_ties": False,
    "rationale": "off",
    "attention_check_rate": 0.0,
    "gold_rate": 0.0,
    "surveys": {},
    "quality_rules": {},
}
MAX_RATE = 0.5


def check_settings(rows: list[tuple[str, dict]], plan: StudyPlan) -> None:
    """At most one line; its surveys and quality rules checked by the same validators as the hub's form."""
    if len(rows) > 1:
        plan.problem(rows[1][0], "settings.jsonl holds one line (the study's settings)")
        return
    for where, value in rows:
        cleaned = {**SETTINGS_DEFAULTS, **value}
        for name in ("attention_check_rate", "gold_rate"):
            if not 0 <= cleaned[name] <= MAX_RATE:
                plan.problem(where, f"{name} must be between 0 and {MAX_RATE}")
                return
        try:
            cleaned["surveys"] = validate_surveys(cleaned["surveys"])
            cleaned["quality_rules"] = validate_rules(cleaned["quality_rules"])
        except ValidationError as e:
            plan.problem(where, e.messages[0])
            return
        plan.settings = cleaned


def check_gold(rows: list[tuple[str, dict]], plan: StudyPlan, answered: dict[str, list[str]]) -> None:
    """Each line names a pair of two models that answered its instruction, once."""
    first: dict[tuple[str, frozenset[str]], str] = {}
    for where, value in rows:
        pair = checked_pair(plan, answered, where, value)
        if pair is None:
            continue
        instruction, model_a, model_b = pair
        key = (instruction, frozenset((model_a, model_b)))
        if key in first:
            plan.problem(where, f"duplicate gold pair (first at {first[key]})")
            continue
        first[key] = where
        plan.gold.append(GoldRow(where, instruction, model_a, model_b, value["gold"]))


def apply_extras(plan: StudyPlan, study: Study, response_ids: dict[tuple[str, str], int]) -> None:
    """Store the settings (when the file was given) and make exactly the listed pairs gold."""
    if plan.settings is not None:
        for name, value in plan.settings.items():
            setattr(study, name, value)
        study.save(update_fields=list(plan.settings))
    ours = set(response_ids.values())
    pairs = Pair.objects.filter(instruction__study=study, response_a_id__in=ours, response_b_id__in=ours)
    pairs.exclude(gold_response=None).update(gold_response=None)
    for row in plan.gold:
        a, b = response_ids[(row.instruction_id, row.model_a)], response_ids[(row.instruction_id, row.model_b)]
        gold = response_ids[(row.instruction_id, row.gold_model)]
        pairs.filter(response_a_id__in=(a, b), response_b_id__in=(a, b)).update(gold_response_id=gold)


def settings_row(study: Study) -> dict | None:
    """The study's settings line for the export, or None when every setting is the default
    (so exports of studies that never changed one stay byte-identical to before)."""
    row = {name: getattr(study, name) for name in SETTINGS_DEFAULTS}
    return None if row == SETTINGS_DEFAULTS else row
