"""Files of the generic study format that another app understands (docs/study-format.md).

The format's reader, writer and exporter live here in ``annotations``, but some files describe
things this app must not know about: ``judges.jsonl`` and ``judgments.jsonl`` hold judge
outputs, which are ``judging``'s (and ``annotations`` never imports ``judging``: ARCHITECTURE.md).
So an app registers an extension from its ``AppConfig.ready``, and ``read_study``,
``import_study`` and ``export_study`` call it at fixed points: the dependency keeps pointing up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from annotations.importers.generic_plan import StudyPlan
    from annotations.models import Study


class StudyExtension(Protocol):
    # file name -> the schema $defs entry its lines are checked against (all optional files)
    files: dict[str, str]

    def check(self, rows: dict[str, list[tuple[str, dict]]], plan: StudyPlan) -> None:
        """Cross-line rules over the schema-valid lines of the extension's files; problems go to
        ``plan.problem``, checked rows to ``plan.extensions[<own key>]``. Writes nothing."""

    def counts(self, plan: StudyPlan) -> dict[str, int]:
        """What the import would create, for the preview's table."""

    def preview(self, plan: StudyPlan, instruction_id: str, *, limit: int) -> list[str]:
        """The upload preview's sample: at most ``limit`` lines (plain text, escaped by the page)
        saying what the extension would import for one instruction, as the platform will read it."""

    def apply(
        self, plan: StudyPlan, study: Study, *, response_ids: dict[tuple[str, str], int], created_by: Any
    ) -> None:
        """Write the checked rows into ``study`` inside the import's transaction (replacing the
        previous import's), after the content and human work are written."""

    def export(self, study: Study, out: Path, *, instruction_ids: dict[int, str]) -> dict[str, int]:
        """Write the extension's files for ``study`` into ``out`` (rows per file), deleting a
        stale file that would have no rows."""


_REGISTERED: list[StudyExtension] = []


def register(extension: StudyExtension) -> None:
    """Called once per app from ``AppConfig.ready``; a second registration is ignored."""
    if not any(type(e) is type(extension) for e in _REGISTERED):
        _REGISTERED.append(extension)


def extensions() -> list[StudyExtension]:
    return list(_REGISTERED)


def extension_files() -> dict[str, str]:
    """file name -> schema entry, over every registered extension."""
    return {name: definition for ext in _REGISTERED for name, definition in ext.files.items()}
