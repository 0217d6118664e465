"""Rounds: a condition's crowd batches can grow after its first design, beside imported work.

A study's batches of one condition come from three places: imported human work (the
importers store no seed), the first generated design, and later rounds that add places.
A second design of a condition is refused unless it is asked for as a new round, so a
double click on "Generate" cannot silently double a study. Without a round field on
``Batch`` (no migration), a round is named in its batches' labels: round 1 keeps the
plain labels it always had, later rounds are prefixed ``round N: ``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from annotations.models import Batch, Condition, Study

ROUND_PREFIX = re.compile(r"^round (\d+): ")
LABEL_MAX = Batch._meta.get_field("label").max_length or 100


def round_of(label: str) -> int:
    """The round a generated batch belongs to, read from its label (round 1 has no prefix)."""
    match = ROUND_PREFIX.match(label)
    return int(match.group(1)) if match else 1


@dataclass(frozen=True)
class Round:
    """Where a new design of one condition goes: its round number and its first batch index."""

    condition: str
    number: int
    first_index: int  # (study, condition, index) is unique: a round continues after every earlier batch
    imported: int  # imported batches of the condition, which the round stands beside
    earlier: int  # generated batches of earlier rounds

    def label(self, label: str) -> str:
        text = label if self.number == 1 else f"round {self.number}: {label}"
        return text[:LABEL_MAX]


def plan_round(*, study: Study, condition: str, new_round: bool) -> Round:
    """The round a new design of ``condition`` makes; ValidationError when it must not be made.

    Imported batches (no seed) never block a design: "bring my pilot votes, then
    crowdsource more" generates round 1 beside them. A condition that already has a
    generated design takes another only with ``new_round``, and the refusal says how.
    """
    if condition not in Condition.values:
        raise ValidationError(f"Unknown condition {condition!r}.")
    # Called inside the generating transaction: the study row's lock makes two designs of one
    # study (a double click, two researchers) run one after the other, so the second one sees
    # the first's batches instead of colliding on (study, condition, index).
    Study.objects.select_for_update().filter(pk=study.pk).first()
    rows = list(Batch.objects.filter(study=study, condition=condition).values_list("index", "label", "seed"))
    generated = [(label, seed) for _index, label, seed in rows if seed is not None]
    last = max((round_of(label) for label, _seed in generated), default=0)
    if generated and not new_round:
        seeds = sorted({seed for label, seed in generated if round_of(label) == last})
        raise ValidationError(
            f"Study {study.slug} already has {len(generated)} {condition} batches (round {last}, "
            f"seed {', '.join(str(s) for s in seeds)}). A second design is only added as a new round, "
            "so that a repeated click cannot double the study: to add places, add a round (the hub's "
            "Capacity box, new_round in the API, --new-round on the command line)."
        )
    return Round(
        condition=condition,
        number=last + 1,
        first_index=max((index for index, _label, _seed in rows), default=-1) + 1,
        imported=len(rows) - len(generated),
        earlier=len(generated),
    )


def describe_round(*, study: Study, batches: Sequence[Batch]) -> str:
    """One sentence for the researcher: what was created, how many places it adds, beside what."""
    if not batches:
        return "No batches were created."
    condition, number = batches[0].condition, round_of(batches[0].label)
    seeds = list(Batch.objects.filter(study=study, condition=condition).values_list("seed", flat=True))
    imported = sum(1 for seed in seeds if seed is None)
    earlier = len(seeds) - imported - len(batches)
    tasks = sum(b.tasks.count() for b in batches)
    places = sum(b.target_overlap for b in batches)
    beside = []
    if imported:
        beside.append(f"{imported} imported batch{'es' if imported != 1 else ''}")
    if earlier:
        beside.append(f"{earlier} batch{'es' if earlier != 1 else ''} of earlier rounds")
    return (
        f"Round {number} of {condition}: {len(batches)} new batch{'es' if len(batches) != 1 else ''}"
        f" ({tasks} task{'s' if tasks != 1 else ''}, {places} place{'s' if places != 1 else ''} for workers"
        f" at {study.overlap} per batch)" + (f", beside {' and '.join(beside)}." if beside else ".")
    )
