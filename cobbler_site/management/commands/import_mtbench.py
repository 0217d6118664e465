"""`manage.py import_mtbench FILE [FILE ...] --study SLUG`: MT-Bench human judgments (JSONL/Parquet)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from cobbler_site.wiring.mtbench_import import import_mtbench


class Command(BaseCommand):
    help = (
        "Import rows in the MT-Bench human judgments schema: human votes become crowd "
        "submissions, gpt4_pair verdicts judgments of the imported judge 'gpt-4'. "
        "Re-runnable; all or nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("files", nargs="+", type=Path, help=".jsonl or .parquet files")
        parser.add_argument("--study", required=True, help="slug of the study to create or update")

    def handle(self, *args: Any, files: list[Path], study: str, **options: Any) -> None:
        report = import_mtbench(paths=files, slug=study)
        for line in report.render():
            self.stdout.write(line)
