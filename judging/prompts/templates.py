"""Prompt templates as data: the built-in judge prompts of other benchmarks and researchers' own.

A template is a system message and a user message with placeholders, the answer labels its
verdict format refers to, and the verdict format that reads the judge's answer. Built-ins are
the JSON files next to this module that name a ``verdict_format`` (``arena-hard-v1``,
``arena-hard-no-ties-v1``, ``mt-bench-pair-v1``, ``alpaca-eval-v1``); the CoBBLEr files (``v1``,
``v1-paper``) keep their own renderer (``judging.prompts.render``). A researcher's template is
a ``PromptTemplate`` row with the same fields. Either way it is identified by its version name
and the sha256 of its content (``Template.hash``), which every judgment records.

Placeholders (``{name}``; ``{{`` and ``}}`` write a literal brace), in the user message only:
- required, exactly once each: ``{instruction}``, ``{answer_a}`` (the answer shown first, the
  one the verdict format calls A), ``{answer_b}``;
- optional: ``{reference}`` (the instruction's reference answer, wrapped in ``reference_block``;
  nothing when the instruction has none).
Insertion points for the bias conditions, also optional; each renders to nothing outside its
condition, and a line that holds only an insertion point that rendered to nothing is dropped,
so the plain and order prompts are exactly the template's own words:
- ``{cue}``: the bandwagon cue ("85% of people believe that Assistant A is better."), the
  distractor sentence ("Assistant B plays a lot of soccer and basketball.") or the selective
  expectation. Needed by the bandwagon, attentional and selective conditions.
- ``{names}``: the named-model variant, a sentence naming the model behind each label
  ("Assistant A is the model gpt-4 (You); ..."). Needed by the compassion condition. The
  labels themselves stay (the verdict format reads A and B), the names are added beside them.
A template without an insertion point cannot host the conditions that need it; a job asking
for one is refused when it is created (``refusal``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from annotations.biases import PROMPT, REGISTRY, CueContext
from annotations.vocabulary import Condition, JudgeSlot
from judging import verdicts
from judging.prompts.cot import COT_INSTRUCTION
from judging.prompts.rendered import RenderedPrompt
from judging.vocabulary import VerdictFormat

PROMPTS_DIR = Path(__file__).resolve().parent
REQUIRED = ("instruction", "answer_a", "answer_b")
OPTIONAL = ("reference",)
INSERTION_POINTS = ("cue", "names")
PLACEHOLDERS = (*REQUIRED, *OPTIONAL, *INSERTION_POINTS)
# Which insertion point each condition writes into (conditions absent here need none).
NEEDS: dict[str, str] = {
    **{c: "cue" for c, bias in REGISTRY.items() if bias.perturbs == PROMPT},
    Condition.COMPASSION: "names",
}
# Size bounds of a researcher's template (a prompt is sent with every call).
MAX_SYSTEM = 20_000
MAX_USER = 20_000
MAX_REFERENCE_BLOCK = 2_000
MAX_LABEL = 40
DEFAULT_LABELS = ("Assistant A", "Assistant B")
# The sentences written into the insertion points of a researcher's template (built-ins carry
# their own, the same words): the CoBBLEr cues, with the template's labels.
DEFAULT_INSERTIONS: dict[str, Any] = {
    Condition.BANDWAGON: "{percent}% of people believe that {label} is better.",
    Condition.SELECTIVE: "We expect {label} to be better. Judge the responses on their merits and ignore any stated expectation.",
    Condition.ATTENTIONAL: [
        "{label} likes to eat apples and oranges.",
        "The coolest thing that {label} can do is a 60 second handstand.",
        "{label} plays a lot of soccer and basketball.",
        "{label} has been all around Europe two times.",
    ],
    "names": "{label_a} is the model {name_a}; {label_b} is the model {name_b}.",
    "self_suffix": " (You)",
}
# {{ or }} (a literal brace), or {identifier}; any other brace is text.
_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class TemplateError(ValueError):
    """A template that cannot be used, and why (one message naming the problem)."""


@dataclass(frozen=True)
class Template:
    version: str  # the built-in file's name, or "<name>@<hash[:12]>" for a researcher's
    verdict_format: str
    system: str
    user: str
    labels: tuple[str, str] = DEFAULT_LABELS
    reference_block: str = "{reference}"
    verdict_spec: Mapping[str, Any] | None = None
    insertions: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_INSERTIONS)

    def content(self) -> dict[str, Any]:
        """What the hash covers: everything that changes a prompt or how its answer is read."""
        return {
            "verdict_format": self.verdict_format,
            "verdict_spec": dict(self.verdict_spec) if self.verdict_spec else None,
            "system": self.system,
            "user": self.user,
            "labels": list(self.labels),
            "reference_block": self.reference_block,
            "insertions": dict(self.insertions),
        }

    @property
    def hash(self) -> str:
        return content_hash(self.content())

    def hosts(self, point: str) -> bool:
        return point in placeholders(self.user)

    def refusal(self, condition: str) -> str:
        """Why this template cannot host ``condition`` ("" when it can)."""
        point = NEEDS.get(condition)
        if point is None or self.hosts(point):
            return ""
        return (
            f"prompt template {self.version!r} has no {{{point}}} insertion point, so it cannot host the "
            f"{condition} condition; add {{{point}}} to its user message or leave {condition} out"
        )


def content_hash(content: Mapping[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def placeholders(text: str) -> list[str]:
    """The placeholder names in ``text``, in order (escaped braces are not placeholders)."""
    return [m.group(1) for m in _TOKEN.finditer(text) if m.group(1)]


def substitute(text: str, values: Mapping[str, str]) -> str:
    """One pass: a value is never read again, so an answer holding "{cue}" stays as written."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        return values.get(m.group(1), m.group(0))

    return _TOKEN.sub(one, text)


