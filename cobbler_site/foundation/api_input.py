"""What the API accepts, stated once so that the schema and the views agree exactly.

The OpenAPI schema is the contract (tests/foundation/test_schemathesis.py holds the server to
it both ways: what it calls valid is accepted, what it calls invalid is refused). DRF is
lenient in ways a schema cannot say, so request bodies are ``ClosedInput`` serializers:

- an unknown field is refused (400), and the schema says ``additionalProperties: false``
  (otherwise a client's typo is ignored in silence, and a schema-valid extra field could
  carry what the strict JSON parser refuses, a NUL or a 19-digit number);
- text is taken as sent, not trimmed, so ``minLength``, ``maxLength`` and slug patterns
  mean what they say (DRF would accept "  my-slug" and refuse "  " as blank);
- free text says it may not hold a NUL (the database cannot store one; text_safety), and
  every integer has bounds (the JSON parser refuses more than 18 digits).

``BudgetField`` is a dollar amount as a decimal string or a JSON number, and
``StrictPageNumberPagination`` refuses a page number that is not a whole number (``?page=``,
``?page=last``) as DRF refuses ``?page=x``: 404.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar

from django.core.validators import RegexValidator
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.settings import api_settings

from cobbler_site.foundation.text_safety import MAX_INT_DIGITS

MAX_INT = 10**MAX_INT_DIGITS - 1  # the largest integer StrictJSONParser lets through
NO_NUL = r"^[^\x00]*$"  # ECMA and Python regex alike


def _refuse_final_newline(value: str) -> None:
    # Python's "$" also matches before a final newline (ECMA's, the schema's, does not), so
    # "my-slug\n" passes DRF's slug pattern; trimming used to remove the newline.
    if value.endswith("\n"):
        raise serializers.ValidationError("Enter a value without a line break at the end.")


class ClosedInput(serializers.Serializer):
    """An API request body: unknown fields refused, text taken as sent (see the module docstring).

    ``schema_extra`` is merged into the body's schema, for a rule across fields that the
    serializer's ``validate`` enforces (e.g. ``anyOf`` of two ``required`` lists).
    """

    schema_extra: ClassVar[dict[str, Any]] = {}

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for field in fields.values():
            if isinstance(field, serializers.CharField):
                field.trim_whitespace = False
                if any(isinstance(v, RegexValidator) for v in field.validators):
                    field.validators.append(_refuse_final_newline)
        return fields

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = [key for key in data if key not in self.fields]
            if unknown:
                names = ", ".join(repr(key) for key in unknown[:5])  # repr: control characters escaped
                raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [f"Unknown field: {names}."]})
        return super().to_internal_value(data)


class ClosedInputSchema(OpenApiSerializerExtension):
    """The schema half of ClosedInput (drf-spectacular finds it by the serializer's class)."""

    target_class = ClosedInput
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        target: type[ClosedInput] = self.target if isinstance(self.target, type) else type(self.target)
        if target.__doc__ is None:  # not ClosedInput's own docstring, which getdoc() inherits
            schema.pop("description", None)
        schema["additionalProperties"] = False
        for prop in schema.get("properties", {}).values():
            if prop.get("type") == "string" and not {"enum", "pattern", "format"} & prop.keys():
                prop["pattern"] = NO_NUL
            elif prop.get("type") == "integer":
                prop.setdefault("minimum", -MAX_INT)
                prop.setdefault("maximum", MAX_INT)
        return {**schema, **target.schema_extra}


_MONEY = re.compile(r"[0-9]{1,8}(?:\.[0-9]{1,4})?", re.ASCII)
MONEY_MAX = 99_999_999  # whole dollars: 12 digits with 4 decimal places, and no rounding past it


@extend_schema_field(
    {
        "anyOf": [
            {"type": "string", "pattern": rf"^{_MONEY.pattern}$"},
            {"type": "number", "minimum": 0, "maximum": MONEY_MAX},
        ],
        "description": 'US dollars: a decimal string ("2.5", at most 4 decimal places) or a number '
        "(rounded to 4 places).",
    }
)
class BudgetField(serializers.DecimalField):
    """A non-negative dollar amount, as the models store it (12 digits, 4 decimal places).

    DRF's DecimalField also takes "  2.5", "+2.5", "2e1" and "2.": not what the schema's
    pattern says, so a string must match the pattern exactly; a JSON number is rounded.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_digits=12, decimal_places=4, min_value=Decimal(0), **kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # DRF's DecimalField reads "" as null; here only null is null ("" fails the pattern).
        return serializers.Field.validate_empty_values(self, data)

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, str) and _MONEY.fullmatch(data):
            return Decimal(data)
        if isinstance(data, (int, float)) and not isinstance(data, bool) and math.isfinite(data):
            if not 0 <= data <= MONEY_MAX:
                self.fail("invalid")
            return Decimal(str(data)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
        self.fail("invalid")


class StrictPageNumberPagination(PageNumberPagination):
    """DRF's page numbers, with ``?page=`` given only as a whole number from 1.

    DRF reads an empty ``?page=`` as page 1 and ``?page=last`` as the last page, neither of
    which the schema's integer allows; they are refused like ``?page=x``.
    """

    last_page_strings = ()

    def check_page_param(self, request: Any) -> None:
        """NotFound unless ``?page=`` is absent or a whole number from 1 (also for a view that ignores it)."""
        raw = request.query_params.get(self.page_query_param)
        if raw is not None and not re.fullmatch(r"[1-9][0-9]*", raw, re.ASCII):
            raise NotFound(self.invalid_page_message.format(page_number=raw[:20], message="not a page number"))

    def get_page_number(self, request: Any, paginator: Any) -> Any:
        self.check_page_param(request)
        return super().get_page_number(request, paginator)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
        return parameters
