"""python manage.py generate_batches --study SLUG --condition C [--seed N | --cobbler-design DATA_DIR] [--new-round]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations import services
from annotations.models import Study
from annotations.services.design import PAIRWISE_CONDITIONS
from annotations.services.rounds import describe_round


class Command(BaseCommand):
    help = "Generate the crowd batches of one condition: a fresh seeded design, or CoBBLEr's original one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument(
            "--condition", required=True, help="ranking or a pair condition: " + ", ".join(PAIRWISE_CONDITIONS)
        )
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--seed", type=int)
        group.add_argument(
            "--cobbler-design",
            type=Path,
            metavar="DATA_DIR",
            help="the CoBBLEr data directory: reproduce the authors' human studies exactly",
        )
        parser.add_argument("--pairs-per-batch", type=int, default=15)
        parser.add_argument(
            "--new-round",
            action="store_true",
            help="add the design beside one the condition already has, to add places (imported batches never need it)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        study = Study.objects.filter(slug=opts["study"]).first()
        if study is None:
            raise CommandError(f"No study {opts['study']!r}.")
        try:
            if opts["cobbler_design"] is not None:
                letter_map = services.load_cobbler_letter_map(opts["cobbler_design"])
                batches = services.generate_cobbler_batches(
                    study=study, condition=opts["condition"], letter_map=letter_map, new_round=opts["new_round"]
                )
            else:
                batches = services.generate_batches(
                    study=study,
                    condition=opts["condition"],
                    seed=opts["seed"],
                    pairs_per_batch=opts["pairs_per_batch"],
                    new_round=opts["new_round"],
                )
        except ValidationError as e:
            raise CommandError(e.messages[0]) from None
        tasks = sum(b.tasks.count() for b in batches)
        self.stdout.write(f"{len(batches)} {opts['condition']} batches, {tasks} tasks for {study.slug}")
        self.stdout.write(describe_round(study=study, batches=batches))
