"""python manage.py report --study SLUG [--profile P] [--jobs ID,ID] --format json|csv|html --out PATH"""

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
            "--jobs",
            default=None,
            help="comma-separated judge job ids whose calls count (default: the latest completed job "
            "per judge and condition)",
        )
        parser.add_argument(
            "--data-file",
            action="append",
            type=Path,
            default=[],
            help="a source data file whose SHA-256 goes into the manifest (repeatable)",
        )

    def handle(
        self,
        *args,
        study: str,
        profile: str,
        fmt: str,
        out: Path,
        data_file: list[Path],
        jobs: str | None = None,
        **options,
    ) -> None:
        # Validate cheap things first, so a typo never waits for a full computation.
        if profile not in PROFILES:
            raise CommandError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
        if fmt not in FORMATS:
            raise CommandError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        job_ids = _job_ids(jobs)
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"unknown study {study!r}")
        try:
            size = write_report(study=found, profile=profile, fmt=fmt, out=out, data_files=data_file, jobs=job_ids)
        except ValueError as exc:
            raise CommandError(str(exc).splitlines()[0]) from None
        self.stdout.write(f"wrote {out} ({size} bytes, {fmt}, profile {profile})")


def _job_ids(text: str | None) -> list[int] | None:
    """``"3,5"`` -> [3, 5]; None when the option was not given."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise CommandError(f"--jobs wants comma-separated job ids, got {text!r}")
    return [int(p) for p in parts]
