"""The words humans and judges share: conditions, presentations and slots.

Every value here is spelled once. Code elsewhere names the member (``Condition.ORDER``), never
the string; ``tests/foundation/test_vocabulary.py`` fails on a stray literal. The members are
``str`` subclasses, so they compare, hash, format and serialise as their values: a report key
``Condition.ORDER`` is the JSON key ``"order"``.

The crowd and the judges name the two places an answer can stand differently: a worker sees
"System A" and "System B" (``CrowdChoice``), a judge prompt has a first and a second slot
(``JudgeSlot``). ``JUDGE_SLOT_OF`` and ``CROWD_CHOICE_OF`` are the one translation between them.
"""

from __future__ import annotations

from django.db import models


class Condition(models.TextChoices):
    """Presentation conditions shared by crowd tasks and judge calls.

    Humans and judges see the *same* condition ids, so "human bias vs judge bias on the same
    pairs" is a join, not a project.
    """

    RANKING = "ranking", "Ranking (N answers, best first)"
    PLAIN = "plain", "Plain pair"
    ORDER = "order", "Order (pair shown twice, positions swapped)"
    BANDWAGON = "bandwagon", "Bandwagon (X% of people prefer ...)"
    ATTENTIONAL = "attentional", "Attentional (irrelevant sentence)"
    COMPASSION = "compassion", "Compassion (real model names)"
    FREQUENCY = "frequency", "Frequency (one system listed three times)"
    SELECTIVE = "selective", "Selective (stated expectation)"
    AUTHORITY = "authority", "Authority (fabricated citation on one answer)"
    VERBOSITY = "verbosity", "Verbosity (one answer padded)"
    REFINEMENT = "refinement", "Refinement (one answer called refined)"
    IDENTITY = "identity", "Identity (one answer attributed to a group)"
    SENTIMENT = "sentiment", "Sentiment (one answer rewritten in a confident, cheerful tone)"
    COT = "cot", "Chain of thought (the order run, judged after thinking step by step)"


# The biases with no judge calls of their own, read from the order run (egocentric: preferring
# one's own answer; salience: the longer one).
DERIVED_FROM = {"egocentric": Condition.ORDER, "salience": Condition.ORDER}


class RewriteKind(models.TextChoices):
    """What a registered model's rewrite of an answer changes (``ResponseRewrite``): the bias it
    serves is the condition of the same name."""

    SENTIMENT = "sentiment", "A more confident, cheerful tone, the content unchanged"


class Arrangement(models.TextChoices):
    """Which canonical response a crowd task puts in slot A ("System A"): its arrangement.

    A judge call's arrangement is its ``slot1_response``; its *presentation* (1 or 2) says which of a
    pair's two showings it is, as a crowd task's twin does.
    """

    AB = "ab", "response_a in slot A"
    BA = "ba", "response_b in slot A"


class CrowdChoice(models.TextChoices):
    """What a worker chose on a pairwise task."""

    A = "A", "System A"
    B = "B", "System B"
    TIE = "T", "No preference"


class JudgeSlot(models.TextChoices):
    """The slot a judge chose: the first answer of its prompt ("System Star") or the second."""

    FIRST = "first", "First slot"
    SECOND = "second", "Second slot"


# The one translation between the crowd's letters and the judges' slots. A worker's "A" is the
# answer shown first on the page, as a judge's "first" is the answer shown first in its prompt.
JUDGE_SLOT_OF: dict[str, JudgeSlot] = {CrowdChoice.A: JudgeSlot.FIRST, CrowdChoice.B: JudgeSlot.SECOND}
CROWD_CHOICE_OF: dict[str, str] = {slot: letter for letter, slot in JUDGE_SLOT_OF.items()}


# A slot named either way ("A"/"B" or "first"/"second": cues are stored both ways), as one side names it.
AS_CROWD_CHOICE: dict[str, str] = {**{letter: letter for letter in JUDGE_SLOT_OF}, **CROWD_CHOICE_OF}
AS_JUDGE_SLOT: dict[str, str] = {**JUDGE_SLOT_OF, **{slot: slot for slot in CROWD_CHOICE_OF}}


def arrangement_of(slot1_is_a: bool) -> Arrangement:
    """A judge call's arrangement in crowd terms: response_a first is the crowd's "ab"."""
    return Arrangement.AB if slot1_is_a else Arrangement.BA
