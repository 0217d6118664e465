"""The generation parameters a model may send: an allowlist with types and ranges.

A model's ``generation`` JSON goes into every request body, so anything not listed here
could change where or how a request is sent (``extra_headers``, ``extra_query``,
``extra_body``), replace the prompt (``model``, ``messages``) or break the reply's shape
(``stream``). ``check`` is the one validator: the model form, the admin, ``create_judge
--generation`` and the model's field validator use it when a model is saved, and
``judging.llm.complete`` uses it again on every body before sending, so a row written
around the validators is refused there, never sent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

MAX_STOP_SEQUENCES = 4
REASONING_EFFORTS = ("low", "medium", "high")
RESPONSE_FORMAT_TYPES = ("text", "json_object", "json_schema")


class GenerationParamError(ValueError):
    """A parameter that may not be sent; ``field`` names it (one line, no secrets)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _number(low: float, high: float) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise GenerationParamError(name, f"generation parameter {name!r} must be a number")
        if not low <= value <= high:
            raise GenerationParamError(name, f"generation parameter {name!r} must be between {low:g} and {high:g}")

    return check


def _whole(low: int | None, high: int | None) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise GenerationParamError(name, f"generation parameter {name!r} must be a whole number")
        if (low is not None and value < low) or (high is not None and value > high):
            raise GenerationParamError(name, f"generation parameter {name!r} must be between {low:,} and {high:,}")

    return check


def _stop(name: str, value: Any) -> None:
    if isinstance(value, str):
        return
    if isinstance(value, list) and len(value) <= MAX_STOP_SEQUENCES and all(isinstance(item, str) for item in value):
        return
    raise GenerationParamError(
        name, f"generation parameter {name!r} must be a string or a list of up to {MAX_STOP_SEQUENCES} strings"
    )


def _response_format(name: str, value: Any) -> None:
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in RESPONSE_FORMAT_TYPES:
        raise GenerationParamError(
            name, f"generation parameter {name!r} must be an object with type {' | '.join(RESPONSE_FORMAT_TYPES)}"
        )
    # Only the schema itself may ride along: nothing else reaches the provider through it.
    allowed = {"type", "json_schema"} if kind == "json_schema" else {"type"}
    extra = sorted(set(value) - allowed)
    if extra:
        raise GenerationParamError(name, f"generation parameter {name!r} does not take {extra[0]!r}")
    if kind == "json_schema" and not isinstance(value.get("json_schema"), dict):
        raise GenerationParamError(
            name, f"generation parameter {name!r} with type json_schema needs a json_schema object"
        )


def _reasoning_effort(name: str, value: Any) -> None:
    if value not in REASONING_EFFORTS:
        raise GenerationParamError(name, f"generation parameter {name!r} must be one of {', '.join(REASONING_EFFORTS)}")


# Seeds are sent as JSON integers; providers take 64-bit signed values.
_SEED_LIMIT = 2**63 - 1

ALLOWED: dict[str, Callable[[str, Any], None]] = {
    "temperature": _number(0, 2),
    "top_p": _number(0, 1),
    "max_tokens": _whole(1, 1_000_000),
    "seed": _whole(-_SEED_LIMIT - 1, _SEED_LIMIT),
    "stop": _stop,
    "presence_penalty": _number(-2, 2),
    "frequency_penalty": _number(-2, 2),
    "response_format": _response_format,
    "reasoning_effort": _reasoning_effort,
}


def check(params: Any) -> dict[str, Any]:
    """A copy of ``params`` if every entry is allowed; else GenerationParamError naming the first bad one."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise GenerationParamError("generation", "generation must be a JSON object")
    for name in sorted(params):
        checker = ALLOWED.get(name)
        if checker is None:
            raise GenerationParamError(
                name, f"generation parameter {name!r} is not allowed; use {', '.join(sorted(ALLOWED))}"
            )
        checker(name, params[name])
    return dict(params)
