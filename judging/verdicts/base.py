"""What every verdict format offers: a name, what its labels can say, and ``read``/``parse``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from judging.verdicts.reading import Reading
from judging.verdicts.verdict import Verdict


class Format(ABC):
    """A verdict format: the labels a prompt asks for and how a judge's raw text is read."""

    name: ClassVar[str]
    # What the format's labels can say (a regex format's depend on its label map).
    has_ties: bool = True
    has_strength: bool = False

    @abstractmethod
    def read(self, raw: str, *, labels: Sequence[str] = (), echo_strings: Sequence[str] = ()) -> Reading:
        """The verdict in ``raw`` and the rule that decided it.

        ``labels``: the two answer labels the prompt used (only the cobbler format needs them).
        ``echo_strings``: pieces of the prompt a judge may copy back; copies of 40+ characters
        are blanked before reading, so a label inside an echoed instruction never votes.
        """

    def parse(self, raw: str, *, labels: Sequence[str] = (), echo_strings: Sequence[str] = ()) -> Verdict:
        """The verdict in ``raw`` (``INVALID`` when the judge gave none, or an ambiguous one)."""
        return self.read(raw, labels=labels, echo_strings=echo_strings).verdict
