"""Quality-control tasks: instructed-response items, catch pairs and gold items.

Each is an ordinary pairwise Task (a real pair of the study, a arrangement, the batch's
condition and a cue drawn as for the batch's items, so a check cannot be told apart from
an item by its banner), with ``role`` saying what it is, ``expects`` what a careful worker
answers, and no ``pair_index`` (a check has no twin). analysis.loaders never counts them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from annotations.models import Pair, Response, Task
from annotations.vocabulary import CrowdChoice

INSTRUCTED_TEXT = "Attention check: whatever you think of the answers, choose System {slot}."
# Syllables for the gibberish mixed into a catch pair's broken answer.
_SYLLABLES = ("blor", "zan", "qui", "fep", "dra", "mok", "vus", "trel", "gno", "pif", "wam", "sko")
SLOTS = (CrowdChoice.A, CrowdChoice.B)

# Draws the cue of one task of the batch's condition ({"order": ...}, {"cue_slot": ...}, ...).
CueMaker = Callable[[random.Random], dict]


def _other(slot: str) -> str:
    return CrowdChoice.B if slot == CrowdChoice.A else CrowdChoice.A


def broken_text(text: str, rng: random.Random) -> str:
    """A visibly broken version of an answer: about half its words, shuffled, mixed with gibberish.

    Always differs from ``text`` and never reads as a sentence, whatever the answer's length.
    """
    words = text.split()
    rng.shuffle(words)
    kept = words[: max(3, len(words) // 2)]
    gibberish = [
        "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))) for _ in range(max(3, len(kept) // 3))
    ]
    for word in gibberish:
        kept.insert(rng.randint(0, len(kept)), word)
    return " ".join(kept).lower().rstrip(".!?") + " ..."


def _pairwise(*, condition: str, pair: Pair, arrangement: str, cue: dict, role: str, expects: dict) -> Task:
    return Task(
        kind=Task.Kind.PAIRWISE,
        condition=condition,
        instruction_id=pair.instruction_id,
        pair=pair,
        arrangement=arrangement,
        cue=cue,
        pair_index=None,
        role=role,
        expects=expects,
    )


def instructed_task(*, condition: str, pair: Pair, arrangement: str, cue: dict, rng: random.Random) -> Task:
    """A real pair shown with an instruction to choose one slot (drawn from ``rng``)."""
    slot = rng.choice(SLOTS)
    return _pairwise(
        condition=condition,
        pair=pair,
        arrangement=arrangement,
        cue=cue,
        role=Task.Role.INSTRUCTED,
        expects={"slot": slot, "text": INSTRUCTED_TEXT.format(slot=slot)},
    )


def catch_task(
    *, condition: str, pair: Pair, arrangement: str, cue: dict, rng: random.Random, slot_texts: tuple[str, str]
) -> Task:
    """A real pair with one slot's answer (drawn from ``rng``) replaced by a broken text; the intact slot is expected.

    ``slot_texts`` are the answers shown in slots A and B under ``arrangement``.
    """
    broken = rng.choice(SLOTS)
    text = broken_text(slot_texts[SLOTS.index(broken)], rng)
    return _pairwise(
        condition=condition,
        pair=pair,
        arrangement=arrangement,
        cue=cue,
        role=Task.Role.CATCH,
        expects={"slot": _other(broken), "broken_slot": broken, "broken_text": text},
    )


def gold_task(*, condition: str, pair: Pair, arrangement: str, cue: dict) -> Task:
    """A pair with a gold answer (``Pair.gold_response``); the slot it is shown in is expected."""
    if pair.gold_response_id not in (pair.response_a_id, pair.response_b_id):
        raise ValueError(f"{pair} has no gold response of its own.")
    in_a = (pair.gold_response_id == pair.response_a_id) == (arrangement == Task.Arrangement.AB)
    return _pairwise(
        condition=condition,
        pair=pair,
        arrangement=arrangement,
        cue=cue,
        role=Task.Role.GOLD,
        expects={"slot": CrowdChoice.A if in_a else CrowdChoice.B},
    )


def check_count(rate: float, n_items: int) -> int:
    """How many check tasks of one type a batch of ``n_items`` item tasks gets: rate * n rounded
    half up (Python's round() would make 2.5 two but 3.5 four), at least 1."""
    if rate <= 0 or n_items <= 0:
        return 0
    return max(1, math.floor(rate * n_items + 0.5))


def slot_texts(pair: Pair, arrangement: str, texts: dict[int, str]) -> tuple[str, str]:
    a, b = texts[pair.response_a_id], texts[pair.response_b_id]
    return (a, b) if arrangement == Task.Arrangement.AB else (b, a)


def build_check_tasks(
    *,
    condition: str,
    pairs: list[tuple[Response, Response]],
    pair_of: Callable[[Response, Response], tuple[Pair, str]],
    gold_pairs: list[Pair],
    n_attention: int,
    n_gold: int,
    cue: CueMaker,
    rng: random.Random,
) -> list[Task]:
    """``n_attention`` attention checks (instructed, catch, instructed, ...) on pairs drawn from ``pairs``,
    with ``n_gold`` gold tasks (cycling through ``gold_pairs`` in a seeded order) inserted at seeded
    places among them; all draws from ``rng``.

    ``pair_of(first, second)`` is the stored Pair and the arrangement that shows ``first`` in slot A.
    """
    tasks: list[Task] = []
    for k in range(n_attention):
        first, second = rng.sample(pairs[rng.randrange(len(pairs))], 2)
        pair, arrangement = pair_of(first, second)
        texts = {first.pk: first.text, second.pk: second.text}
        if k % 2 == 0:
            tasks.append(
                instructed_task(condition=condition, pair=pair, arrangement=arrangement, cue=cue(rng), rng=rng)
            )
        else:
            tasks.append(
                catch_task(
                    condition=condition,
                    pair=pair,
                    arrangement=arrangement,
                    cue=cue(rng),
                    rng=rng,
                    slot_texts=slot_texts(pair, arrangement, texts),
                )
            )
    if gold_pairs and n_gold:
        order = sorted(gold_pairs, key=lambda p: p.pk)
        rng.shuffle(order)
        for k in range(n_gold):
            pair = order[k % len(order)]
            arrangement = rng.choice((Task.Arrangement.AB, Task.Arrangement.BA))
            gold = gold_task(condition=condition, pair=pair, arrangement=arrangement, cue=cue(rng))
            # Anywhere among the attention checks, which keep their alternation.
            tasks.insert(rng.randint(0, len(tasks)), gold)
    return tasks


def interleave(items: list[Task], checks: list[Task], rng: random.Random) -> list[Task]:
    """The items in their order with the checks at seeded positions (never first: a warm-up item opens)."""
    if not checks:
        return list(items)
    total = len(items) + len(checks)
    slots = set(rng.sample(range(1, total), len(checks))) if total > len(checks) else set(range(total))
    pending_items, pending_checks = iter(items), iter(checks)
    return [next(pending_checks) if position in slots else next(pending_items) for position in range(total)]
