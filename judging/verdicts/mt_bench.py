"""``mt-bench``: MT-Bench's pairwise labels: [[A]] the answer shown first, [[B]] the second, [[C]] a tie.

Tolerated: spaces inside the brackets ("[[ A ]]") and lower case ("[[b]]"). Without the double
brackets a label counts only right after a final verdict marker, as "[B]" or as the only thing
left on the line ("Final verdict: B"); a bare letter in running text is an ordinary word.
Any other single letter in double brackets ("[[D]]") is a label this format does not know:
invalid if it decides. FastChat's own scorer takes [[A]] if present anywhere, else [[B]], else
[[C]]: a judge restating the instruction ('"[[A]]" if assistant A is better, ...') is then read
as voting A. Here the shared rule of ``judging.verdicts.reading`` decides instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from annotations.vocabulary import JudgeSlot
from judging.verdicts.base import Format
from judging.verdicts.reading import Reading, Token, read
from judging.verdicts.verdict import Verdict
from judging.vocabulary import TIE, VerdictFormat

LABELS: dict[str, Verdict] = {"A": Verdict(JudgeSlot.FIRST), "B": Verdict(JudgeSlot.SECOND), "C": Verdict(TIE)}
# MT-Bench's pairwise judge prompts (FastChat judge_prompts.jsonl, pair-v2 and its variants) end
# with this sentence; a copy of it is blanked.
BUILT_IN_ECHOES = (
    'output your final verdict by strictly following this format: "[[A]]" if assistant A is better, '
    '"[[B]]" if assistant B is better, and "[[C]]" for a tie.',
)

_BRACKETED = re.compile(r"\[\[\s*([A-Za-z])\s*\]\]")
_SINGLE = re.compile(r"(?<!\[)\[([ABC])\](?!\])")
_ALONE = re.compile(r"^[^\w]*?\b([ABC])\b[^\w]*$")


def find_tokens(text: str) -> list[Token]:
    return [Token(m.start(), m.end(), LABELS.get(m.group(1).upper()), m.group()) for m in _BRACKETED.finditer(text)]


def find_bare(text: str, start: int, end: int) -> Token | None:
    m = _SINGLE.search(text, start, end)
    if m is None:
        m = _ALONE.match(text[start:end])
        if m is None:
            return None
        return Token(start + m.start(1), start + m.end(1), LABELS[m.group(1)], m.group(1))
    return Token(m.start(), m.end(), LABELS[m.group(1)], m.group())


class MTBenchFormat(Format):
    name = VerdictFormat.MT_BENCH

    def read(self, raw: str, *, labels: Sequence[str] = (), echo_strings: Sequence[str] = ()) -> Reading:
        return read(raw, find_tokens, echo_strings=echo_strings, built_in_echoes=BUILT_IN_ECHOES, find_bare=find_bare)