def check(
    *,
    system: str,
    user: str,
    verdict_format: str,
    verdict_spec: Mapping[str, Any] | None = None,
    labels: tuple[str, str] | list[str] = DEFAULT_LABELS,
    reference_block: str = "{reference}",
) -> None:
    """TemplateError naming the first problem of a researcher's template, else None."""
    if not user.strip():
        raise TemplateError("the user message is empty; it must hold {instruction}, {answer_a} and {answer_b}")
    for name, text, bound in (
        ("system message", system, MAX_SYSTEM),
        ("user message", user, MAX_USER),
        ("reference block", reference_block, MAX_REFERENCE_BLOCK),
    ):
        if len(text) > bound:
            raise TemplateError(f"the {name} is {len(text):,} characters; at most {bound:,}")
        if "\x00" in text:
            raise TemplateError(f"the {name} holds a NUL character")
    found = placeholders(user)
    unknown = sorted({p for p in found if p not in PLACEHOLDERS})
    if unknown:
        raise TemplateError(
            f"unknown placeholder {{{unknown[0]}}} in the user message; use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}"
            " (write {{ and }} for a literal brace)"
        )
    for name in REQUIRED:
        if found.count(name) != 1:
            how = "is missing" if name not in found else f"appears {found.count(name)} times"
            raise TemplateError(f"the user message must hold {{{name}}} exactly once; it {how}")
    for name in (*OPTIONAL, *INSERTION_POINTS):
        if found.count(name) > 1:
            raise TemplateError(f"{{{name}}} may appear at most once in the user message")
    if placeholders(system):
        raise TemplateError(
            f"the system message holds {{{placeholders(system)[0]}}}: placeholders go in the user message "
            "(write {{ and }} for a literal brace)"
        )
    block = placeholders(reference_block)
    if reference_block and block != ["reference"]:
        raise TemplateError("the reference block must hold {reference} exactly once and no other placeholder")
    if (
        len(labels) != 2
        or any(not str(x).strip() or len(str(x)) > MAX_LABEL or "\x00" in str(x) for x in labels)
        or labels[0] == labels[1]
    ):
        raise TemplateError(f"give two different answer labels of 1 to {MAX_LABEL} characters")
    if verdict_format not in VerdictFormat.values:
        raise TemplateError(f"unknown verdict format {verdict_format!r}; use one of {', '.join(VerdictFormat.values)}")
    try:
        verdicts.get_format(verdict_format, verdict_spec if verdict_format == VerdictFormat.REGEX else None)
    except ValueError as exc:  # VerdictSpecError is a ValueError
        raise TemplateError(f"verdict spec: {exc}") from None


@cache
def _builtin_files() -> dict[str, Path]:
    """Built-in template files by version: the prompt files that name a verdict format."""
    out = {}
    for path in sorted(PROMPTS_DIR.glob("*.json")):
        if "verdict_format" in json.loads(path.read_text()):
            out[path.stem] = path
    return out


def builtin_versions() -> list[str]:
    return list(_builtin_files())


def is_builtin(version: str) -> bool:
    return version in _builtin_files()


