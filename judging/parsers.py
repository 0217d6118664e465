"""Raw judge text -> the slot it chose ("first" / "second") or None (invalid).

Two parsers:
- ``paper``: the authors' harness exactly (docs/methods.md, 'Parser': delete echoed prompt
  pieces, cut after the first "Response:", strip, first 30 characters, first
  case-insensitive label match).
- ``robust`` (default): reads the judge's OWN verdict wherever it is: echoed prompt
  pieces and restated cues ("although 85% of people believe that System Star is
  better, ...") cast no vote, explicit verdict forms ("X is better", "Winner: X", JSON,
  a bold verdict line) outrank descriptive comparisons ("X is better formatted"), a
  negation ("I disagree that X is better") never counts for X, and a tie, a refusal or
  both labels asserted in the deciding sentence give None. The rules are spelled out
  above ``parse_robust``; tests/judging/parser_corpus.jsonl is the hand-labelled corpus
  they are held to (benchmarks/parser_accuracy.py reports both parsers on it).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from annotations.vocabulary import JudgeSlot
from judging.vocabulary import RUNNABLE_PARSERS, Parser

Choice = str | None  # "first" | "second" | None
PARSERS = RUNNABLE_PARSERS


def parse(name: str, raw: str, *, labels: Sequence[str], echo_strings: Sequence[str] = ()) -> Choice:
    """Dispatch by parser name; ValueError for an unknown one."""
    try:
        fn = _PARSER_FUNCTIONS[name]
    except KeyError:
        raise ValueError(f"unknown parser {name!r}; use one of {', '.join(PARSERS)}") from None
    return fn(raw, labels=labels, echo_strings=echo_strings)


def parse_paper(raw: str, *, labels: Sequence[str], echo_strings: Sequence[str] = ()) -> Choice:
    text = raw
    for piece in echo_strings:
        if piece:
            text = text.replace(piece, "")
    if "Response:" in text:
        text = text.split("Response:", 1)[1]
    window = text.strip()[:30]
    pattern = "|".join(re.escape(label) for label in labels)
    match = re.search(pattern, window, flags=re.IGNORECASE)
    if not match:
        return None
    found = match.group(0).lower()
    return JudgeSlot.FIRST if found == labels[0].lower() else JudgeSlot.SECOND


# --- robust -----------------------------------------------------------------------
#
# The judge's own verdict, read in five steps (every step keeps character positions, so a
# vote can be traced back to the raw text):
#  1. a JSON object with a winner-like key decides outright (a tie/none value is invalid);
#  2. echoed prompt pieces (the pair block, the question, the format line, every cue
#     sentence) are blanked, and for a completion judge that echoed its prompt only the
#     text after the last "Response:" is read;
#  3. every label mention that is part of a verdict form becomes a vote with a rank:
#       3 marked   "Verdict: X", "Winner: X", "Final answer: X is better", a bold verdict
#                  ("**X is better**"), or a last line that is only a label;
#       2 explicit "X is better" (unqualified), "the better response is X", "I choose X",
#                  "X wins", "X is worse" (a vote for the other), a label-only first line;
#       1 weak     descriptive or qualified comparisons ("X is more accurate", "X is better
#                  formatted"), hedged ones ("at first glance X is better", "X might be
#                  better"), negations ("I disagree that X is better" votes for the other);
#     a mention attributed to somebody else (the bandwagon cue restated: "85% of people
#     believe that X is better", "some might say X is better", "the claim that ...") or
#     inside a restated distractor ("X likes to eat apples") casts no vote at all, unless
#     the judge makes it its own ("I agree with the 85%: X is better");
#  4. the last vote of the highest rank present is the verdict, unless a tie/refusal
#     statement comes after it or the verdict's sentence also casts a vote of that rank for
#     the other label (both asserted: ambiguous) - then the answer is invalid;
#  5. a first or last sentence that is only a label ("Star", "System Square.") votes too
#     (explicit first, marked last), so a bare answer is read; nothing else is guessed.

OTHER = {JudgeSlot.FIRST: JudgeSlot.SECOND, JudgeSlot.SECOND: JudgeSlot.FIRST}
MARKED, EXPLICIT, WEAK = 3, 2, 1

_ADV = (
    r"(?:(?:clearly|slightly|much|far|definitely|significantly|considerably|marginally|somewhat|"
    r"a bit|a little|noticeably|certainly|obviously|genuinely|substantially|still|actually|indeed|"
    r"simply|just|undoubtedly|overall|the|a|clear|decidedly|plainly|evidently|easily|by far)\s+)*"
)
_BE = (
    r"(?:is|was|'s|’s|seems(?:\s+to\s+be)?|seemed|appears(?:\s+to\s+be)?|looks|feels|reads|would be|"
    r"will be|remains|comes across as|stands out as|emerges as|turns out to be|ends up)"
)
_POSS = r"(?:(?:'s|’s)(?:\s+(?:response|answer|reply|output|version|text|one|submission))?)?"
_HEAD_POS = (
    r"(?:better|best|superior|preferable|preferred|winner|winning\s+(?:response|answer|one)|"
    r"stronger|more\s+coherent|higher[- ]quality|stronger|victor)"
)
_HEAD_NEG = r"(?:worse|worst|inferior|weaker|weakest|less\s+coherent|loser|lower[- ]quality|poorer)"
_NOUN = r"(?:response|answer|one|choice|option|system|model|reply|output|pick|submission|of\s+the\s+two)"
# What may follow "X is better" for it to stay a verdict (anything else qualifies it:
# "better formatted", "better for beginners", "better at soccer").
_ALLOW = re.compile(
    r"(?:$|[.!?,;:()\]\"'”’—–*\n]|-\s|and\b|or\b|overall\b|here\b|because\b|since\b|as\s+(?:it|its|the|a|this)\b|"
    r"given\b|due\b|thanks\b|considering\b|hands\s+down\b|in\s+the\s+end\b|on\s+balance\b|"
    r"all\s+things\s+considered\b|by\s+(?:far|a\s+(?:wide|large|small|slight|clear|narrow)\s+margin)\b|"
    r"in\s+(?:this|that|every|all|most|nearly\s+every|almost\s+every)\s+(?:case|respects?|ways?|regards?|instance|comparison)\b|"
    r"for\s+(?:this|the|that)\s+(?:instruction|question|task|prompt|query|request|comparison|user|purpose)\b|"
    r"in\s+my\s+(?:view|opinion|assessment|judge?ment|estimation)\b|"
    r"in\s+terms\s+of\s+(?:coherence|overall\s+quality|quality|the\s+(?:instruction|reference))\b|"
    r"(?:at|in)\s+(?:following|addressing|answering|meeting)\s+the\s+(?:instruction|question|reference|task)\b|"
    r"with\s+respect\s+to\s+(?:the\s+)?(?:reference|instruction)\b|"
    r"(?:of|between)\s+the\s+two\b|(?:than|over|to)\b|in\s+(?:coherence|quality)\b|"
    r"(?:\d+(?:\.\d+)?\s*(?:/|out\s+of)\s*\d+))",
    re.IGNORECASE,
)
_TAIL_NOUN = re.compile(rf"[ \t]*{_NOUN}\b", re.IGNORECASE)
_TAIL_SOFT = re.compile(
    r"[ \t]*(?:here|overall|in\s+this\s+case|of\s+the\s+two|,?\s*in\s+my\s+(?:view|opinion))\b", re.IGNORECASE
)

# Somebody else's claim (the bandwagon cue and its paraphrases, quoted claims, the prompt).
_ATTR = re.compile(
    r"(?:\b(?:people|persons|users|respondents|voters|raters|annotators|humans|readers|others|everyone|"
    r"everybody|crowd|majority|consensus|popular|popularity|survey|poll|percent|per\s+cent|someone|"
    r"supposedly|reportedly|allegedly|purportedly|claim|claims|claimed|claiming|assertion|statement|"
    r"according\s+to|the\s+(?:prompt|note|hint|cue|context|question)|you\s+(?:said|say|mentioned|claim)|"
    r"(?:most|many|some|several|few)\s+(?:would|might|may|could|will|think|believe|say|prefer|argue|feel|folks)|"
    r"one\s+(?:could|might|may)|it\s+(?:could|might|may)\s+be\s+argued|it\s+is\s+(?:said|claimed|believed|"
    r"suggested)|(?:they|he|she)\s+(?:think|believe|say|claim|prefer|feel)|idea\s+that|notion\s+that|"
    r"belief\s+that|premise\s+that|suggestion\s+that|view\s+that|told)\b|\d\s*%|\d+\s*percent|"
    # the distractor sentences and their paraphrases
    r"\b(?:apples?|oranges?|handstands?|soccer|basketball|europe|eats?|eating)\b)",
    re.IGNORECASE,
)
_ATTR_AFTER = re.compile(
    r"^[^A-Za-z\n]*(?:according\s+to|as\s+(?:\d+\s*%|many|most|some|the\s+majority|people|others)|or\s+so\b|"
    r"(?:say|says|said|claim|claims|believe|believes|think|thinks)\s+(?:the\s+)?(?:\d+\s*%|many|most|"
    r"some|majority|people|others|prompt|note|crowd)|by\s+(?:\d+\s*%|most|many|the\s+majority|people|others|"
    r"the\s+crowd)|if\s+you\s+ask\s+(?:most|the)|at\s+least\s+according)",
    re.IGNORECASE,
)
# A hedge or concession: the clause does not assert the verdict.
_OWN = re.compile(
    r"\b(?:(?:i|we)\s+(?:fully\s+|also\s+|do\s+|would\s+|have\s+to\s+|must\s+)?(?:agree|concur|share\s+"
    r"(?:that|this)\s+view)\b(?!\s+that)|(?:they|you|the\s+majority)\s+(?:are|were|is)\s+(?:right|correct)|"
    r"rightly|correctly)",
    re.IGNORECASE,
)
_CONC = re.compile(
    r"\b(?:although|though|even\s+though|while|whilst|whereas|despite|in\s+spite\s+of|even\s+if|granted|"
    r"admittedly|at\s+first(?:\s+glance|\s+sight)?|initially|on\s+the\s+surface|superficially|might|may|"
    r"could|perhaps|possibly|maybe|arguably|seemingly|in\s+some\s+(?:ways|respects)|in\s+(?:a|one)\s+"
    r"(?:way|sense|respect)|whether|unless|one\s+might\s+think)\b",
    re.IGNORECASE,
)
_NEG = re.compile(
    r"\b(?:not|never|disagree[sd]?|doubt|dispute|reject|deny|wrong|false|incorrect|mistaken|unconvinced|"
    r"nor|hardly|no\s+reason|no\s+evidence|nothing\s+(?:suggests|indicates|supports)|cannot\s+agree|"
    r"fail\s+to\s+see|rather\s+than|instead\s+of|unlike|contrary\s+to|against\s+the\s+(?:claim|idea|"
    r"notion)|is\s+not\s+the\s+case|isn't\s+true)\b|n[’']t\b",
    re.IGNORECASE,
)
_NEG_OK = re.compile(  # negative words that do not negate ("no doubt System Square is better")
    r"\b(?:no\s+doubt|without\s+(?:a\s+)?doubt|not\s+only|not\s+just|not\s+surprising(?:ly)?|"
    r"not\s+(?:hard|difficult)\s+to\s+see|can(?:no|['’])t\s+help\s+but|no\s+question|undoubtedly|doubtless)\b",
    re.IGNORECASE,
)
_CONCLUDE = re.compile(
    r"^\W*(?:overall|therefore|thus|so|hence|in\s+conclusion|in\s+summary|to\s+summari[sz]e|to\s+sum\s+up|"
    r"ultimately|all\s+in\s+all|on\s+balance|in\s+the\s+end|all\s+things\s+considered|to\s+conclude|"
    r"finally|in\s+short|in\s+sum|bottom\s+line|conclusion|summary|as\s+a\s+result)\b[^,.;:]*[,:]?\s*"
    r"(?:(?:i|we)\s+(?:think|believe|find|feel|would\s+say|'d\s+say|’d\s+say|conclude|judge)\s+(?:that\s+)?)?$",
    re.IGNORECASE,
)
_MARKER = re.compile(
    r"(?:^|[\s(\[])(?:(?:final|overall|my|the)\s+)*(?:verdict|answer|winner|choice|decision|pick|preference|"
    r"selection|judge?ment|recommendation|result|conclusion|evaluation|output|response|better\s+(?:response|"
    r"answer|system|model)|best\s+(?:response|answer)|preferred\s+(?:response|system|model|answer)|"
    r"winning\s+(?:response|system|model))\s*(?:\([^)]*\)\s*)?(?:is\s*)?[:=\-–—]+\s*(?:the\s+)?"
    r"(?:(?:response|answer)\s+(?:from|of|by)\s+)?$",
    re.IGNORECASE,
)
_TIE = re.compile(
    r"\b(?:(?:it|this|that)(?:'s|’s|\s+is|\s+was)\s+(?:a\s+|an?\s+exact\s+|a\s+dead\s+)?(?:tie|draw)|"
    r"(?:i\s+)?(?:call|declare)\s+(?:it\s+)?a\s+(?:tie|draw)|(?:verdict|result|winner|answer)\s*[:=\-]\s*"
    r"(?:tie|draw|none|neither|both)|^\W*tie\W*$|tied|"
    r"(?:both|the\s+two)(?:\s+(?:responses|answers|systems|models|of\s+them))?\s+(?:are|were|seem|appear)\s+"
    r"(?:(?:about|roughly|essentially|basically|more\s+or\s+less)\s+)?(?:equally\s+(?:good|bad|coherent|"
    r"strong|weak|valid|acceptable|helpful|effective|competent|poor|matched|accurate|well)|equal|"
    r"equivalent|on\s+par|(?:of\s+)?(?:the\s+)?same\s+quality|indistinguishable|comparable)|"
    r"equally\s+(?:good|bad|coherent|strong|valid|acceptable|helpful|effective|matched)\s+(?:responses|answers)|"
    r"neither(?:\s+(?:response|answer|system|model|one))?\s+(?:is\s+)?(?:clearly\s+)?(?:better|preferable|"
    r"superior|stands\s+out|wins)|(?:no|without\s+a)\s+(?:clear\s+)?(?:preference|winner)|"
    r"(?:cannot|can['’]t|can\s+not|unable\s+to|not\s+able\s+to|won['’]t|will\s+not|must\s+decline\s+to|"
    r"decline\s+to|refuse\s+to|prefer\s+not\s+to)\s+(?:\w+\s+){0,3}?(?:decide|choose|determine|pick|"
    r"select|say\s+which|tell\s+which|evaluate|judge|compare|assess|rank|make\s+(?:a|this|that)\s+"
    r"(?:choice|call|judge?ment|determination|decision))|"
    r"(?:i['’]m|i\s+am)\s+(?:sorry|afraid)|as\s+an\s+ai\b|i\s+apologi[sz]e)",
    re.IGNORECASE | re.MULTILINE,
)
_TIE_SKIP = re.compile(
    r"\b(?:almost|nearly|close\s+to|not\s+quite|virtually\s+never|break(?:ing)?\s+the)\s*(?:a\s+)?$", re.IGNORECASE
)
_TIE_QUALIFIED = re.compile(
    r"\b(?:in\s+terms\s+of|regarding|when\s+it\s+comes\s+to|as\s+far\s+as|with\s+respect\s+to|fluency|"
    r"fluent|grammar|grammatical|formatting|style|tone|length|polite|readable|well[- ]written|structure)\b",
    re.IGNORECASE,
)

_SENTENCE_END = re.compile(r"[.!?](?=[\s\"'”’)*]|$)|\n|;")
_CLAUSE_END = re.compile(
    r",|:|—|–|\s-\s|\(|\)|\b(?:but|however|yet|whereas|nevertheless|nonetheless|though|"
    r"although|so|therefore|thus|hence|while)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Patterns:
    label: re.Pattern  # any label, groups s1 / s2
    obj: re.Pattern  # "than System Star", the object of a comparison
    votes: tuple[tuple[re.Pattern, str, int, bool], ...]  # (pattern, direction, rank, tail check)
    bare: re.Pattern
    json_value: re.Pattern


def _label_rx(label: str, group: str) -> str:
    prefix, _, bare = label.partition(" ")
    if not bare:
        return rf"(?P<{group}>{re.escape(label)})"
    full = rf"{re.escape(prefix)}\s+{re.escape(bare)}"
    if prefix.lower() == "system" and bare.isalpha():
        # "Star"/"Square" are English words: without "System" only "Star"/"STAR" count.
        short = f"(?-i:{re.escape(bare[:1].upper() + bare[1:])}|{re.escape(bare.upper())})"
    else:
        short = re.escape(bare)
    return rf"(?P<{group}>(?:{full}|{short})(?:\s*\(you\))?)"


@lru_cache(maxsize=256)
def _patterns(labels: tuple[str, str]) -> _Patterns:
    def any_label(g1: str, g2: str) -> str:
        return rf"(?<![\w-])(?:{_label_rx(labels[0], g1)}|{_label_rx(labels[1], g2)})(?![\w-])"

    L = any_label("s1", "s2")
    L2 = any_label("t1", "t2")
    # (pattern, "pos"/"neg", rank, check the tail)
    specs = [
        (rf"{L}{_POSS}\s*{_BE}\s+{_ADV}{_HEAD_POS}\b", "pos", EXPLICIT, True),
        (
            rf"\b(?:the\s+)?(?:(?:response|answer|reply)\s+(?:from|of|by)\s+){L}\s*{_BE}\s+{_ADV}{_HEAD_POS}\b",
            "pos",
            EXPLICIT,
            True,
        ),
        (rf"{L}{_POSS}\s*{_BE}\s+{_ADV}{_HEAD_NEG}\b", "neg", EXPLICIT, True),
        (
            rf"\b(?:(?:the|a)\s+)?(?:better|best|stronger|superior|preferred|preferable|winning|more\s+coherent|"
            rf"higher[- ]quality|clear)\s+(?:response|answer|one|system|model|reply|output|choice|option|winner)"
            rf"(?:\s+(?:here|overall|of\s+the\s+two|in\s+this\s+case))?\s+(?:is|was|would\s+be|has\s+to\s+be|must\s+be)"
            rf"\s*:?\s*(?:clearly\s+|definitely\s+|therefore\s+|thus\s+|undoubtedly\s+)?(?:the\s+(?:one|response|answer)"
            rf"\s+(?:from|of|by)\s+|that\s+of\s+|from\s+)?{L}",
            "pos",
            EXPLICIT,
            True,
        ),
        (rf"\b(?:the\s+)?(?:clear\s+)?winner(?:\s+here)?\s+(?:is|was)\s*:?\s*{L}", "pos", EXPLICIT, True),
        (
            rf"\b(?:i|we)(?:\s+|(?=['’]))(?:(?:would|'d|’d|will|'ll|’ll|must|have\s+to|definitely|still|therefore|"
            rf"thus|ultimately|clearly|slightly|strongly|personally|also|might|may|could)\s+)*(?:choose|pick|select|prefer|go\s+with|"
            rf"vote\s+for|side\s+with|favou?r|opt\s+for|lean\s+(?:towards?|to)|recommend|award\s+(?:it|the\s+win)\s+to|"
            rf"give\s+(?:it|the\s+edge|the\s+win)\s+to)\s+(?:the\s+(?:response|answer|one)\s+(?:from|of|by)\s+)?{L}",
            "pos",
            EXPLICIT,
            True,
        ),
        (
            rf"\b(?:i|we)\s+(?:choose|pick|select|prefer|go\s+with|vote\s+for)\s+(?:both\s+)?{L2}\s+(?:and|or|&|as\s+well\s+as)\s+"
            rf"{L}",
            "pos",
            EXPLICIT,
            False,
        ),  # "I choose System Star and System Square": the second one too
        (
            rf"\b(?:i|we)\s+(?:would\s+not|wouldn['’]t|will\s+not|won['’]t|do\s+not|don['’]t|cannot|can['’]t|"
            rf"did\s+not|didn['’]t|could\s+not|couldn['’]t|am\s+not\s+going\s+to)\s+(?:choose|pick|select|prefer|"
            rf"go\s+with|vote\s+for|side\s+with|favou?r|opt\s+for|recommend)\s+{L}",
            "neg",
            WEAK,
            False,
        ),
        (
            rf"\b(?:my|our|the|final)\s+(?:final\s+|overall\s+)?(?:vote|pick|choice|preference|verdict|answer|"
            rf"recommendation|decision|winner|selection)\s+(?:goes\s+to|is(?:\s+for)?|would\s+be|has\s+to\s+be|:)\s*:?\s*"
            rf"(?:clearly\s+|therefore\s+|thus\s+)?{L}",
            "pos",
            EXPLICIT,
            True,
        ),
        (
            rf"(?:^|(?<=[.!?\n:]))\s*{L}\s*[,—–-]?\s*(?:because|since|as|due\s+to|thanks\s+to|for\s+(?:its|being))\b",
            "pos",
            EXPLICIT,
            False,
        ),  # "System Star, because it is more accurate."
        (rf"{L}\s*(?:>>?|≻)\s*{L2}", "pos", EXPLICIT, False),
        (rf"{L}\s*(?:<<?|≺)\s*{L2}", "neg", EXPLICIT, False),
        (
            rf"{L}\s+(?:wins|won|prevails|comes\s+out\s+(?:ahead|on\s+top)|takes\s+it|edges\s+(?:it|out)|"
            rf"outperforms|outshines|beats|surpasses|is\s+ahead|gets\s+my\s+vote|has\s+the\s+edge|"
            rf"is\s+(?:my|the)\s+(?:choice|pick|preference|winner|answer|verdict)|"
            rf"is\s+the\s+one\s+i\s+(?:prefer|choose|pick|favou?r|recommend|would\s+(?:choose|pick)))\b",
            "pos",
            EXPLICIT,
            True,
        ),
        (
            rf"{L}{_POSS}\s+(?:does|did)\s+(?:a\s+)?(?:much\s+|far\s+|slightly\s+|clearly\s+)?better(?:\s+job)?\b",
            "pos",
            EXPLICIT,
            True,
        ),
        (
            rf"{L}{_POSS}\s+(?:provides|gives|offers|delivers|produces|writes|has|presents)\s+(?:a|the)\s+"
            rf"(?:much\s+|far\s+|slightly\s+|clearly\s+)?(?:better|stronger|superior|more\s+coherent)\s+"
            rf"(?:response|answer|reply|explanation|result|output)\b",
            "pos",
            EXPLICIT,
            True,
        ),
        (
            rf"\b(?:find|consider|rate|deem|judge|rank|regard)\s+{L}{_POSS}\s+(?:to\s+be\s+|as\s+)?{_ADV}"
            rf"(?:{_HEAD_POS}|higher|more\s+highly|first)\b",
            "pos",
            EXPLICIT,
            True,
        ),
        (rf"{L}\s+(?:is|does)\s*(?=[.!;]|$)", "pos", EXPLICIT, False),  # "... System Square is."
        (
            rf"{L},?\s+(?:and\s+)?not\s+{L2},?\s+(?:is|was)\s+{_ADV}"
            rf"{_HEAD_POS}",
            "pos",
            EXPLICIT,
            False,
        ),
        # negations of the verdict: a (weak) vote for the other label
        (
            rf"{L}{_POSS}\s*(?:(?:is|was|seems|appears|would\s+be)\s+(?:not|hardly|by\s+no\s+means|in\s+no\s+way|"
            rf"far\s+from|nowhere\s+near|never|no)|isn['’]t|wasn['’]t|doesn['’]t\s+seem|does\s+not\s+seem)"
            rf"(?:\s+to\s+be)?\s+(?:(?:really|actually|necessarily|clearly|the|any|at\s+all|a|overall)\s+)*"
            rf"{_HEAD_POS}",
            "neg",
            WEAK,
            False,
        ),
        (
            rf"{L}{_POSS}\s*(?:is|was)(?:n['’]t|\s+not)\s+(?:quite\s+|nearly\s+)?as\s+(?:good|coherent|strong|"
            rf"accurate|helpful|clear|well)",
            "neg",
            WEAK,
            False,
        ),
        # descriptive comparisons
        (
            rf"{L}{_POSS}\s*{_BE}\s+{_ADV}(?:more|better)[ \t]+(?!verbose|wordy|convoluted|confusing|repetitive|"
            rf"rambling|redundant|long-winded|generic|vague|superficial|bloated|complicated|misleading|"
            rf"off-topic|error|of\b)\w+",
            "pos",
            WEAK,
            False,
        ),
        (
            rf"{L}{_POSS}\s*{_BE}\s+{_ADV}(?:more\s+(?:verbose|wordy|convoluted|confusing|repetitive|rambling|"
            rf"redundant|long-winded|generic|vague|superficial|bloated|complicated|misleading|off-topic)|"
            rf"less\s+(?!bad\b|wrong\b|flawed\b|problematic\b|confusing\b|verbose\b|wordy\b|error|misleading\b|vague\b)\w+)",
            "neg",
            WEAK,
            False,
        ),
        (
            rf"{L}{_POSS}\s*{_BE}\s+{_ADV}less\s+(?:bad|wrong|flawed|problematic|confusing|verbose|wordy|error|misleading|vague)",
            "pos",
            WEAK,
            False,
        ),
        (
            rf"{L}{_POSS}\s*{_BE}\s+{_ADV}(?:clearer|cleaner|sharper|richer|tighter|crisper|smoother|nicer|"
            rf"fuller|deeper|more[ \t]+\w+)\b",
            "pos",
            WEAK,
            False,
        ),
        (rf"{L}{_POSS}\s+(?:might|may|could|can)\s+(?:well\s+)?(?:be|seem)\s+{_ADV}{_HEAD_POS}", "pos", WEAK, False),
        (rf"{L}{_POSS}\s+(?:falls\s+short|lags|misses\s+the|fails\s+to|struggles)", "neg", WEAK, False),
        (
            rf"{L}{_POSS}\s+(?:follows|captures|addresses|handles|explains|answers|covers|matches|aligns|"
            rf"adheres|sticks|stays)\s+(?:\w+\s+){{0,4}}?(?:better|more\s+(?:closely|accurately|clearly|coherently|"
            rf"directly|thoroughly|faithfully|precisely|completely))\b",
            "pos",
            WEAK,
            False,
        ),
    ]
    votes = tuple((re.compile(p, re.IGNORECASE), d, r, t) for p, d, r, t in specs)
    return _Patterns(
        label=re.compile(L, re.IGNORECASE),
        obj=re.compile(
            rf"[ \t]*(?:(?:than|over|to)\s+)?(?:that\s+of\s+|the\s+(?:response|answer|one)\s+(?:from|of|by)\s+)?"
            rf"{L2}{_POSS}",
            re.IGNORECASE,
        ),
        votes=votes,
        bare=re.compile(
            rf"^\W*(?:(?:so|thus|therefore|hence|overall|answer|verdict|winner|final\s+answer)\W*)?{L}\W*$",
            re.IGNORECASE,
        ),
        json_value=re.compile(rf"^\s*(?:the\s+)?{L}(?:\s*is\s+(?:the\s+)?better)?[.!]?\s*$", re.IGNORECASE),
    )


_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u00a0": " "})
_MARKDOWN = re.compile(r"[*`#|~\\]|(?m:^[ \t]*>+)|(?<!\w)_+|_+(?!\w)")
_BOLD = re.compile(r"\*\*([^\n]+?)\*\*|__([^\n]+?)__")
_FORMAT_ECHO = re.compile(r"\b(?:system|model)\s+_+\s+is\s+better", re.IGNORECASE)
_ALWAYS_ECHOED = ("Instruction:", "<|prompter|>", "<|endoftext|>", "<|assistant|>")
_INTRO_STOP = re.compile(
    _CONC.pattern + r"|\b(?:regardless|notwithstanding|contrary|unlike|ignoring|setting\s+aside|putting\s+aside|"
    r"aside|whatever|irrespective|no\s+matter|rather\s+than|instead\s+of|even|but|however|yet)\b",
    re.IGNORECASE,
)
_JSON_KEYS = frozenset(
    {
        "winner",
        "better",
        "better_response",
        "better_system",
        "better_model",
        "better_answer",
        "verdict",
        "final_verdict",
        "choice",
        "final_choice",
        "answer",
        "final_answer",
        "preferred",
        "preferred_system",
        "preferred_response",
        "preference",
        "best",
        "best_response",
        "result",
        "decision",
        "selection",
        "pick",
        "chosen",
        "winning_system",
        "winning_response",
        "more_coherent",
        "more_coherent_response",
    }
)
_JSON_LOOSE = re.compile(
    r"[\"']?\b(" + "|".join(sorted(_JSON_KEYS, key=len, reverse=True)) + r")\b[\"']?\s*[:=]\s*"
    r"(?:[\"']([^\"'\n]*)[\"']|(null|None|none)\b)",
    re.IGNORECASE,
)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _json_choice(raw: str, pats: _Patterns) -> tuple[bool, Choice]:
    """(a structured verdict was found, its choice); a tie/none value is (True, None)."""
    if "{" not in raw:
        return False, None
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", raw):
        try:
            obj, _ = decoder.raw_decode(raw, m.start())
        except ValueError:
            continue
        found, value = _json_find(obj)
        if found:
            return True, _json_value(value, pats)
    loose = _JSON_LOOSE.search(raw[raw.index("{") :])
    if loose:
        return True, _json_value(loose.group(2), pats)
    return False, None


def _json_find(obj: object, depth: int = 0) -> tuple[bool, object]:
    if depth > 4:
        return False, None
    if isinstance(obj, dict):
        for key, value in obj.items():
            if re.sub(r"[\s-]+", "_", str(key).strip().lower()) in _JSON_KEYS:
                return True, value
        children: list = list(obj.values())
    elif isinstance(obj, list):
        children = obj
    else:
        return False, None
    for child in children:
        found, value = _json_find(child, depth + 1)
        if found:
            return True, value
    return False, None


def _json_value(value: object, pats: _Patterns) -> Choice:
    if not isinstance(value, str):
        return None
    m = pats.json_value.match(value.translate(_QUOTES))
    if m:
        return JudgeSlot.FIRST if m.group("s1") else JudgeSlot.SECOND
    return None


def _unqualified(tail: str, pats: _Patterns) -> bool:
    """Whether what follows "X is better" leaves it a verdict ("than Y", "overall", ".")."""
    m = pats.obj.match(tail)
    if m:
        tail = tail[m.end() :]
    else:
        m = _TAIL_NOUN.match(tail)
        if m:
            tail = tail[m.end() :]
    while m := _TAIL_SOFT.match(tail):
        tail = tail[m.end() :]
    return bool(_ALLOW.match(tail.lstrip(" \t")))


def _prepare(raw: str, echo_strings: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Blank echoes and markdown (keeping every position); the bold spans."""
    text = raw.translate(_QUOTES)
    low = text.lower()
    echoed = False
    for piece in sorted({p for p in (*echo_strings, *_ALWAYS_ECHOED) if p}, key=len, reverse=True):
        if piece in _ALWAYS_ECHOED or len(piece) >= 15:
            head = piece.split(None, 1)[0].lower() if piece.strip() else ""
            if not head or head not in low:
                continue
            rx = r"\s+".join(re.escape(w) for w in piece.translate(_QUOTES).split())
            for m in re.finditer(rx, text, re.IGNORECASE):
                text = _blank(text, m.start(), m.end())
                if piece[-1] in ".!?":  # an echoed sentence still ends a sentence
                    text = text[: m.end() - 1] + "." + text[m.end() :]
                echoed = echoed or len(piece) >= 40
    text = _FORMAT_ECHO.sub(lambda m: " " * len(m.group()), text)
    cut = text.rfind("### Response:")
    if cut < 0 and echoed:
        cut = text.rfind("Response:")
    if cut >= 0:
        end = text.index(":", cut) + 1
        text = " " * end + text[end:]
    bold = [(m.start(), m.end()) for m in _BOLD.finditer(text)]
    text = _MARKDOWN.sub(lambda m: " " * len(m.group()), text)
    return text, bold


