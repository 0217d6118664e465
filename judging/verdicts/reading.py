"""The reading rule every label format shares: which label mentions in a judge's text are its vote.

A format (Arena-Hard, MT-Bench, a researcher's regex) only finds *tokens*: spans of the text
that look like one of its labels, each with the verdict that label means, or None for a
label-shaped token the format does not know ("[[A>A]]", an unmapped regex capture). This module
decides which tokens the judge asserted, in three steps. Positions are kept throughout, so a
verdict can be traced back to the raw text.

1. Echoes. Prompt pieces the judge may have copied are blanked: the format's own instruction
   sentences (Arena-Hard's 'Example output: "My final verdict is tie: [[A=B]]".') and the
   caller's echo strings of 40 characters or more (whitespace- and case-insensitively).

2. Each token is a FINAL verdict, a MENTION, or a VOTE.

   FINAL, the judge's final verdict line:
     a. a verdict marker ("final verdict", "overall judgment", "verdict", ...) stands before it
        on its line and it is the first token after the marker that is not a mention; or
     b. the line before it is only a marker ("## Final Verdict", "My final verdict is:") and
        it is the first token of its line; or
     c. it is alone on the last non-empty line ("[[B>A]]", "**[[A=B]]**").
     A format may also read a bare form (Arena-Hard's "A>>B") after a marker, never elsewhere.
     Not final when the marker is talk about the format: a FORMAT cue between marker and
     token ("one of", "such as", "for example", "like", "written as", "this format"), or a
     prefix before the marker that is an example, an instruction or a counterfactual
     ("Example output:", "before", "should", "must", "if ... were / had / would").

   MENTION, no vote at all:
     - inside a quotation that holds other words ('the example "My final verdict is tie:
       [[A=B]]"'), or in a question ("Is it [[A>B]] or [[A>>B]]?");
     - in its clause (from the last , ; : ( - "but" "so" ...), right before it: a negation, a
       contrast or an example, within two words ("not [[A>>B]]", "not quite", "rather than",
       "instead of", "such as", "like", "e.g.");
     - in its clause, before it: talk about the format ("one of", "either", "for example",
       "labels", "the format", "instructions", "asked to", "supposed to", "template");
     - in its sentence, before it: a counterfactual ("unless", "whether", "would have",
       "could have", "had it ...", a sentence opening with "Had", "if" with "were", "had",
       "would", "could" or "might"; "if I had to choose" is a real choice);
     - a menu of options: a sentence that also holds a non-mention token of another meaning
       ("I will answer with [[A>B]] or [[B>A]]"), or a run of two or more adjacent lines,
       each holding a token, with two meanings or more (the prompt's five labels restated as
       a list, per-criterion labels). A final token is never part of a menu.

   VOTE: any other token.

3. Decision.
   - One final token or more: they must all mean the same, and no final token may share its
     sentence with a non-mention token of another meaning ("My final verdict is [[A>B]] or
     maybe [[A>>B]]"); then that verdict, else invalid (two final lines that disagree, as in a
     self-correction, are ambiguous).
   - No final token: all votes must mean the same -> that verdict; no vote (a missing label, a
     refusal) or votes of two meanings or more (ambiguous) -> invalid. This is Arena-Hard
     v0.1's own rule (a label counts only if every label found agrees: gen_judgment.py
     get_score), applied after the restated labels are set aside. Arena-Hard v2.0 instead takes
     the last label found, whatever came before; that reads "My final verdict is [[B>A]]. I did
     not choose [[B>>A]] because ..." as B>>A, so here the last label decides only on a final
     verdict line.
   A token the format does not know has a meaning of its own ("unknown"): when it decides,
   the output is invalid. More than ``MAX_TOKENS`` tokens is a runaway output: invalid.
   Nothing is ever guessed.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from judging.verdicts.verdict import INVALID, Verdict


@dataclass(frozen=True)
class Token:
    """A label-shaped span of the text and what it means (None: a label the format does not know)."""

    start: int
    end: int
    verdict: Verdict | None
    text: str

    @property
    def meaning(self) -> object:
        """Equal for two tokens that say the same ("[[A=B]]" and "[[B=A]]")."""
        return self.verdict if self.verdict is not None else ("unknown", self.text)


@dataclass(frozen=True)
class Reading:
    """A verdict and why: which rule decided, and the deciding token (None when invalid)."""

    verdict: Verdict
    reason: str
    token: Token | None = None


# A format's token finder (over the echo-blanked text) and its bare-form finder for a segment
# after a verdict marker: (text, start, end) -> the first bare token in text[start:end], or None.
FindTokens = Callable[[str], list[Token]]
FindBare = Callable[[str, int, int], Token | None]

_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u00a0": " "})
# Markdown that carries no words; blanked in the copy the context rules read (not ">", which is
# part of Arena-Hard's labels, except as a quote marker at the start of a line).
_MARKDOWN = re.compile(r"[*_#`|~]|(?m:^[ \t]*>+)")
# Periods that do not end a sentence.
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|vs|etc|cf|approx)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=[\s\"')\]]|$)|\n|;")
_CLAUSE_START = re.compile(r"[,;:(\u2014\u2013]|\s-\s|\b(?:but|however|yet|although|though|so)\b", re.IGNORECASE)

_NOUNS = r"(?:verdict|judge?ment|decision|answer|label|rating|result|call|choice|assessment|evaluation)"
MARKER = re.compile(rf"\b(?:(?:final|overall|ultimate)\s+{_NOUNS}|verdict)\b", re.IGNORECASE)
_HEADING = re.compile(
    rf"^\W*(?:(?:my|the|our)\s+)?(?:(?:final|overall|ultimate)\s+{_NOUNS}|verdict)(?:\s+is)?\W*$", re.IGNORECASE
)
# Talk about the format, between a marker and its label ("My final verdict will be one of ...").
_FINAL_BETWEEN = re.compile(
    r"\b(?:one\s+of|either|such\s+as|for\s+(?:example|instance)|e\.g|like|as\s+(?:in|follows)|"
    r"(?:written|given|formatted|expressed|output|stated)\s+as|in\s+the\s+form|this\s+format|"
    r"format\s+(?:is|of|requires|asks))\b",
    re.IGNORECASE,
)
# Before a marker: an example, an instruction, or a verdict that is not being given yet.
_FINAL_PREFIX = re.compile(
    r"\b(?:example|e\.g|for\s+instance|before|instruct\w*|asked|asks|supposed|required|expected|should|"
    r"must|need\s+to|needs\s+to|have\s+to|has\s+to|prompt|unless|whether)\b",
    re.IGNORECASE,
)
_IF = re.compile(r"\bif\b", re.IGNORECASE)
# "if I had to choose" is a real choice, not a counterfactual.
_COUNTERFACTUAL = re.compile(r"\b(?:were|had(?!\s+to\b)|would|could|might)\b", re.IGNORECASE)
# Right before a token, in its clause: a negation, a contrast or an example.
_LOCAL = re.compile(
    r"(?:\b(?:not|never|nor|neither|rather\s+than|instead\s+of|such\s+as|like|e\.g\.?|for\s+(?:example|instance))"
    r"|n't)(?:\W+\w+){0,2}?\W*$",
    re.IGNORECASE,
)
# In a token's clause, before it: the format is being discussed.
_FORMAT_TALK = re.compile(
    r"\b(?:one\s+of|either(?!\s+way)|for\s+(?:example|instance)|e\.g|such\s+as|examples?|template|placeholder|"
    r"labels|instruct\w*|asked\s+to|asks\s+(?:me|us|for)|supposed\s+to|required\s+to|expected\s+to|"
    r"(?:required|requested|expected|following|this|the|verdict|output|answer)\s+format|format\s+(?:is|of|requires|asks))",
    re.IGNORECASE,
)
# In a token's sentence, before it: a counterfactual ("If A had ..., I would have said [[A>B]]").
_HYPOTHETICAL = re.compile(
    r"\b(?:unless|whether|would\s+have|could\s+have|might\s+have|should\s+have|"
    r"had\s+(?:i|it|they|we|assistant|response|the|both|either|neither))\b",
    re.IGNORECASE,
)
_HAD_FIRST = re.compile(r"^\W*had\b", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]")
# More label tokens than this is a runaway generation, not a verdict (and keeps reading linear).
MAX_TOKENS = 200


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def blank_echoes(text: str, pieces: Sequence[str], *, min_length: int = 40) -> str:
    """``text`` with every copy of a piece (40+ characters, or any length if built in) blanked."""
    low = text.lower()
    for piece in sorted({p for p in pieces if len(p.strip()) >= min_length}, key=len, reverse=True):
        words = piece.translate(_QUOTES).split()
        if not words or words[0].lower() not in low:
            continue
        rx = r"\s+".join(re.escape(w) for w in words)
        for m in re.finditer(rx, text, re.IGNORECASE):
            text = _blank(text, m.start(), m.end())
    return text


class _Context:
    """Lines, sentences, clauses and quotations of one text, for the classification rules."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.plain = _MARKDOWN.sub(lambda m: " " * len(m.group()), text)
        protected = _ABBREVIATIONS.sub(lambda m: m.group().replace(".", " "), self.plain)
        self.sentence_ends = [m.end() for m in _SENTENCE_END.finditer(protected)]
        self.clause_starts = [m.end() for m in _CLAUSE_START.finditer(self.plain)]
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        ends = [s - 1 for s in self.line_starts[1:]] + [len(text)]
        self.lines = list(zip(self.line_starts, ends, strict=True))
        # for each line, the index of the nearest non-blank line before it (-1: none)
        self.previous_nonblank: list[int] = []
        last = -1
        for index, (start, end) in enumerate(self.lines):
            self.previous_nonblank.append(last)
            if self.plain[start:end].strip():
                last = index
        self.quotes = self._quotations()

    def _quotations(self) -> list[tuple[int, int]]:
        """(open, close) positions of "..." and `...` pairs, each within one line."""
        spans: list[tuple[int, int]] = []
        for char in ('"', "`"):
            marks = [m.start() for m in re.finditer(re.escape(char), self.text)]
            by_line: dict[int, list[int]] = {}
            for mark in marks:
                by_line.setdefault(self.line_of(mark), []).append(mark)
            for line_marks in by_line.values():
                spans.extend(zip(line_marks[0::2], line_marks[1::2], strict=False))
        return sorted(spans)

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.line_starts, pos) - 1

    def sentence(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.sentence_ends, pos)
        start = self.sentence_ends[i - 1] if i > 0 else 0
        end = self.sentence_ends[i] if i < len(self.sentence_ends) else len(self.text)
        return start, end

    def clause_start(self, pos: int) -> int:
        i = bisect.bisect_right(self.clause_starts, pos) - 1
        return max(self.clause_starts[i] if i >= 0 else 0, self.sentence(pos)[0])

    def _quote_around(self, pos: int) -> tuple[int, int] | None:
        # quotations never nest or overlap within one character type; check the nearest few
        i = bisect.bisect_left(self.quotes, (pos, -1))
        for open_, close in self.quotes[max(0, i - 2) : i]:
            if open_ < pos < close:
                return open_, close
        return None

    def quoted_with_words(self, start: int, end: int) -> bool:
        """Whether [start, end) sits in a quotation that holds more than it."""
        span = self._quote_around(start)
        if span is None or end > span[1]:
            return False
        rest = self.plain[span[0] + 1 : start] + self.plain[end : span[1]]
        return bool(_WORDS.search(rest))

    def in_quotes(self, pos: int) -> bool:
        return self._quote_around(pos) is not None


