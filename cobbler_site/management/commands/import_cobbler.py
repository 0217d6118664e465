"""`manage.py import_cobbler DIR --study SLUG`: the CoBBLEr repository's data layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from cobbler_site.wiring.cobbler_import import import_cobbler


class Command(BaseCommand):
    help = (
        "Import the CoBBLEr data (instructions, responses, the human ranking and bias studies, "
        "the evaluators' stored rankings) into a study. Re-runnable; all or nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("directory", type=Path, help="the competitive-llms/ layout (../shared/datasets/cobbler)")
        parser.add_argument("--study", required=True, help="slug of the study to create or update")

    def handle(self, *args: Any, directory: Path, study: str, **options: Any) -> None:
        report = import_cobbler(root=directory.resolve(), slug=study)
        for line in report.render():
            self.stdout.write(line)
