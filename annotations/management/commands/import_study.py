"""`manage.py import_study DIR --study SLUG [--name NAME]`: the generic JSONL format (docs/study-format.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from annotations.importers.generic_write import import_study


class Command(BaseCommand):
    help = (
        "Import instructions.jsonl, responses.jsonl and optional votes.jsonl / rankings.jsonl "
        "(docs/study-format.md) into a study. Re-runnable: the files replace the previous import; "
        "all or nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("directory", type=Path, help="a directory holding the .jsonl files")
        parser.add_argument("--study", required=True, help="slug of the study to create or replace")
        parser.add_argument("--name", default="", help="the study's display name")

    def handle(self, *args: Any, directory: Path, study: str, name: str, **options: Any) -> None:
        report = import_study(root=directory.resolve(), slug=study, name=name)
        for line in report.render():
            self.stdout.write(line)
