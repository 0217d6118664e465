"""`manage.py seed_demo [--if-empty]`: the demo study written by the project, plus a local login."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from annotations.importers.demo import seed_demo_study
from annotations.models import Pair, Study

DEMO_USER = "researcher"


class Command(BaseCommand):
    help = "Create or update the demo study (idempotent). With DEBUG on, also a local 'researcher' login."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--if-empty", action="store_true", help="do nothing if any study exists")

    def handle(self, *args: Any, if_empty: bool, **options: Any) -> None:
        if if_empty and Study.objects.exists():
            self.stdout.write("seed_demo: studies exist already; nothing to do.")
            return
        study = seed_demo_study()
        self.stdout.write(
            f"demo study '{study.slug}': {study.instructions.count()} instructions, "
            f"{study.candidates.count()} systems, "
            f"{Pair.objects.filter(instruction__study=study).count()} pairs"
        )
        if settings.DEBUG:
            self._ensure_local_researcher()

    def _ensure_local_researcher(self) -> None:
        # Only ever with DEBUG on: a well-known password is fine on a laptop, never on a server.
        users = get_user_model()
        if not users.objects.filter(username=DEMO_USER).exists():
            users.objects.create_superuser(DEMO_USER, "researcher@localhost", DEMO_USER)
        self.stdout.write(
            f"local demo account: user '{DEMO_USER}', password '{DEMO_USER}' (staff; DEBUG only, "
            "for this machine; never use it on a server)"
        )