def _boundaries(text: str, pattern: re.Pattern) -> list[int]:
    return [m.end() for m in pattern.finditer(text)]


def _before(points: list[int], pos: int) -> int:
    i = bisect.bisect_right(points, pos) - 1
    return points[i] if i >= 0 else 0


@dataclass
class _Vote:
    rank: int
    pos: int  # where the label is
    slot: str
    sentence: int


def _scope_prefixes(
    text: str, start: int, sentences: list[int], clauses: list[tuple[int, bool]], pats: _Patterns
) -> tuple[str, str, str]:
    """(sentence prefix, immediate clause prefix, extended prefix) before ``start``.

    The extended prefix also takes earlier comma clauses of the sentence that name no label
    and are not subordinate ("According to the note, X is better"), but not a concession
    ("Despite what 85% believe, X is better") or a clause of its own ("85% believe X is
    better, X is not").
    """
    s0 = _before(sentences, start)
    ends = [(p, c) for p, c in clauses if s0 <= p <= start]
    c0 = ends[-1][0] if ends else s0
    e0 = c0
    i = len(ends) - 1
    while i >= 0 and ends[i][1]:  # a comma-type boundary: maybe extend over the clause before
        prev = ends[i - 1][0] if i > 0 else s0
        piece = text[prev : ends[i][0]]
        if pats.label.search(piece) or _INTRO_STOP.search(piece):
            break
        e0, i = prev, i - 1
    return text[s0:start], text[c0:start], text[e0:start]


