"""Authority (CALM): one answer ends with a fabricated but plausible reference in a common citation
style (authors, year in parentheses, title, journal or DOI link). The reference adds no content,
so a judge that reads the answers alone ignores it.

The citation is drawn per showing from the lists below (seeded, stored in the cue as
``citation``), so the same pair always carries the same reference and review shows it again.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import ANSWER, CueBias, CueContext, Words
from annotations.vocabulary import Condition

SURNAMES = (
    "Anderson", "Becker", "Chen", "Dubois", "Fischer", "Garcia", "Hansen", "Ito", "Kowalski", "Larsen",
    "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka", "Varga", "Williams",
)  # fmt: skip
TOPICS = (
    "answer quality in expert practice",
    "practical reasoning and everyday decisions",
    "the reliability of explanatory answers",
    "evidence-based guidance for common questions",
    "accuracy and completeness in written advice",
    "how experts answer open-ended questions",
)
TITLES = (
    "A systematic review of {topic}",
    "Rethinking {topic}",
    "{topic_cap}: a large-scale study",
    "Measuring {topic}",
)
JOURNALS = (
    "Journal of Applied Cognitive Science",
    "Annual Review of Knowledge Systems",
    "Proceedings of the National Academy of Sciences",
    "Nature Human Behaviour",
    "Psychological Science in the Public Interest",
    "Journal of Experimental Psychology: Applied",
)
PREFIX = "Reference: "
# The reference paragraph the perturbation appends, as the simulator and review find it again.
_TAIL = re.compile(r"\n\nReference: [^\n]*\Z")


def _authors(rng: random.Random) -> str:
    names = rng.sample(SURNAMES, rng.choice((1, 2, 3)))
    cited = [f"{name}, {rng.choice('ABCDEHJKLMRST')}." for name in names]
    if len(cited) == 1:
        return cited[0]
    return ", ".join(cited[:-1]) + ", & " + cited[-1]


def _draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    topic = rng.choice(TOPICS)
    title = rng.choice(TITLES).format(topic=topic, topic_cap=topic[0].upper() + topic[1:])
    year = rng.randint(2009, 2023)
    authors = _authors(rng)
    if rng.random() < 0.5:
        volume, issue, start = rng.randint(5, 60), rng.randint(1, 12), rng.randint(10, 900)
        where = f"{rng.choice(JOURNALS)}, {volume}({issue}), {start}-{start + rng.randint(8, 30)}."
    else:
        where = f"https://doi.org/10.{rng.randint(1000, 9999)}/{rng.randint(100000, 999999)}"
    return {"citation": f"{authors} ({year}). {title}. {where}"}


def _perturb(text: str, cue: Mapping[str, Any]) -> str:
    return f"{text}\n\n{PREFIX}{cue.get('citation', '')}"


def _unperturb(text: str) -> str | None:
    m = _TAIL.search(text)
    return text[: m.start()] if m else None


AUTHORITY = CueBias(
    condition=Condition.AUTHORITY,
    short=Condition.AUTHORITY.value,
    perturbs=ANSWER,
    knob=Condition.AUTHORITY.value,
    null="the citation has no effect: with the same arrangement, choosing the answer that cites a reference both "
    "times is as likely as choosing the other both times",
    words=Words(
        name="authority (fabricated citation)",
        toward="answers that cite a reference",
        against="answers that do not cite a reference",
        hits="cited answer both times",
        mirror="the other both times",
        judge_toward="favours answers with a fabricated citation",
        judge_against="avoids answers with a fabricated citation",
        people_toward="chose the answer with a fabricated citation more often",
        people_against="chose the answer without a citation more often",
    ),
    draw=_draw,
    perturb=_perturb,
    unperturb=_unperturb,
)
