"""One tiny judging call to check a registered (or about-to-be-registered) model works.

The prompt is a real judge prompt (judging.prompts, the default version, the plain order
condition) for two short made-up answers, one right and one wrong, so the reply also shows
whether the model follows the answer format: the robust parser reads it exactly as a job
would. The call goes through judging.llm.complete, so JUDGE_ALLOWED_HOSTS is checked before
any request (and any key) leaves, and errors come back in the runner's words, with a hint.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from annotations.vocabulary import Condition, JudgeSlot
from judging import error_hints, llm, parsers, prompts
from judging.vocabulary import ModelKind, Parser

# Long enough for a cold local model to answer one short prompt, short enough not to park a
# web worker: the page waits for this call.
TIMEOUT_S = 15.0
RAW_LIMIT = 500
INSTRUCTION = "What is 2 + 2?"
ANSWERS = ("2 + 2 = 4.", "2 + 2 = 5.")  # the first is right


@dataclass(frozen=True)
class ConnectionResult:
    ok: bool
    latency_ms: int = 0
    raw: str = ""  # truncated to RAW_LIMIT characters; the template escapes it
    truncated: bool = False
    choice: str | None = None  # "first" | "second" | None (the parser found no verdict)
    label: str = ""  # the label the parser read, e.g. "System Star"
    tokens_in: int = 0
    tokens_out: int = 0
    error: str = ""
    hint: str = ""

    @property
    def chose_the_right_answer(self) -> bool:
        return self.choice == JudgeSlot.FIRST

    @property
    def outcome(self) -> str:
        """What happened, in one word: "works" only for a readable verdict on the right answer.

        "unreadable": reached, but the reply is no verdict; "wrong": reached, but it chose
        the wrong answer; "failed": the call itself failed.
        """
        if not self.ok:
            return "failed"
        if self.choice is None:
            return "unreadable"
        return "works" if self.chose_the_right_answer else "wrong"

    @property
    def summary(self) -> str:
        """The outcome as a sentence, for the status line and the message."""
        return {
            "works": "works: it answered with a verdict for the right answer",
            "wrong": "reached, but it chose the wrong answer (2 + 2 = 5)",
            "unreadable": "reached, but the answer could not be read as a verdict",
            "failed": "failed",
        }[self.outcome]


def _prompt() -> prompts.RenderedPrompt:
    return prompts.render(
        version=prompts.DEFAULT_VERSION,
        condition=Condition.ORDER,
        instruction=INSTRUCTION,
        reference="",
        first_text=ANSWERS[0],
        second_text=ANSWERS[1],
    )


def run(judge: Any) -> ConnectionResult:
    """Call ``judge`` (a saved or unsaved Judge) once; never raises for an endpoint's failure."""
    if judge.kind == ModelKind.IMPORTED:
        return ConnectionResult(ok=False, error="imported results have no endpoint to call")
    prompt = _prompt()
    try:
        snapshot = llm.ModelSnapshot.of(judge)
    except Exception as exc:  # e.g. a stored key that no longer decrypts
        return ConnectionResult(ok=False, error=f"cannot read the model's settings: {type(exc).__name__}")
    snapshot = dataclasses.replace(snapshot, timeout=min(TIMEOUT_S, snapshot.timeout or TIMEOUT_S), max_concurrency=1)
    start = time.monotonic()
    try:
        completion = llm.complete(
            snapshot, prompt.messages, seed_parts=("connection-test",), labels=prompt.answer_labels, texts=ANSWERS
        )
    except (llm.TransientError, llm.PermanentError) as exc:
        error = str(exc)
        return ConnectionResult(
            ok=False, latency_ms=int((time.monotonic() - start) * 1000), error=error, hint=error_hints.hint_for(error)
        )
    choice = parsers.parse(
        Parser.ROBUST, completion.text, labels=prompt.answer_labels, echo_strings=prompt.echo_strings
    )
    labels: dict[str, str] = {JudgeSlot.FIRST: prompt.answer_labels[0], JudgeSlot.SECOND: prompt.answer_labels[1]}
    label = labels.get(choice or "", "")
    latency = completion.latency_ms or int((time.monotonic() - start) * 1000)
    return ConnectionResult(
        ok=True,
        latency_ms=latency,
        raw=completion.text[:RAW_LIMIT],
        truncated=len(completion.text) > RAW_LIMIT,
        choice=choice,
        label=label,
        tokens_in=completion.tokens_in,
        tokens_out=completion.tokens_out,
    )
