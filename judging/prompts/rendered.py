"""A rendered prompt and its hash: what both renderers return (this package's CoBBLEr prompts
and ``judging.prompts.templates``), in a module of its own so neither imports the other for it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """sha256 of the canonical JSON of the messages; the simulator counts calls by it."""
    canonical = json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class RenderedPrompt:
    messages: list[dict[str, str]]
    # What an answer must name: ("System Star", "System Square") or ("Model a", "Model b").
    answer_labels: tuple[str, str]
    # Builds the prompt pieces a completion-style judge may echo (the paper parser deletes
    # them); lazy, because only the paper parser needs them.
    _echo: Callable[[], list[str]] = field(default=list, repr=False)

    @cached_property
    def hash(self) -> str:
        return prompt_hash(self.messages)

    @cached_property
    def echo_strings(self) -> list[str]:
        return self._echo()
