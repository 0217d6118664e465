"""The qualification round: a few pairwise items with known answers, passed before any task."""

from __future__ import annotations

from typing import Self

from django.db import models

from annotations.models.content import Study
from annotations.vocabulary import CrowdChoice

# Used for any study (the demo included) that defines no items of its own. Written for this
# project; each has one clearly better answer given the reference.
DEFAULT_ITEMS: tuple[dict[str, str], ...] = (
    {
        "instruction": "Is the Pacific the largest ocean on Earth?",
        "reference": "Yes. The Pacific Ocean covers about a third of the Earth's surface.",
        "answer_a": "Yes, the Pacific is the largest ocean; it covers roughly a third of the planet.",
        "answer_b": "No, the largest ocean is Lake Superior, which is in Spain.",
        "gold": CrowdChoice.A,
        "explanation": "System A agrees with the reference; System B is wrong and incoherent.",
    },
    {
        "instruction": "Why do we see lightning before we hear thunder?",
        "reference": "Light travels much faster than sound, so the flash arrives first.",
        "answer_a": "Thunder is shy and waits for lightning to leave. Bananas are yellow.",
        "answer_b": "Because light is much faster than sound, the flash reaches us before the noise.",
        "gold": CrowdChoice.B,
        "explanation": "System B explains the reason given in the reference; System A does not.",
    },
    {
        "instruction": "Can a penguin fly?",
        "reference": "No. Penguins are flightless birds; their wings are flippers for swimming.",
        "answer_a": "No. Penguins cannot fly; they use their flipper-like wings to swim.",
        "answer_b": "Yes, penguins migrate south every winter by flying over the mountains.",
        "gold": CrowdChoice.A,
        "explanation": "System A matches the reference; System B contradicts it.",
    },
)


class QualificationItem(models.Model):
    """A pairwise item with a gold answer, shown in the qualification round."""

    class Gold(models.TextChoices):
        A = CrowdChoice.A.value, "System A"
        B = CrowdChoice.B.value, "System B"

    study = models.ForeignKey(Study, models.CASCADE, related_name="qualification_items")
    position = models.PositiveSmallIntegerField(default=0)
    instruction = models.TextField()
    reference = models.TextField(blank=True)
    answer_a = models.TextField()
    answer_b = models.TextField()
    gold = models.CharField(max_length=1, choices=Gold)
    # Shown after a failed attempt, so a retry teaches rather than guesses.
    explanation = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("study", "position")
        constraints = [
            models.UniqueConstraint(fields=["study", "position"], name="one_qualification_item_per_position"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} qualification {self.position}"

    @classmethod
    def for_study(cls, study: Study) -> list[Self]:
        """The study's items, creating the default three the first time. Idempotent."""
        items = list(cls.objects.filter(study=study))
        if not items:
            cls.objects.bulk_create(
                [cls(study=study, position=i, **item) for i, item in enumerate(DEFAULT_ITEMS)],
                ignore_conflicts=True,  # two first visitors at once create them once
            )
            items = list(cls.objects.filter(study=study))
        return items