def _mention_reason(ctx: _Context, token: Token) -> str:
    """Why a token casts no vote on its own ("" when nothing says so)."""
    if ctx.quoted_with_words(token.start, token.end):
        return "quoted"
    s0, s1 = ctx.sentence(token.start)
    if ctx.plain[s0:s1].rstrip(" \t\"')]").endswith("?"):
        return "question"
    clause = ctx.plain[ctx.clause_start(token.start) : token.start]
    if _LOCAL.search(clause[-60:]):
        return "negated or an example"
    if _FORMAT_TALK.search(clause):
        return "format talk"
    prefix = ctx.plain[s0 : token.start]
    if (
        _HYPOTHETICAL.search(prefix)
        or _HAD_FIRST.match(prefix)
        or (_IF.search(prefix) and _COUNTERFACTUAL.search(prefix))
    ):
        return "counterfactual"
    return ""


def _final(ctx: _Context, token: Token, tokens: list[Token], mentions: dict[int, str]) -> bool:
    """Whether ``token`` is a final verdict line's label (rules 2a-2c); ``tokens`` sorted by start."""
    text = ctx.plain
    line = ctx.line_of(token.start)
    line_start, line_end = ctx.lines[line]
    starts = [t.start for t in tokens]
    on_line = tokens[bisect.bisect_left(starts, line_start) : bisect.bisect_left(starts, token.start)]
    # a. a marker before it on its line, with no other (non-mention) token between
    for marker in reversed(list(MARKER.finditer(text, line_start, token.start))):
        if ctx.in_quotes(marker.start()):
            continue
        between = [t for t in on_line if marker.end() <= t.start and id(t) not in mentions]
        if between:
            return False
        return not _final_talk(text[line_start : marker.start()], text[marker.end() : token.start])
    # b. the line before is only a marker (a heading), and this is the first token of its line
    earlier = [t for t in on_line if id(t) not in mentions]
    previous = ctx.previous_nonblank[line]
    if previous >= 0 and not earlier and _HEADING.match(text[slice(*ctx.lines[previous])]):
        return True
    # c. alone on the last non-empty line
    if text[line_end:].strip() == "":
        rest = text[line_start : token.start] + text[token.end : line_end]
        return not _WORDS.search(rest)
    return False


