"""The ``Judge(kind="imported")`` rows that imported results belong to."""

from __future__ import annotations

from annotations.importers.base import BadInput, upsert
from judging.models import Judge


def imported_judges(names: list[str], *, self_keys: set[str]) -> dict[str, int]:
    """Get or create ``Judge(kind="imported")`` rows; a same-named live judge is an error."""
    clash = Judge.objects.filter(name__in=names).exclude(kind=Judge.Kind.IMPORTED).first()
    if clash is not None:
        raise BadInput(f"judge {clash.name}", f"a '{clash.kind}' judge has this name; imported results need their own")
    upsert(
        Judge,
        (
            Judge(name=name, kind=Judge.Kind.IMPORTED, self_candidate_key=name if name in self_keys else "")
            for name in names
        ),
        unique_fields=("name",),
    )
    return dict(Judge.objects.filter(name__in=names).values_list("name", "pk"))