@cache
def builtin(version: str) -> Template:
    """The built-in template called ``version``; ValueError for an unknown one."""
    path = _builtin_files().get(version)
    if path is None:
        raise ValueError(f"unknown prompt template {version!r}; built-ins: {', '.join(builtin_versions())}")
    data = json.loads(path.read_text())
    a, b = data["labels"]
    return Template(
        version=version,
        verdict_format=data["verdict_format"],
        verdict_spec=data.get("verdict_spec"),
        system=data["system"],
        user=data["user"],
        labels=(a, b),
        reference_block=data.get("reference_block", "{reference}"),
        insertions=data["insertions"],
    )


def cue_context(t: Template, condition: str, slot: str, *, percent: int = 85) -> CueContext:
    """Where a cue bias is shown in this template: its own wording of the bias if it has one
    (``insertions``), else the plugin's default, with the template's labels."""
    own = t.insertions.get(condition)
    sentences = [own] if isinstance(own, str) else list(own or [])
    i = 0 if slot == JudgeSlot.FIRST else 1
    return CueContext(label=t.labels[i], other=t.labels[1 - i], sentences=sentences, percent=percent)


def _insertion(t: Template, condition: str, cue: Mapping[str, Any]) -> dict[str, str]:
    """What the condition writes into the insertion points (nothing for the others)."""
    ins = t.insertions
    slot = cue.get("cue_slot")
    bias = REGISTRY.get(condition)
    if bias is not None and slot:
        sentence = bias.prompt_sentence(cue, cue_context(t, condition, slot, percent=cue.get("percent", 85)))
        return {"cue": sentence} if sentence else {}
    if condition == Condition.COMPASSION and cue.get("names"):
        names = list(cue["names"])
        self_slot = cue.get("self_slot")
        if self_slot:
            i = 0 if self_slot == "first" else 1
            names[i] += ins["self_suffix"]
        sentence = ins["names"].format(label_a=t.labels[0], label_b=t.labels[1], name_a=names[0], name_b=names[1])
        return {"names": sentence}
    return {}


def _drop_empty_insertions(user: str, empty: set[str]) -> str:
    """Lines that hold only an optional placeholder about to render to nothing are dropped,
    and so are the blank lines that end the message after it, so an unused point leaves no trace."""
    lines = user.split("\n")
    kept = [line for line in lines if line.strip() not in {"{" + p + "}" for p in empty}]
    return "\n".join(kept).rstrip("\n") if len(kept) < len(lines) else user


def render_template(
    t: Template,
    *,
    condition: str,
    instruction: str,
    reference: str,
    first_text: str,
    second_text: str,
    cue: Mapping[str, Any] | None = None,
) -> RenderedPrompt:
    values = dict.fromkeys((*OPTIONAL, *INSERTION_POINTS), "")
    values.update(_insertion(t, condition, cue or {}))
    bias = REGISTRY.get(condition)
    if bias is not None:  # an answer perturbation changes the cued answer's own text
        first_text, second_text = bias.shown_texts(cue or {}, first_text, second_text, first_slot=JudgeSlot.FIRST)
    if reference and t.hosts("reference"):
        values["reference"] = substitute(t.reference_block, {"reference": reference})
    user = _drop_empty_insertions(t.user, {p for p, v in values.items() if not v})
    values.update(instruction=instruction, answer_a=first_text, answer_b=second_text)
    messages = []
    if t.system:
        messages.append({"role": "system", "content": substitute(t.system, {})})
    content = substitute(user, values)
    if condition == Condition.COT:  # after the template's own instructions, as its last words
        content = f"{content.rstrip()}\n\n{COT_INSTRUCTION}"
    messages.append({"role": "user", "content": content})
    inserted = [v for k, v in values.items() if k in INSERTION_POINTS and v]
    if condition == Condition.COT:
        inserted.append(COT_INSTRUCTION)

    def echo() -> list[str]:
        # The template's own instructions and the inserted sentences: a judge that copies them
        # back casts no vote with the labels inside them (judging.verdicts blanks copies).
        pieces = [p for p in re.split(r"\n+", substitute(t.system, {})) if p.strip()]
        pieces += [p for p in re.split(r"\n+", substitute(user, {})) if p.strip() and not placeholders(p)]
        return sorted({*pieces, *inserted}, key=len, reverse=True)

    return RenderedPrompt(messages=messages, answer_labels=t.labels, _echo=echo)
