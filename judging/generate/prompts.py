"""How an instruction becomes the messages a candidate model answers (versioned, hashed).

A wording change means a new version here, so every response records exactly which
prompt produced it (``Response.provenance["prompt_version"]`` and the messages themselves).
"""

from __future__ import annotations

from judging.prompts import prompt_hash

DEFAULT_VERSION = "answer-v1"
# version -> system message; the user message is the instruction text, verbatim.
SYSTEM_MESSAGES: dict[str, str] = {
    "answer-v1": ("You are a helpful assistant. Answer the user's instruction directly, accurately and completely."),
}


def available_versions() -> list[str]:
    return sorted(SYSTEM_MESSAGES)


def messages_for(instruction: str, *, version: str = DEFAULT_VERSION) -> list[dict[str, str]]:
    """The chat messages that ask for an answer to ``instruction``; ValueError on a bad version."""
    if version not in SYSTEM_MESSAGES:
        raise ValueError(f"unknown answer prompt version {version!r}; use {', '.join(available_versions())}")
    return [{"role": "system", "content": SYSTEM_MESSAGES[version]}, {"role": "user", "content": instruction}]


def hash_of(messages: list[dict[str, str]]) -> str:
    """The same hash judge prompts get (the simulator counts calls by it)."""
    return prompt_hash(messages)
