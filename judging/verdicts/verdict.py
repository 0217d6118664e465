"""A parsed verdict: which slot a judge chose (or a tie), how strongly, or nothing (invalid)."""

from __future__ import annotations

from dataclasses import dataclass

from annotations.vocabulary import JudgeSlot
from judging.vocabulary import TIE, Strength

SLOTS = (JudgeSlot.FIRST, JudgeSlot.SECOND, TIE)


@dataclass(frozen=True)
class Verdict:
    """``slot``: ``"first"`` / ``"second"`` (the answer shown first / second), ``"tie"``, or None
    for an invalid output. ``strength``: ``"strong"`` / ``"slight"`` where the format grades its
    preference (Arena-Hard's ``>>`` / ``>``), else None; a tie and an invalid output have none.
    """

    slot: str | None = None
    strength: str | None = None

    def __post_init__(self) -> None:
        if self.slot is not None and self.slot not in SLOTS:
            raise ValueError(f"a verdict's slot is one of {', '.join(SLOTS)} or None, not {self.slot!r}")
        if self.strength is not None:
            if self.strength not in Strength.values:
                raise ValueError(f"a verdict's strength is one of {', '.join(Strength.values)} or None")
            if self.slot not in (JudgeSlot.FIRST, JudgeSlot.SECOND):
                raise ValueError("only a verdict for one slot has a strength (not a tie, not an invalid output)")

    @property
    def valid(self) -> bool:
        return self.slot is not None

    @property
    def is_tie(self) -> bool:
        return self.slot == TIE

    @property
    def choice(self) -> str | None:
        """The slot in the cobbler parsers' terms: ``"first"`` / ``"second"``, None for a tie too."""
        return self.slot if self.slot in (JudgeSlot.FIRST, JudgeSlot.SECOND) else None

    def as_json(self) -> dict[str, str | None] | None:
        """``{"slot", "strength"}``, or None for an invalid output (the corpora's ``expected``)."""
        return {"slot": self.slot, "strength": self.strength} if self.valid else None


INVALID = Verdict()
