"""Which judgments a condition needs for one pair (Judgment docstring semantics)."""
from __future__ import annotations

import hashlib
import random
from typing import Any

from annotations.models import Pair, Response
from judging import prompts

# Egocentric and salience need no calls of their own: they are read from the order run.
SUPPORTED = ("order", "compassion", "bandwagon", "attentional", "selective", "plain")
DERIVED = {"egocentric": "order", "salience": "order"}
PRESENTATIONS = {"plain": (1,)}


def seeded_rng(*parts: object) -> random.Random:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def normalise(conditions: list[str]) -> list[str]:
    """Validate names; derived biases map to the run they come from. ValueError if unknown."""
    out: list[str] = []
    for name in conditions:
        name = DERIVED.get(name.strip(), name.strip())
        if name not in SUPPORTED:
            raise ValueError(f"unknown condition {name!r}; use {', '.join(SUPPORTED)} "
                             f"(egocentric and salience come from order)")
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError("choose at least one condition")
    return out


def _name(response: Response) -> str:
    return response.candidate.name or response.candidate.key


def plan(*, pair: Pair, condition: str, seed: int, version: str, bandwagon_percent: int,
         self_key: str) -> list[dict[str, Any]]:
    """[{presentation, slot1_response, cue}] for one pair under one condition (deterministic)."""
    a, b = pair.response_a, pair.response_b
    rng = seeded_rng(seed, pair.pk, condition)
    if condition in ("order", "compassion"):
        rows = [{"presentation": 1, "slot1_response": a, "second": b},
                {"presentation": 2, "slot1_response": b, "second": a}]
        if condition == "compassion":
            for row in rows:
                first, second = row["slot1_response"], row["second"]
                cue: dict[str, Any] = {"names": [_name(first), _name(second)]}
                if self_key and first.candidate.key == self_key:
                    cue["self_slot"] = "first"
                elif self_key and second.candidate.key == self_key:
                    cue["self_slot"] = "second"
                row["cue"] = cue
    else:
        # One seeded arrangement, the same in both presentations; only the cue moves.
        first, second = (a, b) if rng.random() < 0.5 else (b, a)
        if condition == "plain":
            rows = [{"presentation": 1, "slot1_response": first, "cue": {}}]
        else:
            labels = prompts.slot_labels(version)
            templates = prompts.distractor_templates(version)
            rows = []
            for presentation, slot, label in ((1, "first", labels[0]), (2, "second", labels[1])):
                cue = {"cue_slot": slot}
                if condition == "bandwagon":
                    cue["percent"] = bandwagon_percent
                elif condition == "attentional":
                    cue["distractor"] = rng.choice(templates).format(label=label)
                rows.append({"presentation": presentation, "slot1_response": first, "cue": cue})
    for row in rows:
        row.pop("second", None)
        row.setdefault("cue", {})
    return rows


def render_for(*, version: str, condition: str, pair: Pair, slot1_response_id: int,
               cue: dict[str, Any]) -> prompts.RenderedPrompt:
    """The prompt of a stored judgment (pair with instruction and both responses loaded)."""
    a, b = pair.response_a, pair.response_b
    first, second = (a, b) if slot1_response_id == a.pk else (b, a)
    instruction = pair.instruction
    return prompts.render(
        version=version, condition=condition, instruction=instruction.text,
        reference=instruction.reference, first_text=first.text, second_text=second.text, cue=cue,
    )
