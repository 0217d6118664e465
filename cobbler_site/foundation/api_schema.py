"""The API contract's shared parts: error bodies and the responses every operation can give.

Each view documents its own success and domain errors with ``@extend_schema``; the hook
``add_common_responses`` (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) adds what DRF itself
answers on any route, so that the schema lists every status code the server can return:

- 401 (missing or bad token) and 403 (not staff, or a session POST without CSRF), any route;
- 429 (a throttle), any route;
- 400 (the serializer's field errors), any operation with a request body;
- 404 (an unknown object, or ``?page=`` past the end), any operation with a path parameter
  or a ``page`` query parameter.

It also gives integer path parameters ``minimum: 0`` and ``slug`` ones the slug pattern: the
``<int:...>`` and ``<slug:...>`` routes match nothing else (anything else is not the route).

tests/foundation/test_schemathesis.py checks the schema against a live server.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class DetailError(serializers.Serializer):
    """DRF's error body: ``{"detail": "..."}`` (404, 401, 403, 429, and the domain errors)."""

    detail = serializers.CharField()


# 400 from a serializer: {"field": ["message", ...], "non_field_errors": [...]} (nested for
# list fields), or {"detail": "..."} for a body that does not parse.
FIELD_ERRORS_SCHEMA = {
    "type": "object",
    "description": "Field name (or non_field_errors) -> its error messages; or detail for a body that does not parse.",
    "additionalProperties": {
        "anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "object"},
            {"type": "string"},
        ]
    },
}

NOT_FOUND = OpenApiResponse(DetailError, description="No such object among those you manage.")
FIELD_ERRORS = OpenApiResponse(FIELD_ERRORS_SCHEMA, description="Invalid input: the errors per field.")


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def add_common_responses(result: dict, generator, request, public) -> dict:  # drf-spectacular's hook signature
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault(
        "DetailError",
        {
            "type": "object",
            "properties": {"detail": {"type": "string"}},
            "required": ["detail"],
        },
    )
    schemas.setdefault("FieldErrors", FIELD_ERRORS_SCHEMA)

    def body(name: str, description: str) -> dict:
        return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}

    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for parameter in operation.get("parameters", []):
                # <int:...> routes match digits only: a negative id is not this route at all.
                if parameter.get("in") == "path" and parameter.get("schema", {}).get("type") == "integer":
                    parameter["schema"].setdefault("minimum", 0)
                # <slug:slug> routes match an ASCII slug only.
                if parameter.get("in") == "path" and parameter.get("name") == "slug":
                    parameter["schema"].setdefault("pattern", r"^[-a-zA-Z0-9_]+$")
            responses = operation.setdefault("responses", {})
            parameters = {(p.get("in"), p.get("name")) for p in operation.get("parameters", [])}
            responses.setdefault("401", body("DetailError", "No valid credentials (token or session)."))
            responses.setdefault("403", body("DetailError", "Not allowed (researchers only; CSRF for sessions)."))
            responses.setdefault("429", body("DetailError", "Throttled: retry after the Retry-After header's seconds."))
            if "requestBody" in operation:
                responses.setdefault("400", body("FieldErrors", "Invalid input: the errors per field."))
            if "{" in path or ("query", "page") in parameters:
                responses.setdefault(
                    "404", body("DetailError", "Not found (or a page that is not a whole number or past the end).")
                )
    return result
