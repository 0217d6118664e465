"""The qualification round: a few pairwise items with known answers, drawn from a pool, passed before any task."""

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
    {
        "instruction": "At what temperature does pure water boil at sea level?",
        "reference": "At 100 degrees Celsius (212 degrees Fahrenheit).",
        "answer_a": "Water never boils at sea level because the air is too heavy.",
        "answer_b": "It boils at 100 degrees Celsius, which is 212 degrees Fahrenheit.",
        "gold": CrowdChoice.B,
        "explanation": "System B gives the temperature in the reference; System A is false.",
    },
    {
        "instruction": "How many days are there in a leap year?",
        "reference": "366 days; February has 29 days instead of 28.",
        "answer_a": "A leap year has 366 days, because February gets a 29th day.",
        "answer_b": "A leap year has 400 days so that the calendar can leap forward.",
        "gold": CrowdChoice.A,
        "explanation": "System A gives the reference's count; System B is wrong.",
    },
    {
        "instruction": "What do plants need sunlight for?",
        "reference": "Photosynthesis: they use light to turn water and carbon dioxide into sugar and oxygen.",
        "answer_a": "Plants need sunlight to keep warm at night, like a blanket.",
        "answer_b": "For photosynthesis: light powers turning water and carbon dioxide into sugar and oxygen.",
        "gold": CrowdChoice.B,
        "explanation": "System B names photosynthesis as the reference does; System A does not.",
    },
    {
        "instruction": "Which planet is closest to the Sun?",
        "reference": "Mercury is the closest planet to the Sun.",
        "answer_a": "Mercury is the planet closest to the Sun.",
        "answer_b": "The Moon is the closest planet to the Sun, followed by Jupiter.",
        "gold": CrowdChoice.A,
        "explanation": "System A names Mercury, like the reference; System B is wrong.",
    },
    {
        "instruction": "How many legs does a spider have?",
        "reference": "Eight. Spiders are arachnids, not insects.",
        "answer_a": "Spiders have six legs, the same as every insect, and two wings.",
        "answer_b": "A spider has eight legs; it is an arachnid rather than an insect.",
        "gold": CrowdChoice.B,
        "explanation": "System B says eight legs, as the reference does; System A is wrong.",
    },
    {
        "instruction": "What is the capital of Japan?",
        "reference": "Tokyo is the capital of Japan.",
        "answer_a": "The capital of Japan is Tokyo.",
        "answer_b": "Japan has no capital; its cities take turns every year.",
        "gold": CrowdChoice.A,
        "explanation": "System A names Tokyo, like the reference; System B is false.",
    },
    {
        "instruction": "Why should you wash your hands before eating?",
        "reference": "Washing removes germs that could otherwise get into your mouth and make you ill.",
        "answer_a": "Washing makes your hands heavier, so you eat more slowly. Clouds are made of wool.",
        "answer_b": "To wash off germs that could get into your mouth with the food and make you ill.",
        "gold": CrowdChoice.B,
        "explanation": "System B gives the reason in the reference; System A is nonsense.",
    },
    {
        "instruction": "What does a thermometer measure?",
        "reference": "Temperature.",
        "answer_a": "A thermometer measures temperature, how hot or cold something is.",
        "answer_b": "A thermometer measures the length of rivers in kilometres.",
        "gold": CrowdChoice.A,
        "explanation": "System A says temperature, like the reference; System B is wrong.",
    },
    {
        "instruction": "Is the Sun a star?",
        "reference": "Yes. The Sun is a star, the one closest to Earth.",
        "answer_a": "No, the Sun is a large lamp that the Earth carries around.",
        "answer_b": "Yes, the Sun is a star; it is the nearest star to the Earth.",
        "gold": CrowdChoice.B,
        "explanation": "System B agrees with the reference; System A contradicts it.",
    },
)
# A worker sees this many items per attempt, drawn from the study's pool (at least three times
# as many items, see DEFAULT_ITEMS), so the answers to one attempt do not hand over the next.
ITEMS_SHOWN = 3


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
        """The study's pool of items, creating the default pool the first time. Idempotent.

        A study that still has only the three defaults of earlier versions gets the rest of
        the default pool; a study with items of its own keeps exactly its own.
        """
        items = list(cls.objects.filter(study=study))
        defaults = {item["instruction"] for item in DEFAULT_ITEMS}
        if all(item.instruction in defaults for item in items) and len(items) < len(DEFAULT_ITEMS):
            have = {item.instruction for item in items}
            cls.objects.bulk_create(
                [
                    cls(study=study, position=i, **item)
                    for i, item in enumerate(DEFAULT_ITEMS)
                    if item["instruction"] not in have
                ],
                ignore_conflicts=True,  # two first visitors at once create them once
            )
            items = list(cls.objects.filter(study=study))
        return items
