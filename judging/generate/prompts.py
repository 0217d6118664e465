"""How an instruction becomes the messages a candidate model answers (versioned, hashed).

A wording change means a new version here, so every response records exactly which
prompt produced it (``Response.provenance["prompt_version"]`` and the messages themselves).
"""

from __future__ import annotations

from annotations.vocabulary import RewriteKind
from judging.prompts import prompt_hash

DEFAULT_VERSION = "answer-v1"
# version -> system message; the user message is the instruction text, verbatim.
SYSTEM_MESSAGES: dict[str, str] = {
    "answer-v1": ("You are a helpful assistant. Answer the user's instruction directly, accurately and completely."),
}


# A rewrite job's prompts: version -> (system message, user message with {instruction} and {answer}).
# The model is asked to wrap its rewrite in <rewrite> tags, since chat models preface and sign off
# (judging.generate.rewrite_output reads the tags, or the whole answer without a preface line).
REWRITE_PROMPTS: dict[str, tuple[str, str]] = {
    "sentiment-v1": (
        "You rewrite answers in a different tone. Rewrite the answer you are given so that it sounds more "
        "confident and more cheerful: positive, upbeat wording and no hedging. Keep every fact, step, number, "
        "example and claim exactly as it is; add no information and remove none; keep the language, the format "
        "and roughly the length. Reply with the rewritten answer only, between <rewrite> and </rewrite>.",
        "The question the answer responds to:\n<question>\n{instruction}\n</question>\n\n"
        "The answer to rewrite:\n<answer>\n{answer}\n</answer>",
    ),
}
# The prompt a rewrite kind uses unless the job names another version of it.
DEFAULT_REWRITE_VERSION: dict[str, str] = {RewriteKind.SENTIMENT: "sentiment-v1"}


def rewrite_versions(kind: str) -> list[str]:
    return sorted(v for v in REWRITE_PROMPTS if v.startswith(f"{kind}-"))


def rewrite_messages(instruction: str, answer: str, *, version: str) -> list[dict[str, str]]:
    """The chat messages that ask for a rewrite of ``answer``; ValueError on a bad version.

    The texts are put in place in one pass (never ``str.format`` on them): an answer holding
    "{instruction}" stays as written.
    """
    if version not in REWRITE_PROMPTS:
        raise ValueError(f"unknown rewrite prompt version {version!r}; use {', '.join(sorted(REWRITE_PROMPTS))}")
    system, user = REWRITE_PROMPTS[version]
    head, rest = user.split("{instruction}")
    middle, tail = rest.split("{answer}")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": head + instruction + middle + answer + tail},
    ]


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
