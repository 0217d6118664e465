"""Versioned prompt templates (the JSON files next to this module) and the renderer.

A template is data: changing a wording means adding a new version file, so every
job can record exactly which wording its judge saw (``JudgeJob.prompt_version``)
and every judgment the hash of its messages (``Judgment.prompt_hash``).

The files that name a ``verdict_format`` are not CoBBLEr prompts but the built-in templates of
other benchmarks (Arena-Hard, MT-Bench, AlpacaEval), rendered by ``judging.prompts.templates``
with their insertion points for the bias conditions; ``available_versions`` leaves them out.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from annotations.biases import REGISTRY, CueBias, CueContext
from annotations.vocabulary import Condition, JudgeSlot

# prompt_hash is imported from here by the runner, the simulator and generation jobs.
from judging.prompts.cot import COT_INSTRUCTION
from judging.prompts.rendered import RenderedPrompt, prompt_hash  # noqa: F401
from judging.prompts.templates import content_hash, is_builtin

PROMPTS_DIR = Path(__file__).resolve().parent
DEFAULT_VERSION = "v1"
# Conditions whose prompt names the models instead of the Star/Square aliases.
NAMED_CONDITIONS = frozenset({Condition.COMPASSION})


def available_versions() -> list[str]:
    """The CoBBLEr prompt versions (the files here that name no verdict format; those that do
    are the built-in templates of other benchmarks, ``judging.prompts.templates``)."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.json") if not is_builtin(p.stem))


def version_hash(version: str) -> str:
    """sha256 of a CoBBLEr prompt version's content (as ``Template.hash`` for the templates)."""
    return content_hash(load_template(version))


@cache
def load_template(version: str) -> dict[str, Any]:
    """Raise ValueError for an unknown version (one clear error, nothing changed)."""
    path = PROMPTS_DIR / f"{version}.json"
    if version not in available_versions():
        raise ValueError(f"unknown prompt version {version!r}; have {', '.join(available_versions())}")
    return json.loads(path.read_text())


def cue_context(version: str, condition: str, slot: str, *, percent: int = 85) -> CueContext:
    """Where a cue bias is shown in a CoBBLEr prompt: the version's own wording of it (whose
    sentences say "System {label}") or, without one, the plugin's default with the full labels."""
    t = load_template(version)
    own = t["cues"].get(condition)
    sentences = [own] if isinstance(own, str) else list(own or [])
    labels = list(t["labels"]) if sentences else [f"System {x}" for x in t["labels"]]
    i = 0 if slot == JudgeSlot.FIRST else 1
    return CueContext(label=labels[i], other=labels[1 - i], sentences=sentences, percent=percent)


def _cue_sentence(version: str, condition: str, cue: dict[str, Any]) -> str:
    bias = REGISTRY.get(condition)
    slot = cue.get("cue_slot")
    if bias is None or not slot:
        return ""
    return bias.prompt_sentence(cue, cue_context(version, condition, slot, percent=cue.get("percent", 85)))


def _echo_strings(
    t: dict[str, Any],
    *,
    block: str,
    instruction: str,
    reference: str,
    texts: tuple[str, str],
    format_lines: list[str],
    cue: dict[str, Any],
    bias: CueBias | None = None,
) -> list[str]:
    percent = cue.get("percent", 85)
    out = [
        block,
        "Instruction:",
        instruction,
        "###",
        "<|prompter|>",
        "<|endoftext|>",
        "<|assistant|>",
        *format_lines,
        t["question"],
        reference,
        *texts,
        "(You)",
    ]
    if bias is not None and bias.condition not in t["cues"]:
        out.extend(bias.echoes(cue, [f"System {x}" for x in t["labels"]]))
    for label in t["labels"]:
        out.append(t["cues"]["bandwagon"].format(percent=percent, label=label))
        out.append(t["cues"]["selective"].format(label=label))
        out.extend(d.format(label=label) for d in t["cues"]["attentional"])
    # Longest first, so a sentence is deleted before any fragment of it.
    return sorted({s for s in out if s}, key=len, reverse=True)


def render(
    *,
    version: str,
    condition: str,
    instruction: str,
    reference: str,
    first_text: str,
    second_text: str,
    cue: dict[str, Any] | None = None,
) -> RenderedPrompt:
    """Build the chat messages for one judgment.

    The CoBBLEr body, in order: the question, the instruction, the reference, the two
    labelled answers, the optional cue sentence, the answer format.
    """
    t = load_template(version)
    cue = cue or {}
    bias = REGISTRY.get(condition)
    if bias is not None:  # an answer perturbation changes the cued answer's own text
        first_text, second_text = bias.shown_texts(cue, first_text, second_text, first_slot=JudgeSlot.FIRST)
    named = condition in NAMED_CONDITIONS
    if named:
        names = cue["names"]
        shown = list(names)
        self_slot = cue.get("self_slot")
        if self_slot and not (t["self_suffix_only_second"] and self_slot == "first"):
            i = 0 if self_slot == "first" else 1
            shown[i] = names[i] + t["self_suffix"]
        lines = [
            t["named_slot_line"].format(name=shown[0], response=first_text),
            t["named_slot_line"].format(name=shown[1], response=second_text),
        ]
        labels = (f"Model {names[0]}", f"Model {names[1]}")
        format_lines = [t["named_format"], t["no_explanation"]]
    else:
        lines = [
            t["slot_line"].format(label=t["labels"][0], response=first_text),
            t["slot_line"].format(label=t["labels"][1], response=second_text),
        ]
        labels = (f"System {t['labels'][0]}", f"System {t['labels'][1]}")
        format_lines = [t["format"], COT_INSTRUCTION if condition == Condition.COT else t["no_explanation"]]
    if condition == Condition.SELECTIVE:
        format_lines.append(t["selective_ignore"])
    block = "\n".join([t["fence"], *lines, t["fence"]])
    parts = [t["question"], t["instruction"].format(instruction=instruction)]
    if reference:
        parts.append(t["reference"].format(reference=reference))
    parts.append(block)
    cue_sentence = _cue_sentence(version, condition, cue)
    if cue_sentence:
        parts.append(cue_sentence)
    parts.extend(format_lines)
    messages = [
        {"role": "system", "content": t["system"]},
        {"role": "user", "content": "\n".join(parts)},
    ]

    def echo() -> list[str]:
        return _echo_strings(
            t,
            block=block,
            instruction=instruction,
            reference=reference,
            texts=(first_text, second_text),
            format_lines=format_lines,
            cue=cue,
            bias=bias,
        )

    return RenderedPrompt(messages=messages, answer_labels=labels, _echo=echo)


def distractor_templates(version: str) -> list[str]:
    return list(load_template(version)["cues"]["attentional"])


def slot_labels(version: str) -> tuple[str, str]:
    a, b = load_template(version)["labels"]
    return a, b
