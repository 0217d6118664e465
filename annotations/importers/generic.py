"""The generic study format (docs/study-format.md): read and validate into a plan, write nothing.

Four JSONL files, each line checked against its schema in
``annotations/schemas/study.schema.json`` (jsonschema), then the rules a schema cannot
say: ids unique, every reference known, a ranking a permutation of the instruction's
models. Errors are collected across all files, past a line that is not JSON too (up to
``generic_plan.MAX_ERRORS``, then only counted), so the browser preview can list them row
by row; the command raises the first as a one-line ``BadInput`` saying how many more there
are. The plan and the rules several files share are in ``annotations.importers.generic_plan``;
``annotations.importers.generic_write`` applies a plan without errors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from annotations.importers.base import BadInput, BadLine, scan_json_lines
from annotations.importers.generic_plan import (
    InstructionRow,
    RankingRow,
    ResponseRow,
    StudyPlan,
    VoteRow,
    checked_pair,
    id_key,
    known_models,
)
from annotations.importers.generic_settings import EXTRA_FILES, check_gold, check_settings
from annotations.importers.study_extensions import extension_files, extensions
from annotations.vocabulary import Condition

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "study.schema.json"
# file name -> (schema $defs entry, required)
FILES = {
    "instructions.jsonl": ("instruction", True),
    "responses.jsonl": ("response", True),
    "votes.jsonl": ("vote", False),
    "rankings.jsonl": ("ranking", False),
}


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def _validator(definition: str) -> Draft202012Validator:
    whole = schema()
    # The file's own schema, with $defs alongside so its $refs resolve.
    return Draft202012Validator({**whole["$defs"][definition], "$defs": whole["$defs"]})


def _field(error: SchemaError) -> str:
    path = [str(p) for p in error.absolute_path]
    return ".".join(path) if path else "the line"


def describe(error: SchemaError) -> str:
    """A schema error as a short sentence naming the field (e.g. 'winner must be model_a, model_b or tie')."""
    name, kind, value = _field(error), error.validator, error.validator_value
    if kind == "enum":
        options = [str(v) for v in value]
        listed = ", ".join(options[:-1]) + f" or {options[-1]}" if len(options) > 1 else options[0]
        return f"{name} must be {listed}, not {error.instance!r}"[:300]
    if kind == "required":
        missing = [k for k in value if isinstance(error.instance, dict) and k not in error.instance]
        return f"missing field {', '.join(missing) or value}"
    if kind == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in known) if isinstance(error.instance, dict) else []
        return f"unknown field {', '.join(extra)} (allowed: {', '.join(sorted(known))})"
    if kind == "type":
        return "a line must be a JSON object" if name == "the line" else f"{name} must be of type {value}"
    if kind == "oneOf" and name.endswith("id"):
        return f"{name} must be a non-empty string (at most 64 characters) or a non-negative integer"
    if kind == "minLength":
        return f"{name} must not be empty"
    if kind == "maxLength":
        return f"{name} is longer than {value} characters"
    if kind == "pattern":
        return f"{name} must not start or end with whitespace"
    if kind == "minItems":
        return f"{name} must list at least {value} items"
    if kind == "uniqueItems":
        return f"{name} lists a model twice"
    if kind == "minimum":
        return f"{name} must be at least {value}"
    if kind == "not" and value == {"required": ["cued"]}:
        return "cued is only allowed with condition bandwagon or attentional"
    return f"{name}: {error.message}"[:300]


def schema_problems(definition: str, value: Any) -> list[str]:
    """Every schema violation of one line, most specific first; [] when valid."""
    errors = sorted(_validator(definition).iter_errors(value), key=lambda e: (list(e.absolute_path), e.validator))
    # if/then reports "cued is a required property" under 'then': say why.
    out = []
    for error in errors:
        text = describe(error)
        if error.validator == "required" and "cued" in error.validator_value:
            text = f"condition {value.get('condition')} needs cued (model_a or model_b: the model the cue favours)"
        out.append(text)
    # A rule reached through several branches of the schema (if/then, allOf) reports the same
    # sentence more than once: one line, one sentence per mistake.
    return list(dict.fromkeys(out))


def _lines(path: Path, name: str, plan: StudyPlan) -> Iterator[tuple[str, Any]]:
    """The file's JSON lines; a line that is not JSON or too long is a problem, and reading goes on
    (the preview lists every bad line, the command counts them). Only an unreadable file stops it."""
    try:
        for where, value in scan_json_lines(path, name):
            if isinstance(value, BadLine):
                plan.problem(where, value.problem)
            else:
                yield where, value
    except BadInput as exc:
        where, _, problem = str(exc).partition(": ")
        plan.problem(where, problem)


def _read_file(path: Path, name: str, definition: str, plan: StudyPlan) -> list[tuple[str, dict]]:
    rows = []
    for where, value in _lines(path, name, plan):
        plan.lines[name] = plan.lines.get(name, 0) + 1
        problems = schema_problems(definition, value)
        for text in problems:
            plan.problem(where, text)
        if not problems:
            rows.append((where, value))
    return rows


def sha256_of(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def read_study(root: Path) -> StudyPlan:
    """Read and check the study files in directory ``root``; the plan lists every problem found."""
    plan = StudyPlan()
    if not root.is_dir():
        plan.problem(str(root), "not a directory")
        return plan
    raw: dict[str, list[tuple[str, dict]]] = {}
    optional = {name: (definition, False) for name, definition in extension_files().items()}
    for name, (definition, required) in (FILES | EXTRA_FILES | optional).items():
        path = root / name
        if not path.is_file():
            if required:
                plan.problem(name, "file not found (instructions.jsonl and responses.jsonl are required)")
            continue
        plan.digests[name] = sha256_of(path)
        plan.lines[name] = 0
        raw[name] = _read_file(path, name, definition, plan)
    _instructions(raw.get("instructions.jsonl", []), plan)
    _responses(raw.get("responses.jsonl", []), plan)
    answered = plan.models_of()
    _votes(raw.get("votes.jsonl", []), plan, answered)
    _rankings(raw.get("rankings.jsonl", []), plan, answered)
    check_settings(raw.get("settings.jsonl", []), plan)
    check_gold(raw.get("gold.jsonl", []), plan, answered)
    for extension in extensions():
        extension.check({name: raw.get(name, []) for name in extension.files}, plan)
        plan.extension_counts |= extension.counts(plan)
    if "instructions.jsonl" in plan.digests and not plan.instructions and plan.ok:
        plan.problem("instructions.jsonl", "no instructions")
    return plan


def _instructions(rows: list[tuple[str, dict]], plan: StudyPlan) -> None:
    first: dict[str, str] = {}
    for where, value in rows:
        key = id_key(value["id"])
        if key in first:
            plan.problem(where, f"duplicate id {key!r} (first at {first[key]})")
            continue
        first[key] = where
        plan.instructions.append(
            InstructionRow(where, key, value["instruction"], value.get("reference", ""), value.get("category", ""))
        )


def _responses(rows: list[tuple[str, dict]], plan: StudyPlan) -> None:
    known = {row.id for row in plan.instructions}
    first: dict[tuple[str, str], str] = {}
    for where, value in rows:
        key = (id_key(value["instruction_id"]), value["model"])
        if key[0] not in known:
            plan.problem(where, f"unknown instruction_id {key[0]!r} (not in instructions.jsonl)")
        elif key in first:
            plan.problem(
                where, f"duplicate response of model {key[1]!r} to instruction {key[0]!r} (first at {first[key]})"
            )
        else:
            first[key] = where
            plan.responses.append(ResponseRow(where, key[0], key[1], value["text"]))


def _votes(rows: list[tuple[str, dict]], plan: StudyPlan, answered: dict[str, list[str]]) -> None:
    first: dict[tuple, str] = {}
    for where, value in rows:
        pair = checked_pair(plan, answered, where, value)
        if pair is None:
            continue
        instruction, model_a, model_b = pair
        vote = VoteRow(
            where,
            instruction,
            model_a,
            model_b,
            value["winner"],
            value["annotator"],
            value.get("condition", Condition.PLAIN),
            value.get("presented_first", "model_a"),
            value.get("cued", ""),
        )
        # One vote per annotator, condition, pair and arrangement: the same pair shown the
        # same way twice would be two answers to one task (the order condition's twins differ
        # in arrangement).
        key = (vote.annotator, vote.condition, instruction, vote.first_model, vote.second_model)
        if key in first:
            plan.problem(
                where,
                f"duplicate vote: this annotator already voted on {vote.first_model!r} "
                f"shown before {vote.second_model!r} in condition {vote.condition} "
                f"(first at {first[key]})",
            )
            continue
        first[key] = where
        plan.votes.append(vote)


def _rankings(rows: list[tuple[str, dict]], plan: StudyPlan, answered: dict[str, list[str]]) -> None:
    first: dict[tuple[str, str], str] = {}
    for where, value in rows:
        instruction, ranking = id_key(value["instruction_id"]), tuple(value["ranking"])
        if not known_models(plan, answered, where, instruction, list(ranking)):
            continue
        models = answered[instruction]
        if len(ranking) != len(models):
            missing = [m for m in models if m not in ranking]
            plan.problem(
                where,
                f"ranking must list all {len(models)} models with a response to instruction "
                f"{instruction!r}; missing {', '.join(map(repr, missing))}",
            )
            continue
        count = value.get("acceptable_count")
        if count is not None and count > len(ranking):
            plan.problem(where, f"acceptable_count {count} is more than the {len(ranking)} ranked models")
            continue
        key = (value["annotator"], instruction)
        if key in first:
            plan.problem(
                where, f"duplicate ranking of instruction {instruction!r} by this annotator (first at {first[key]})"
            )
            continue
        first[key] = where
        plan.rankings.append(RankingRow(where, instruction, value["annotator"], ranking, count))
