"""JSON export and validation against the repository's schema (cobbler-report/1)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "cobbler-report-1.schema.json"


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(report: dict) -> None:
    """Raise ValueError naming the first schema violation (path and message)."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(report))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ValueError(f"report does not match cobbler-report/1 at {where}: {error.message}")


def to_json(report: dict) -> bytes:
    validate(report)
    # allow_nan=False: NaN is not JSON; a NaN here is a bug upstream, so fail loudly.
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False).encode()