def _final_talk(prefix: str, between: str) -> bool:
    """Whether a marker is talk about the format rather than the judge's verdict."""
    if _FINAL_BETWEEN.search(between) or _FINAL_PREFIX.search(prefix):
        return True
    return bool(_IF.search(prefix) and _COUNTERFACTUAL.search(prefix + between))


def _bare_finals(ctx: _Context, tokens: list[Token], find_bare: FindBare) -> list[Token]:
    """Bare labels right after a marker (or on the line after a marker heading) with no token."""
    found: list[Token] = []
    token_lines = {ctx.line_of(t.start) for t in tokens}
    heading_lines = {i for i, (start, end) in enumerate(ctx.lines) if _HEADING.match(ctx.plain[start:end])}
    for index, (start, end) in enumerate(ctx.lines):
        if index in token_lines:
            continue
        segment_start: int | None = None
        markers = [m for m in MARKER.finditer(ctx.plain, start, end) if not ctx.in_quotes(m.start())]
        if markers:
            segment_start = markers[-1].end()
            if _final_talk(ctx.plain[start : markers[-1].start()], ctx.plain[segment_start:end]):
                continue
        elif ctx.previous_nonblank[index] in heading_lines:
            segment_start = start
        if segment_start is not None:
            bare = find_bare(ctx.text, segment_start, end)
            if bare is not None:
                found.append(bare)
    return found


