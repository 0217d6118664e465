"""The demo study: a dozen general-knowledge questions written for this project (not third-party data).

Five made-up candidate systems answer every question, each with a recognisable
style, so rankings, length bias and judge agreement show something at a glance:
``thorough`` (correct, long), ``concise`` (correct, short), ``rambling`` (correct
but padded, longest), ``wrong`` (confident and incorrect), ``terse`` (a few words).
"""

from __future__ import annotations

from itertools import combinations

from django.db import transaction

from annotations.importers.base import upsert
from annotations.models import Candidate, Instruction, Pair, Response, Study

DEMO_SLUG = "demo"
SYSTEMS = ("thorough", "concise", "rambling", "wrong", "terse")
_PADDING = (
    "That is a really interesting question, and people have asked it for a long time. "
    "Before answering, it helps to think about it from a few different angles, because "
    "there are always several ways of looking at things like this, and all of them matter. "
)
_PADDING_END = (
    " Anyway, I hope this helps, and there is of course much more that could be said about it, "
    "so feel free to ask again if anything is unclear."
)

# (question, reference, thorough, concise, wrong, terse). "rambling" = padding + concise + padding.
ITEMS: tuple[tuple[str, str, str, str, str, str], ...] = (
    (
        "Why is the sky blue on a clear day?",
        "Air molecules scatter short (blue) wavelengths of sunlight far more than long (red) ones, so blue light reaches us from every part of the sky.",
        "Sunlight contains all visible colours. As it passes through the atmosphere, nitrogen and oxygen molecules scatter it, and this (Rayleigh) scattering is much stronger for short wavelengths. Blue light is therefore scattered across the whole sky and reaches our eyes from every direction, while red and yellow light mostly travel straight on. Violet is scattered even more, but the Sun emits less of it and our eyes are less sensitive to it.",
        "Air molecules scatter blue light much more than red light, so blue reaches us from all over the sky.",
        "The sky is blue because it reflects the colour of the oceans, which cover most of the Earth.",
        "Scattering.",
    ),
    (
        "How many bones does an adult human have?",
        "An adult human skeleton usually has 206 bones.",
        "A typical adult has 206 bones. Babies are born with around 270 bony elements, and many of them, for example in the skull and the lower spine, fuse together during childhood. The exact number varies a little between people because of extra small bones such as sesamoid bones.",
        "Usually 206.",
        "An adult human has 312 bones, more than a newborn, because new bones grow during puberty.",
        "206",
    ),
    (
        "What causes the seasons on Earth?",
        "The tilt of Earth's axis (about 23.5 degrees): each hemisphere receives more direct sunlight and longer days for part of the year.",
        "Earth's axis is tilted by about 23.5 degrees relative to its orbit. As Earth goes around the Sun, first one hemisphere and then the other leans towards the Sun. The hemisphere tilted towards the Sun gets sunlight at a steeper angle and longer days, which means summer; the other gets low-angle light and short days, which means winter. The distance to the Sun changes only slightly and is not the cause.",
        "The tilt of Earth's axis: the hemisphere leaning towards the Sun gets more direct light and longer days.",
        "Seasons happen because Earth is much closer to the Sun in summer and much farther away in winter.",
        "Axial tilt.",
    ),
    (
        "Why do we have leap years?",
        "A year (one orbit of the Sun) lasts about 365.24 days; adding a day almost every fourth year keeps the calendar aligned with the seasons.",
        "The time Earth takes to orbit the Sun is about 365.2422 days, not exactly 365. Without a correction the calendar would drift by about a day every four years, and after a few centuries the seasons would fall in different months. The Gregorian calendar therefore adds 29 February in years divisible by 4, except century years not divisible by 400 (so 1900 was not a leap year, but 2000 was).",
        "Because a year is about 365.24 days long, so an extra day every four years keeps the calendar in step with the seasons.",
        "Leap years were added so that February, which is the shortest month, has the same number of weeks as the others.",
        "Calendar drift.",
    ),
    (
        "Is it safe to look directly at the Sun during a partial solar eclipse?",
        "No. Even a thin crescent of the Sun can burn the retina; use certified eclipse glasses or a pinhole projector.",
        "No. During a partial eclipse the visible part of the Sun is just as bright per area as usual, and its light, including invisible infrared and ultraviolet, can damage the retina within seconds. Because the retina has no pain receptors, you may not notice the injury until later. Use certified eclipse glasses (ISO 12312-2) or watch an image projected through a pinhole.",
        "No. Even a small visible part of the Sun can damage your eyes; use eclipse glasses or a pinhole projector.",
        "Yes, during an eclipse the Moon blocks the harmful rays, so you can look at the Sun for a few minutes.",
        "No.",
    ),
    (
        "What is the boiling point of water at sea level in degrees Celsius?",
        "100 degrees Celsius (212 degrees Fahrenheit) at standard sea-level pressure.",
        "At standard sea-level pressure (101.325 kPa) pure water boils at 100 degrees Celsius, which is 212 degrees Fahrenheit. At higher altitude the air pressure is lower, so water boils at a lower temperature, about 93 degrees Celsius at 2,000 metres. Dissolved salt raises the boiling point slightly.",
        "100 degrees Celsius.",
        "Water boils at 90 degrees Celsius at sea level and at 100 degrees only in a pressure cooker.",
        "100",
    ),
    (
        "Why do onions make people cry?",
        "Cutting an onion releases enzymes that produce a volatile sulfur compound (syn-propanethial-S-oxide), which irritates the eyes and triggers tears.",
        "Onion cells store sulfur-containing compounds and, separately, enzymes. Cutting breaks the cells, the two mix, and a chain of reactions produces syn-propanethial-S-oxide, a volatile gas. When it reaches the eyes it stimulates nerves in the cornea, and the tear glands respond to wash the irritant away. Chilling the onion or using a sharp knife reduces the effect.",
        "Cutting them releases a sulfur gas that irritates the eyes, so they water.",
        "Onions contain tiny amounts of pepper juice that spray into the air when you peel the skin.",
        "Sulfur gas.",
    ),
    (
        "Can penguins fly?",
        "No. Penguins are flightless birds; their wings evolved into flippers used for swimming.",
        "No. Penguins are birds, but they lost the ability to fly millions of years ago. Their wings became stiff flippers, and their dense bones and streamlined bodies suit diving rather than flight. Under water they are excellent swimmers: some species reach speeds of several metres per second and dive hundreds of metres deep.",
        "No, they are flightless; their wings work as flippers for swimming.",
        "Yes, most penguins can fly short distances, but they prefer to swim because it uses less energy.",
        "No.",
    ),
    (
        "What does a thermometer in a fever measure, and what is a normal body temperature?",
        "It measures body temperature; normal is roughly 36.5 to 37.5 degrees Celsius, and a fever is usually 38 degrees or more.",
        "A clinical thermometer measures the body's core temperature, or an approximation of it taken in the mouth, ear, armpit or rectum. A normal value is about 36.5 to 37.5 degrees Celsius and varies with the time of day, activity and the place of measurement. A temperature of 38 degrees Celsius or more is usually called a fever.",
        "Body temperature; normal is about 37 degrees Celsius, and 38 or more is a fever.",
        "It measures blood pressure in degrees; a normal reading is around 120 degrees.",
        "About 37 C.",
    ),
    (
        "Why does ice float on water?",
        "Ice is less dense than liquid water: when water freezes, hydrogen bonds lock the molecules into an open lattice that takes up more space.",
        "Most substances are denser as solids, but water is an exception. As it freezes, each molecule forms hydrogen bonds with four neighbours in an open hexagonal lattice, which takes up about 9 percent more volume than the liquid. Ice is therefore less dense (about 0.92 g per cubic centimetre) and floats. This is why lakes freeze from the top down and life survives underneath.",
        "Because ice is less dense than liquid water; freezing water expands into an open crystal structure.",
        "Ice floats because it contains trapped air bubbles; ice made without air would sink.",
        "Less dense.",
    ),
    (
        "How long does light from the Sun take to reach Earth?",
        "About 8 minutes and 20 seconds (roughly 499 seconds) on average.",
        "Light travels at about 299,792 kilometres per second and the average distance from the Sun to Earth is about 149.6 million kilometres, so sunlight takes about 499 seconds, a little over 8 minutes and 19 seconds, to arrive. The time varies by a few seconds over the year because Earth's orbit is slightly elliptical.",
        "About 8 minutes and 20 seconds.",
        "Sunlight reaches Earth instantly, because light does not need time to travel through empty space.",
        "8 min.",
    ),
    (
        "Why should you not use water to put out a grease fire in a kitchen?",
        "Water sinks under the burning oil, flashes into steam and throws burning oil around, spreading the fire; smother it with a lid or use a class F/K extinguisher instead.",
        "Cooking oil is much hotter than 100 degrees Celsius when it burns. Water poured on it sinks below the oil, boils instantly and expands into steam, which sprays burning oil droplets into the air and can cause a fireball. Instead, turn off the heat, cover the pan with a metal lid or a fire blanket to cut off oxygen, and use an extinguisher rated for cooking oil (class F in Europe, class K in the US) if needed.",
        "Water turns to steam under the hot oil and splashes burning oil around; cover the pan with a lid instead.",
        "Water is fine for grease fires as long as you use cold water and pour it slowly.",
        "Spreads it.",
    ),
)


