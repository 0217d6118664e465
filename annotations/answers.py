"""What a worker posts for one task, checked before anything is stored.

Pure functions over plain values (the task's expected ids, the posted strings), so the
htmx view and the REST API reject malformed answers with the same message.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import time
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError

from annotations.biases import cot
from annotations.vocabulary import Condition, CrowdChoice
from cobbler_site.foundation.text_safety import refuse_unsafe_text

BAR = "bar"  # the posted value of the "acceptable above this line" bar
# The worker page's box that says the bar was placed: rank.js ticks it once the bar moves, and a
# worker who wants it on top (no answer acceptable) ticks it. Without it an untouched bar would
# record "nothing is acceptable" for a worker who never saw it.
BAR_PLACED = "bar_placed"
BAR_NOT_PLACED = (
    "Place the black 'acceptable' bar: move it below the answers you find acceptable, or tick "
    "'The bar is where I want it' if it already is (on top: no answer is acceptable)."
)
TIE = CrowdChoice.TIE  # the posted (and stored) choice "no preference", where the study allows ties
# Long enough for a few sentences of reasons, short enough that a paste of the answer
# text itself (or of anything else) is refused rather than stored.
RATIONALE_MAX_CHARS = 2000
TOKEN_SALT = "annotations.task-token"
# A rendered task may be answered for this long; the lease is the real limit.
TOKEN_MAX_AGE_S = 24 * 3600


@dataclass(frozen=True)
class Answer:
    display_order: list[int]
    ranking: list[int] | None = None
    bar_position: int | None = None
    choice: str = ""
    chosen_response_id: int | None = None
    rationale: str = ""
    # A ranking posted exactly in the order it was shown (the bar still on top).
    untouched: bool = False


def display_order(*, participant_id: int, task_id: int, response_ids: list[int]) -> list[int]:
    """The order a participant sees a ranking's answers in: random, but stable on reload.

    Seeded from (participant, task) so a reload shows the same order and the order can be
    recomputed in an audit; the canonical order is never shown (in the CoBBLEr ranking study
    every annotator saw the answers in one fixed model order, and their rankings tended to
    follow it).
    """
    order = sorted(response_ids)
    random.Random(f"{participant_id}:{task_id}").shuffle(order)
    return order


def parse_ranking(
    values: list[str], *, expected: list[int], with_bar: bool, shown: list[int], bar_placed: bool | None = None
) -> Answer:
    """Check a posted ranking (ids best first, maybe with the bar) against the task.

    ``bar_placed`` is what the worker page posts (BAR_PLACED): False refuses a ranking whose
    bar was neither moved nor confirmed. None (the default) does not ask: callers that post
    a ranking without the page (the crowd simulator, scripts) place the bar themselves.
    """
    ids: list[int] = []
    bar_at: int | None = None
    for raw in values:
        if raw == BAR:
            if bar_at is not None:
                raise ValidationError("The 'acceptable' bar appears twice.")
            bar_at = len(ids)
            continue
        try:
            ids.append(int(raw))
        except ValueError:
            raise ValidationError("The ranking contains an unknown answer.") from None
    if with_bar and bar_at is None:
        raise ValidationError("Place the 'acceptable above this line' bar.")
    if not with_bar and bar_at is not None:
        raise ValidationError("This task has no 'acceptable' bar.")
    if len(ids) != len(set(ids)):
        raise ValidationError("An answer appears more than once in the ranking.")
    if set(ids) - set(expected):
        raise ValidationError("The ranking contains an answer that is not part of this task.")
    if len(ids) != len(expected):
        raise ValidationError(f"Rank all {len(expected)} answers (got {len(ids)}).")
    if with_bar and bar_placed is False:
        raise ValidationError(BAR_NOT_PLACED)
    # The page renders the bar above every answer, so "as shown" means it is still first.
    untouched = ids == list(shown) and bar_at in (None, 0)
    return Answer(display_order=shown, ranking=ids, bar_position=bar_at, untouched=untouched)


def parse_choice(raw: str, *, slots: tuple[int, int], allow_tie: bool = False) -> Answer:
    """Check a pairwise choice ("A", "B", or "T" for no preference) and name the response behind it.

    "T" is accepted only where the study allows ties; its chosen response is None.
    """
    if raw == TIE and allow_tie:
        return Answer(display_order=list(slots), choice=TIE, chosen_response_id=None)
    if raw == TIE:
        raise ValidationError("This study has no 'no preference' option: choose System A or System B.")
    if raw not in (CrowdChoice.A, CrowdChoice.B):
        raise ValidationError(
            "Choose System A, System B or No preference." if allow_tie else "Choose System A or System B."
        )
    chosen = slots[0] if raw == CrowdChoice.A else slots[1]
    return Answer(display_order=list(slots), choice=raw, chosen_response_id=chosen)


@dataclass(frozen=True)
class RationaleRule:
    """What a task asks of the worker's reason: the study's setting, or cot's reasoning."""

    mode: str  # a RationaleMode value: "off", "optional", "required"
    min_chars: int = 0  # of a required reason, after trimming
    step_by_step: bool = False  # cot: the reasoning comes first and the page says how