def _menus(ctx: _Context, candidates: list[Token]) -> set[int]:
    """ids of candidate tokens that are part of a menu of options (rule 2, last item)."""
    menu: set[int] = set()
    by_sentence: dict[tuple[int, int], list[Token]] = {}
    for t in candidates:
        by_sentence.setdefault(ctx.sentence(t.start), []).append(t)
    for group in by_sentence.values():
        if len({t.meaning for t in group}) > 1:
            menu.update(id(t) for t in group)
    # runs of adjacent lines that each hold a candidate
    by_line: dict[int, list[Token]] = {}
    for t in candidates:
        by_line.setdefault(ctx.line_of(t.start), []).append(t)
    run: list[int] = []
    for line in sorted(by_line) + [-2]:
        if run and line == run[-1] + 1:
            run.append(line)
            continue
        if len(run) >= 2:
            group = [t for i in run for t in by_line[i]]
            if len({t.meaning for t in group}) > 1:
                menu.update(id(t) for t in group)
        run = [line]
    return menu


def read(
    raw: str,
    find_tokens: FindTokens,
    *,
    echo_strings: Sequence[str] = (),
    built_in_echoes: Sequence[str] = (),
    find_bare: FindBare | None = None,
) -> Reading:
    """The judge's verdict in ``raw`` under the shared rule (see the module docstring)."""
    text = raw.translate(_QUOTES)
    text = blank_echoes(text, built_in_echoes, min_length=1)
    text = blank_echoes(text, echo_strings)
    ctx = _Context(text)
    tokens = sorted(find_tokens(text), key=lambda t: t.start)
    if find_bare is not None:
        tokens = sorted(tokens + _bare_finals(ctx, tokens, find_bare), key=lambda t: t.start)
    if not tokens:
        return Reading(INVALID, "no label")
    if len(tokens) > MAX_TOKENS:
        return Reading(INVALID, f"more than {MAX_TOKENS} labels: a runaway output, not a verdict")

    mentions = {id(t): reason for t in tokens if (reason := _mention_reason(ctx, t))}
    finals = [t for t in tokens if id(t) not in mentions and _final(ctx, t, tokens, mentions)]
    final_ids = {id(t) for t in finals}
    candidates = [t for t in tokens if id(t) not in mentions and id(t) not in final_ids]

    if finals:
        for f in finals:
            sentence = ctx.sentence(f.start)
            if any(ctx.sentence(t.start) == sentence and t.meaning != f.meaning for t in candidates):
                return Reading(INVALID, "ambiguous final verdict line")
        if len({t.meaning for t in finals}) > 1:
            return Reading(INVALID, "final verdict lines disagree")
        return _decided(finals[-1], "final verdict line")

    menu = _menus(ctx, candidates)
    votes = [t for t in candidates if id(t) not in menu]
    if not votes:
        return Reading(INVALID, "labels only restated or listed as options" if candidates or mentions else "no label")
    if len({t.meaning for t in votes}) > 1:
        return Reading(INVALID, "ambiguous: labels of different meaning and no final verdict line")
    return _decided(votes[-1], "the only label asserted")


def _decided(token: Token, reason: str) -> Reading:
    if token.verdict is None:
        return Reading(INVALID, f"unknown label {token.text!r}", token)
    return Reading(token.verdict, reason, token)
