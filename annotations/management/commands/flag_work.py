"""`manage.py flag_work --study SLUG`: recompute the quality flags of a study's submitted work.

Flags are computed when work is submitted; run this after changing a study's quality rules,
or for work imported or submitted before flags existed (docs/methods.md "Crowd quality").
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotations.models import Assignment, Study
from annotations.quality import reflag_study, rules_for


class Command(BaseCommand):
    help = "Recompute the quality flags of every submitted assignment of a study."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="slug of the study")

    def handle(self, *args: Any, study: str, **options: Any) -> None:
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"--study {study}: unknown study")
        try:
            rules_for(found)
        except ValidationError as exc:
            raise CommandError(f"--study {study}: its quality rules are invalid: {' '.join(exc.messages)}") from None
        done = reflag_study(found)
        flags = Assignment.objects.filter(batch__study=found, status=Assignment.Status.SUBMITTED).values_list(
            "flags", flat=True
        )
        raised = Counter(flag["code"] for row in flags for flag in row)
        flagged = sum(1 for row in flags if row)
        self.stdout.write(f"{done} submitted assignment(s) flagged again; {flagged} with at least one flag")
        for code, n in sorted(raised.items()):
            self.stdout.write(f"  {code}: {n}")
