"""Text and JSON the databases cannot store: the one rule every input is checked against.

PostgreSQL refuses U+0000 in ``text`` and ``jsonb`` (a ``DataError``, so a 500 if nothing
checked first); SQLite stores it, so the embedded mode hides the bug. A lone surrogate
(U+D800-U+DFFF, which a JSON ``\\ud800`` escape produces) has no UTF-8 encoding and fails
on both databases. Such text is refused before it reaches a model:

- form fields: Django's ``CharField`` already refuses NUL; ``JSONTextField``
  (``annotations.forms``) parses with ``loads`` below;
- DRF serializer fields: DRF's ``CharField`` refuses NUL and surrogates; JSON fields use
  ``refuse_unsafe_text`` as a validator;
- the crowd worker's free text (``annotations.answers.parse_rationale``);
- the importers' readers (``annotations.importers.base``), which also parse with ``loads``.

``loads`` is strict JSON for what we import: no leading byte order mark, no duplicate key
(the standard library keeps the last one silently), integers of at most ``MAX_INT_DIGITS``
digits within int64 (Python refuses to convert more than 4,300 digits with a ValueError,
and a bigger id fits no column anyway), finite floats only (``NaN`` and ``1e400`` are not
JSON that PostgreSQL's ``jsonb`` accepts), and the text rule on every key and string.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.forms.fields import InvalidJSONInput
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_INT_DIGITS = 18  # every 18-digit integer fits a bigint column (int64 holds 19 digits, not all)
BOM = "\ufeff"


class JSONProblem(ValueError):
    """JSON that parses but is refused; the message says what is wrong in a few words."""


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None when it can."""
    if "\x00" in text:
        return "contains a NUL character (U+0000), which the database cannot store"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains a lone surrogate (U+{ord(text[exc.start]):04X}), which is not valid Unicode text"
    return None


def find_text_problem(value: object) -> str | None:
    """The first unstorable string in a JSON-like value (keys included), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if problem := text_problem(item):
                return problem
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return None


def refuse_unsafe_text(value: object) -> None:
    """A Django/DRF validator: ValidationError when ``value`` holds text the database refuses."""
    if problem := find_text_problem(value):
        raise ValidationError(f"The text {problem}.", code="unsafe_text")


def _int(literal: str) -> int:
    # Called with the literal's digits before any conversion, so a 5,000-digit id costs nothing.
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise JSONProblem(f"integer with {len(literal.lstrip('-'))} digits (at most {MAX_INT_DIGITS} are allowed)")
    return int(literal)


def _float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise JSONProblem(f"number {literal[:20]} is too large")
    return number


def _constant(name: str) -> float:
    raise JSONProblem(f"{name} is not a JSON number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JSONProblem(f"duplicate key {key[:60]!r}")
        out[key] = value
    return out


def loads(text: str) -> Any:
    """Parse JSON strictly (see the module docstring).

    Raises ``json.JSONDecodeError`` for text that is not JSON, ``JSONProblem`` for JSON
    that is refused, and ``RecursionError`` for nesting too deep, as ``json.loads`` does.
    """
    if text.startswith(BOM):
        raise JSONProblem("starts with a byte order mark (BOM); save the file as UTF-8 without one")
    value = json.loads(text, object_pairs_hook=_object, parse_int=_int, parse_float=_float, parse_constant=_constant)
    if problem := find_text_problem(value):
        raise JSONProblem(f"a string {problem}")
    return value


class StrictJSONFormField(forms.JSONField):
    """Django's form JSONField parsed with ``loads``: a form error, never a 500.

    ``forms.JSONField`` catches only ``JSONDecodeError``, so a 5,000-digit number (ValueError
    from ``int``) is a server error there, and a ``\\u0000`` escape reaches jsonb. It parses
    twice: to clean (``to_python``) and again to show the refused form (``bound_data``), so
    both use ``loads``.
    """

    def bound_data(self, data: Any, initial: Any) -> Any:
        if self.disabled or data is None:
            return super().bound_data(data, initial)
        try:
            return loads(data)
        except (ValueError, RecursionError):
            # Shown back as typed: a lone surrogate decoded here would break the page's encoding.
            return InvalidJSONInput(data)

    def to_python(self, value: Any) -> Any:
        if self.disabled or value in self.empty_values or isinstance(value, (list, dict, int, float)):
            return super().to_python(value)
        try:
            return loads(value)
        except json.JSONDecodeError:
            raise ValidationError(self.error_messages["invalid"], code="invalid", params={"value": value}) from None
        except JSONProblem as exc:
            raise ValidationError(f"Refused JSON: {exc}.", code="invalid") from None
        except RecursionError:
            raise ValidationError("Not valid JSON: nested too deeply.", code="invalid") from None


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with ``loads``: an API body with a NUL, a lone surrogate, a duplicate
    key or a huge integer anywhere is a 400 before any serializer or view sees it.

    (A lone surrogate that reached a serializer was a 500 even where the field refused it:
    the error message echoes the input, and the JSON renderer cannot encode it.)
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return loads(stream.read().decode(encoding))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, JSONProblem, UnicodeDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None
