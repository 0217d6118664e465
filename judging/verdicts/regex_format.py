"""``regex``: a researcher's own label format, from a validated spec (``regex_spec``).

Every match of the pattern is a token; its captured text, stripped, is looked up in the label
map (an unmapped text is a label this format does not know). Which tokens count is the shared
rule of ``judging.verdicts.reading``, as for the built-in formats; there is no bare form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judging.verdicts.base import Format
from judging.verdicts.reading import MAX_TOKENS, Reading, Token, read
from judging.verdicts.regex_spec import RegexSpec, load_spec
from judging.vocabulary import VerdictFormat


class RegexFormat(Format):
    name = VerdictFormat.REGEX

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec: RegexSpec = load_spec(spec)
        verdicts = set(self.spec.labels.values())
        self.has_ties = any(v.is_tie for v in verdicts)
        self.has_strength = any(v.strength is not None for v in verdicts)

    def find_tokens(self, text: str) -> list[Token]:
        tokens: list[Token] = []
        for m in self.spec.pattern.finditer(text):
            captured = m.group(1)
            if captured is None or not captured.strip() or m.end() == m.start():
                continue
            tokens.append(Token(m.start(), m.end(), self.spec.lookup(captured), captured.strip()))
            if len(tokens) > MAX_TOKENS:
                break
        return tokens

    def read(self, raw: str, *, labels: Sequence[str] = (), echo_strings: Sequence[str] = ()) -> Reading:
        return read(raw, self.find_tokens, echo_strings=echo_strings)
