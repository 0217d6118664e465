"""``cobbler``: the platform's own prompt ("System Star is better"), read by the robust parser.

Unchanged behaviour: ``judging.parsers.parse("robust", ...)`` decides; a tie or a refusal is
invalid (the CoBBLEr prompt offers no tie), and there is no strength.
"""

from __future__ import annotations

from collections.abc import Sequence

from judging import parsers
from judging.verdicts.base import Format
from judging.verdicts.reading import Reading
from judging.verdicts.verdict import INVALID, Verdict
from judging.vocabulary import Parser, VerdictFormat


class CobblerFormat(Format):
    name = VerdictFormat.COBBLER
    has_ties = False

    def __init__(self, parser: str = Parser.ROBUST) -> None:
        self.parser = parser

    def read(self, raw: str, *, labels: Sequence[str] = (), echo_strings: Sequence[str] = ()) -> Reading:
        if len(labels) != 2:
            raise ValueError("the cobbler format reads a verdict against the prompt's two answer labels")
        slot = parsers.parse(self.parser, raw, labels=labels, echo_strings=echo_strings)
        if slot is None:
            return Reading(INVALID, f"the {self.parser} parser found no verdict")
        return Reading(Verdict(slot), f"the {self.parser} parser")
