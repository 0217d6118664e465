"""The ``RegisteredModel(kind="imported")`` rows that imported results belong to."""

from __future__ import annotations

from annotations.importers.base import BadInput, upsert
from judging.models import RegisteredModel


def imported_judges(names: list[str], *, self_keys: set[str]) -> dict[str, int]:
    """Get or create ``RegisteredModel(kind="imported")`` rows; a same-named live judge is an error."""
    clash = RegisteredModel.objects.filter(name__in=names).exclude(kind=RegisteredModel.Kind.IMPORTED).first()
    if clash is not None:
        raise BadInput(f"judge {clash.name}", f"a '{clash.kind}' judge has this name; imported results need their own")
    upsert(
        RegisteredModel,
        (
            RegisteredModel(
                name=name, kind=RegisteredModel.Kind.IMPORTED, self_candidate_key=name if name in self_keys else ""
            )
            for name in names
        ),
        unique_fields=("name",),
    )
    return dict(RegisteredModel.objects.filter(name__in=names).values_list("name", "pk"))
