"""Fixtures for the importer tests: one CoBBLEr import per module, and table snapshots."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import call_command

from annotations.models import Study
from judging.models import RegisteredModel

COBBLER_SLUG = "cobbler-test"


def table_counts() -> dict[str, int]:
    """Row counts of every table of our two apps: 'the database is unchanged' in one dict."""
    counts = {}
    for label in ("annotations", "judging"):
        for model in apps.get_app_config(label).get_models():
            counts[model._meta.label] = model.objects.count()
    return counts


def mirror_tree(source: Path, target: Path, *, except_file: Path) -> Path:
    """Symlink every file of ``source`` under ``target`` except one, which is copied (to corrupt)."""
    for path in source.rglob("*"):
        if path.is_dir():
            continue
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if path.relative_to(source) == except_file:
            dest.write_bytes(path.read_bytes())
        else:
            dest.symlink_to(path)
    return target / except_file


@pytest.fixture(scope="module")
def cobbler_import(django_db_setup, django_db_blocker) -> Iterator[str]:
    """Import the full CoBBLEr data once for the module; yields the command's output."""
    from tests.conftest import COBBLER_DIR, needs_shared

    needs_shared()
    with django_db_blocker.unblock():
        out = io.StringIO()
        call_command("import_cobbler", str(COBBLER_DIR), "--study", COBBLER_SLUG, stdout=out)
        yield out.getvalue()
        # Committed outside the per-test transactions: clean up for the rest of the session.
        Study.objects.filter(slug=COBBLER_SLUG).delete()
        RegisteredModel.objects.filter(kind=RegisteredModel.Kind.IMPORTED, aggregates=None, jobs=None).delete()