def _answers(item: tuple[str, str, str, str, str, str]) -> dict[str, str]:
    _question, _reference, thorough, concise, wrong, terse = item
    return {
        "thorough": thorough,
        "concise": concise,
        "rambling": _PADDING + concise + _PADDING_END,
        "wrong": wrong,
        "terse": terse,
    }


@transaction.atomic
def seed_demo_study() -> Study:
    """Create (or bring up to date) the public demo study with its instructions, answers and pairs.

    Idempotent: every row is upserted on its natural key, so calling it again
    changes nothing. Crowd batches and judges are wired in by their own helpers.
    """
    study, _created = Study.objects.update_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": "Demo: five made-up systems on twelve everyday questions",
            "description": "Questions, references and answers written for this demo; not real model outputs.",
            "source": Study.Source.DEMO,
            "is_public_demo": True,
        },
    )
    upsert(
        Candidate,
        (Candidate(study=study, key=key, name=key.title(), position=pos) for pos, key in enumerate(SYSTEMS)),
        unique_fields=("study", "key"),
        update_fields=("name", "position"),
    )
    upsert(
        Instruction,
        (
            Instruction(study=study, index=i, kind="demo", text=item[0], reference=item[1])
            for i, item in enumerate(ITEMS)
        ),
        unique_fields=("study", "index"),
        update_fields=("kind", "text", "reference"),
    )
    candidates = dict(study.candidates.values_list("key", "pk"))
    instructions = dict(study.instructions.values_list("index", "pk"))
    upsert(
        Response,
        (
            Response(instruction_id=instructions[i], candidate_id=candidates[key], text=text)
            for i, item in enumerate(ITEMS)
            for key, text in _answers(item).items()
        ),
        unique_fields=("instruction", "candidate"),
        update_fields=("text",),
    )
    responses = {
        (i, key): pk
        for pk, i, key in Response.objects.filter(instruction__study=study).values_list(
            "pk", "instruction__index", "candidate__key"
        )
    }
    upsert(
        Pair,
        (
            Pair(instruction_id=instructions[i], response_a_id=responses[(i, a)], response_b_id=responses[(i, b)])
            for i in range(len(ITEMS))
            for a, b in combinations(SYSTEMS, 2)
        ),
        unique_fields=("instruction", "response_a", "response_b"),
    )
    return study
