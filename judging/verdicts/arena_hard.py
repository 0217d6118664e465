"""``arena-hard``: Arena-Hard-Auto's five labels, "Assistant A" being the answer shown first.

    [[A>>B]] first, strong    [[A>B]] first, slight    [[A=B]] tie
    [[B>A]]  second, slight   [[B>>A]] second, strong

Also read, as Arena-Hard's own scorer reads them (show_result.py maps all ten): the mirrored
forms [[B<<A]], [[B<A]], [[A<B]], [[A<<B]] and [[B=A]]. Tolerated, because real judges write
them: spaces inside the brackets ("[[ A > B ]]"), lower case ("[[a>b]]"; Arena-Hard v2
upper-cases the judgment before matching too), and full-width or "≫" signs. Without the
double brackets a label counts only right after a final verdict marker ("My final verdict is
A>>B.", "Final verdict: [B>A]"), never in running text, where "A>B" is ordinary notation.
Any other double-bracketed run of A, B, <, >, = ("[[A>A]]", "[[A>B>A]]") is a label this format
does not know: invalid if it decides. Which labels count is the shared rule of
``judging.verdicts.reading``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from annotations.vocabulary import JudgeSlot
from judging.verdicts.base import Format
from judging.verdicts.reading import Reading, Token, read
from judging.verdicts.verdict import Verdict
from judging.vocabulary import TIE, Strength, VerdictFormat

FIRST_STRONG = Verdict(JudgeSlot.FIRST, Strength.STRONG)
FIRST_SLIGHT = Verdict(JudgeSlot.FIRST, Strength.SLIGHT)
SECOND_SLIGHT = Verdict(JudgeSlot.SECOND, Strength.SLIGHT)
SECOND_STRONG = Verdict(JudgeSlot.SECOND, Strength.STRONG)
LABELS: dict[str, Verdict] = {
    "A>>B": FIRST_STRONG,
    "A>B": FIRST_SLIGHT,
    "A=B": Verdict(TIE),
    "B>A": SECOND_SLIGHT,
    "B>>A": SECOND_STRONG,
    # the mirrored spellings
    "B<<A": FIRST_STRONG,
    "B<A": FIRST_SLIGHT,
    "B=A": Verdict(TIE),
    "A<B": SECOND_SLIGHT,
    "A<<B": SECOND_STRONG,
}
# The prompt's own label-bearing sentence (Arena-Hard-Auto's judge system prompt); a copy of it is
# blanked. The five instruction lines are left to the menu rule: one of them alone is a real vote.
BUILT_IN_ECHOES = ('Example output: "My final verdict is tie: [[A=B]]".',)

_SIGNS = str.maketrans({"\uff1e": ">", "\uff1c": "<", "\uff1d": "=", "\u226b": ">>", "\u226a": "<<"})
_BRACKETED = re.compile(r"\[\[\s*([^\[\]\n]{1,24}?)\s*\]\]")
_LABEL_CHARS = re.compile(r"^[AB<>=]+$")
_BARE = re.compile(r"(?<![\w<>=\[])\[?\s*([AB]\s*(?:>>|<<|[<>=])\s*[AB])\s*\]?(?![\w<>=\]])")


def _meaning(content: str) -> tuple[bool, Verdict | None]:
    """(is a label of this format's shape, what it means or None if unknown)."""
    compact = re.sub(r"\s+", "", content.translate(_SIGNS)).upper()
    if not _LABEL_CHARS.match(compact):
        return False, None
    return True, LABELS.get(compact)


def find_tokens(text: str) -> list[Token]:
    tokens = []
    for m in _BRACKETED.finditer(text):
        shaped, verdict = _meaning(m.group(1))
        if shaped:
            tokens.append(Token(m.start(), m.end(), verdict, m.group()))
    return tokens


def find_bare(text: str, start: int, end: int) -> Token | None:
    m = _BARE.search(text, start, end)
    if m is None:
        return None
    _, verdict = _meaning(m.group(1))
    return Token(m.start(), m.end(), verdict, m.group().strip())


class ArenaHardFormat(Format):
    name = VerdictFormat.ARENA_HARD
    has_strength = True

    def read(self, raw: str, *, labels: Sequence[str] = (), echo_strings: Sequence[str] = ()) -> Reading:
        return read(raw, find_tokens, echo_strings=echo_strings, built_in_echoes=BUILT_IN_ECHOES, find_bare=find_bare)
