"""How the simulated judge writes a decision in a verdict format other than cobbler's.

The decision (slot, strength) is made in ``behaviour``; this module only picks a surface,
seeded by one uniform draw, the way real judges answer such prompts: a long review ending in
a final verdict line, the labels restated before the review, per-criterion labels before the
final line, an explanation after it, or the bare label. Invalid answers are the ones real
judges give: a refusal, a review with no label, labels that disagree with no final line, or
only the options listed. The simulator stands in for an outside model, so it spells its labels
itself rather than importing the product's (judging.verdicts reads them back in the tests).
"""

from __future__ import annotations

FORMATS = ("cobbler", "arena-hard", "mt-bench", "regex", "alpaca-eval")
# Whether a format's labels say how strongly (MT-Bench's and AlpacaEval's do not).
GRADED = {"arena-hard": True, "mt-bench": False, "regex": True, "alpaca-eval": False}
# Formats whose labels have no tie (cobbler's two systems, AlpacaEval's Output (a) / (b)).
NO_TIE = ("cobbler", "alpaca-eval")
# The chosen answer's latent quality must exceed the other's by this much for a strong verdict.
STRONG_GAP = 0.5

_ARENA = {
    ("first", "strong"): ("A>>B", "Assistant A is significantly better"),
    ("first", "slight"): ("A>B", "Assistant A is slightly better"),
    ("tie", ""): ("A=B", "tie, relatively the same"),
    ("second", "slight"): ("B>A", "Assistant B is slightly better"),
    ("second", "strong"): ("B>>A", "Assistant B is significantly better"),
}
_MT = {"first": "A", "second": "B", "tie": "C"}
_REGEX = {
    ("first", "strong"): "A much better",
    ("first", "slight"): "A better",
    ("tie", ""): "tie",
    ("second", "slight"): "B better",
    ("second", "strong"): "B much better",
}
_GOOD = "It is accurate, follows the reference and answers every part of the instruction."
_WEAK = "It is less faithful to the reference and leaves part of the instruction unanswered."
_FINE = "It is accurate and covers the instruction."


def strength(slot: str, first_quality: float, second_quality: float) -> str:
    """``strong`` when the chosen answer is the better one by ``STRONG_GAP`` or more, else ``slight``;
    "" for a tie. A biased choice of the worse answer is always slight."""
    if slot == "tie":
        return ""
    gap = first_quality - second_quality if slot == "first" else second_quality - first_quality
    return "strong" if gap >= STRONG_GAP else "slight"


def _evals(slot: str, letter: str = "Assistant") -> tuple[str, str, str]:
    """(review of A, review of B, summary) consistent with the decision."""
    if slot == "tie":
        return _FINE, _FINE, "Both answers are of about the same quality."
    a, b = (_GOOD, _WEAK) if slot == "first" else (_WEAK, _GOOD)
    winner = f"{letter} A" if slot == "first" else f"{letter} B"
    return a, b, f"{winner}'s answer is the more helpful and accurate one."


def write(fmt: str, slot: str, grade: str, u: float) -> str:
    """The answer in ``fmt`` for the decision; ``u`` in [0, 1) picks the variant."""
    if fmt == "arena-hard":
        return _arena(slot, grade, u)
    if fmt == "mt-bench":
        return _mt_bench(slot, u)
    if fmt == "regex":
        return _regex(slot, grade, u)
    if fmt == "alpaca-eval":
        return _alpaca(slot, u)
    raise ValueError(f"no writer for format {fmt!r}")


def _pick(options: list[str], u: float) -> str:
    return options[int(u * len(options))]


def _arena(slot: str, grade: str, u: float) -> str:
    label, said = _ARENA[(slot, grade)]
    a, b, summary = _evals(slot)
    others = [x for x, _ in _ARENA.values() if x != label]
    return _pick(
        [
            "My own answer to the prompt would cover the key points of the reference and answer every part of "
            f"the instruction.\n\nEvaluation of Assistant A's answer: {a}\n\nEvaluation of Assistant B's answer: "
            f"{b}\n\n{summary}\n\nMy final verdict is {said}: [[{label}]]",
            "I will compare the answers and finish with one of the labels [[A>>B]], [[A>B]], [[A=B]], [[B>A]] "
            f"or [[B>>A]].\n\nAssistant A: {a}\nAssistant B: {b}\n\n**Final verdict:** [[{label}]]",
            f"Correctness: [[{label}]]\nCompleteness: [[A=B]]\nConciseness: [[{others[0]}]]\n\n{summary}\n\n"
            f"My final verdict is: [[{label}]]",
            f"My final verdict is {said}: [[{label}]]\n\n{summary} Assistant A: {a} Assistant B: {b}",
            f"[[{label}]]",
        ],
        u,
    )


def _mt_bench(slot: str, u: float) -> str:
    label = _MT[slot]
    a, b, summary = _evals(slot)
    return _pick(
        [
            f"Assistant A's answer: {a} Assistant B's answer: {b} {summary}\n\n[[{label}]]",
            'Following the format, I answer "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, '
            f'and "[[C]]" for a tie.\n\n{summary}\n\nFinal verdict: [[{label}]]',
            f"Final verdict: [[{label}]]\n\n{summary}",
            f"[[{label}]]",
        ],
        u,
    )


def _regex(slot: str, grade: str, u: float) -> str:
    label = _REGEX[(slot, grade)]
    a, b, summary = _evals(slot, "Response")
    return _pick(
        [
            f"Response A: {a}\nResponse B: {b}\n\n{summary}\n\n<preference>{label}</preference>",
            "I must answer with <preference>A better</preference>, <preference>tie</preference> or "
            f"<preference>B better</preference>, or a 'much better' form.\n\n{summary}\n\n"
            f"<preference>{label}</preference>",
            f"<preference>{label}</preference>\n\n{summary}",
        ],
        u,
    )


def _alpaca(slot: str, u: float) -> str:
    """AlpacaEval's annotator answers "Output (a)" or "Output (b)" (the alpaca-eval-v1 template's
    regex spec reads them); chat models add a sentence before or after."""
    label = "Output (a)" if slot == "first" else "Output (b)"
    which = "first" if slot == "first" else "second"
    return _pick(
        [
            label,
            f"{label}\n\nIt follows the instruction more closely.",
            f"Comparing the two, the {which} output is more accurate and complete.\n\n{label}",
        ],
        u,
    )


_INVALID = {
    "arena-hard": [
        "I'm sorry, but I can't evaluate these responses.",
        "Both answers have merits: Assistant A is more concise and Assistant B is more thorough. "
        "I find it hard to separate them.",
        "On accuracy: [[A>B]].\n\nOn style: [[B>A]].",
        "The verdict should be one of [[A>>B]], [[A>B]], [[A=B]], [[B>A]] or [[B>>A]].",
    ],
    "mt-bench": [
        "I'm sorry, but I can't evaluate these responses.",
        "Both answers are reasonable, and each has a small flaw.",
        "For accuracy, [[A]]. For style, [[B]].",
    ],
    "regex": [
        "I'm sorry, but I can't evaluate these responses.",
        "Both responses are reasonable, and each has a small flaw.",
        "On accuracy <preference>A better</preference>, on style <preference>B better</preference>.",
    ],
    "alpaca-eval": [
        "I'm sorry, but I can't evaluate these outputs.",
        "Both outputs answer the instruction reasonably well.",
        "Output (a) is more concise, but Output (b) is more thorough.",
    ],
}


def invalid_text(fmt: str, u: float) -> str:
    """An invalid answer in ``fmt``; ``u`` in [0, 1) picks which."""
    return _pick(_INVALID[fmt], u)