def rationale_rule(*, study_mode: str, condition: str) -> RationaleRule:
    """The rule of one task: ``Study.rationale``, except on a cot task, whose written reasoning
    is the condition itself and so is required whatever the study says (annotations.biases.cot)."""
    if condition == Condition.COT:
        return RationaleRule(mode="required", min_chars=cot.MIN_REASONING_CHARS, step_by_step=True)
    return RationaleRule(mode=study_mode)


def parse_rationale(raw: str | None, *, mode: str, min_chars: int = 0) -> str:
    """The worker's reason for one answer, as the task asks for it (``rationale_rule``).

    ``mode`` is a RationaleMode value: "off" ignores whatever was posted, "optional"
    keeps it, "required" refuses a blank one, or one shorter than ``min_chars``. Longer than
    RATIONALE_MAX_CHARS is refused in every mode that stores it.
    """
    if mode == "off":
        return ""
    text = (raw or "").strip()
    refuse_unsafe_text(text)  # a NUL is a 500 on PostgreSQL otherwise (cobbler_site.foundation.text_safety)
    if mode == "required" and min_chars and len(text) < min_chars:
        raise ValidationError(
            f"Write your reasoning step by step before you choose: at least {min_chars} characters "
            f"(you wrote {len(text)})."
        )
    if mode == "required" and not text:
        raise ValidationError("Write a short reason for your answer in the box below.")
    if len(text) > RATIONALE_MAX_CHARS:
        raise ValidationError(
            f"Your reason is {len(text):,} characters long; keep it to {RATIONALE_MAX_CHARS:,} or fewer."
        )
    return text


def _token_salt(assignment_id: int, task_id: int) -> str:
    return f"{TOKEN_SALT}:{assignment_id}:{task_id}"


def issue_token(*, assignment_id: int, task_id: int) -> str:
    """A signed (nonce, render time) pair carried by each rendered task form.

    Signed with a salt naming the assignment and the task, so a token answers only the
    task whose page was rendered, in that assignment: no task can be answered unopened,
    and no token can be reused for another task or another worker's lease.
    """
    payload = {"n": secrets.token_urlsafe(12), "t": int(time.time() * 1000)}
    return signing.dumps(payload, salt=_token_salt(assignment_id, task_id))


def read_token(token: str, *, assignment_id: int, task_id: int) -> tuple[str, int]:
    """(nonce, milliseconds since render); ValidationError when forged, stale or for another task."""
    try:
        data = signing.loads(token, salt=_token_salt(assignment_id, task_id), max_age=TOKEN_MAX_AGE_S)
        nonce, rendered = str(data["n"]), int(data["t"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise ValidationError("This page has expired; reload it and answer again.") from None
    return nonce, max(0, int(time.time() * 1000) - rendered)


def idempotency_key(*, assignment_id: int, task_id: int, nonce: str) -> str:
    """Keyed on the assignment and task too, so no client can collide with another's key."""
    message = f"{assignment_id}:{task_id}:{nonce}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def parse_client_ms(raw: str | None) -> int | None:
    try:
        value = int(raw or "")
    except ValueError:
        return None
    return value if value >= 0 else None
