"""`manage.py export_study --study SLUG DIR`: write a study in the generic JSONL format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotations.exporters import export_study
from annotations.models import Study


class Command(BaseCommand):
    help = "Write a study as instructions/responses/votes/rankings .jsonl files (docs/study-format.md)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="slug of the study")
        parser.add_argument("directory", type=Path, help="where to write the files (created if needed)")

    def handle(self, *args: Any, study: str, directory: Path, **options: Any) -> None:
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"--study {study}: unknown study")
        for name, count in export_study(study=found, out=directory).items():
            self.stdout.write(f"{directory / name}: {count} line(s)")
