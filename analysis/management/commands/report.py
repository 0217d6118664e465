"""python manage.py report --study SLUG [--profile P] --format json|csv|html --out PATH"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.exporters import FORMATS
from analysis.profiles import PROFILES
from analysis.services import write_report
from annotations.models import Study


class Command(BaseCommand):
    help = "Write a study's agreement report (cobbler-report/1) as JSON, a CSV zip or one self-contained HTML file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--profile", default="default", help=f"one of {', '.join(PROFILES)}")
        parser.add_argument("--format", dest="fmt", required=True, help=f"one of {', '.join(FORMATS)}")
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument(
            "--data-file", action="append", type=Path, default=[],
            help="a source data file whose SHA-256 goes into the manifest (repeatable)",
        )

    def handle(self, *args, study: str, profile: str, fmt: str, out: Path, data_file: list[Path], **options) -> None:
        # Validate cheap things first, so a typo never waits for a full computation.
        if profile not in PROFILES:
            raise CommandError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
        if fmt not in FORMATS:
            raise CommandError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"unknown study {study!r}")
        try:
            size = write_report(study=found, profile=profile, fmt=fmt, out=out, data_files=data_file)
        except ValueError as exc:
            raise CommandError(str(exc).splitlines()[0]) from None
        self.stdout.write(f"wrote {out} ({size} bytes, {fmt}, profile {profile})")