def parse_robust(raw: str, *, labels: Sequence[str], echo_strings: Sequence[str] = ()) -> Choice:
    pats = _patterns(tuple(labels))
    structured, choice = _json_choice(raw, pats)
    if structured:
        return choice
    text, bold = _prepare(raw, echo_strings)
    sentences = _boundaries(text, _SENTENCE_END)
    clauses = [(m.end(), m.group() in (",", ":", "(", ")")) for m in _CLAUSE_END.finditer(text)]
    lines = [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def sentence_of(pos: int) -> int:
        return bisect.bisect_right(sentences, pos)

    votes: dict[int, _Vote] = {}

    def cast(rank: int, lpos: int, slot: str) -> None:
        old = votes.get(lpos)
        if old is None or rank > old.rank:
            votes[lpos] = _Vote(rank, lpos, slot, sentence_of(lpos))

    for pattern, direction, rank, check_tail in pats.votes:
        for m in pattern.finditer(text):
            group = "s1" if m.group("s1") is not None else "s2"
            lpos = m.start(group)
            slot = JudgeSlot.FIRST if group == "s1" else JudgeSlot.SECOND
            if direction == "neg":
                slot = OTHER[slot]
            r, demoted = rank, False
            if check_tail and not _unqualified(text[m.end() : m.end() + 120], pats):
                r, demoted = WEAK, True
            sent_prefix, clause, extended = _scope_prefixes(text, m.start(), sentences, clauses, pats)
            negated = bool(_NEG.search(_NEG_OK.sub(" ", clause)))
            sentence_end = next((p for p in sentences if p > m.end()), len(text))
            attributed = (
                _ATTR.search(clause)
                or _ATTR.search(extended)
                or _ATTR_AFTER.match(text[m.end() : sentence_end])
                or _ATTR.search(text[m.start() : m.end()])
            )
            if attributed and not negated and not (_OWN.search(extended) or _OWN.search(text[m.end() : sentence_end])):
                continue  # somebody else's claim (or the distractor): no vote at all
            if negated:
                slot, r, demoted = OTHER[slot], WEAK, True
            elif _CONC.search(clause):
                r, demoted = WEAK, True
            if r == WEAK and not demoted and _CONCLUDE.match(sent_prefix):
                r = EXPLICIT  # "Overall, X is more accurate."
            if r == EXPLICIT:
                line_prefix = text[_before(lines, m.start()) : m.start()]
                if _MARKER.search(line_prefix) or any(s <= lpos < e for s, e in bold):
                    r = MARKED
            cast(r, lpos, slot)

    # "Verdict: System Square", "**Winner:** Square"
    for m in pats.label.finditer(text):
        line_prefix = text[_before(lines, m.start()) : m.start()]
        if _MARKER.search(line_prefix) and _unqualified(text[m.end() : m.end() + 120], pats):
            clause = _scope_prefixes(text, m.start(), sentences, clauses, pats)[1]
            if not _NEG.search(_NEG_OK.sub(" ", clause.rsplit(":", 1)[-1])):
                cast(MARKED, m.start(), JudgeSlot.FIRST if m.group("s1") is not None else JudgeSlot.SECOND)
    # A first or last sentence that is only a label ("System Square." / "**Square**").
    spans = [(a, b) for a, b in zip([0, *sentences], [*sentences, len(text)], strict=True) if text[a:b].strip()]
    for k, (a, b) in enumerate(spans):
        if k not in (0, len(spans) - 1):
            continue
        piece = text[a:b]
        bare = pats.bare.match(piece)
        if not bare or piece.rstrip().endswith(":") or raw[a:b].lstrip().startswith("#"):
            continue
        rank = MARKED if k == len(spans) - 1 else EXPLICIT
        cast(
            rank,
            a + bare.start("s1" if bare.group("s1") is not None else "s2"),
            JudgeSlot.FIRST if bare.group("s1") is not None else JudgeSlot.SECOND,
        )

    if not votes:
        return None
    top = max(v.rank for v in votes.values())
    best = [v for v in votes.values() if v.rank == top]
    last = max(best, key=lambda v: v.pos)
    if {v.slot for v in best if v.sentence == last.sentence} != {last.slot}:
        return None  # both labels asserted in the deciding sentence
    for m in _TIE.finditer(text):
        if m.start() <= last.pos or _TIE_SKIP.search(text[max(0, m.start() - 20) : m.start()]):
            continue
        _, clause, _ = _scope_prefixes(text, m.start(), sentences, clauses, pats)
        after = text[m.start() : next((p for p in sentences if p > m.end()), len(text))]
        if (
            _NEG.search(_NEG_OK.sub(" ", clause))
            or _CONC.search(clause)
            or _ATTR.search(clause)
            or _TIE_QUALIFIED.search(clause + after)
        ):
            continue
        return None  # a tie or refusal after the last verdict
    return last.slot


_PARSER_FUNCTIONS: dict[str, Callable[..., Choice]] = {Parser.ROBUST: parse_robust, Parser.PAPER: parse_paper}
