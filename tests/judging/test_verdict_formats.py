"""Verdict formats and their parsers (issue 20, item 2): the corpora, the shared rules, the specs.

tests/judging/verdict_corpora/<format>.jsonl: outputs written by hand in the habits of real chat
judges (a long review before the verdict, the labels restated, several labels and one final
line, a missing label, a refusal, markdown, trailing explanation, lower case, spaces), each
labelled with the verdict it gives ({"slot", "strength"}) or null (invalid). Measured at 100%
when written; benchmarks/parser_accuracy.py reports the same numbers.
"""

from __future__ import annotations

import time

import pytest

from benchmarks.parser_accuracy import (
    VERDICT_FORMATS,
    load_corpus,
    load_verdict_corpus,
    prompt_for,
    regex_specs,
    verdict_accuracy,
    verdict_row,
)
from judging.verdicts import FORMAT_NAMES, INVALID, Verdict, VerdictSpecError, get_format, parse
from judging.verdicts.reading import MAX_TOKENS

STYLES_REQUIRED = {
    "long_review",
    "restated_labels",
    "several_labels_final",
    "missing_label",
    "refusal",
    "markdown",
    "trailing_explanation",
    "lowercase",
    "spaces",
    "conflicting_no_final",
    "tie",
}
CORPORA = {name: load_verdict_corpus(name) for name in VERDICT_FORMATS}
ROWS = [(name, row) for name, rows in CORPORA.items() for row in rows]

FIRST_STRONG, FIRST_SLIGHT = Verdict("first", "strong"), Verdict("first", "slight")
SECOND_SLIGHT, SECOND_STRONG = Verdict("second", "slight"), Verdict("second", "strong")
TIE = Verdict("tie")


def arena(text: str) -> Verdict:
    return parse("arena-hard", text)


def mt(text: str) -> Verdict:
    return parse("mt-bench", text)


# --- the corpora ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VERDICT_FORMATS)
def test_each_corpus_is_big_enough_and_well_formed(name):
    rows = CORPORA[name]
    assert len(rows) >= 25
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["style"] for r in rows} >= STYLES_REQUIRED
    assert sum(r["expected"] is None for r in rows) >= 6
    for r in rows:
        if r["expected"] is not None:
            Verdict(r["expected"]["slot"], r["expected"]["strength"])  # a well-formed verdict
            assert set(r["expected"]) == {"slot", "strength"}
    valid = [Verdict(**r["expected"]) for r in rows if r["expected"]]
    assert any(v.is_tie for v in valid)
    assert {v.slot for v in valid} >= {"first", "second", "tie"}


@pytest.mark.parametrize("name", VERDICT_FORMATS)
def test_every_format_reads_its_corpus_exactly(name):
    table = verdict_accuracy(name, CORPORA[name])
    assert table["ALL"]["wrong"] == [], table["ALL"]
    assert table["ALL"]["accuracy"] == 1.0


@pytest.mark.parametrize(("name", "row"), ROWS, ids=[f"{n}:{r['id']}" for n, r in ROWS])
def test_corpus_row(name, row):
    assert verdict_row(name, row) == row["expected"], row["text"]


def test_the_cobbler_format_is_the_robust_parser_unchanged():
    cobbler = get_format("cobbler")
    for row in load_corpus():
        rendered = prompt_for(row)
        got = cobbler.parse(row["text"], labels=rendered.answer_labels, echo_strings=rendered.echo_strings)
        assert got == (Verdict(row["expected"]) if row["expected"] else INVALID), row["id"]
    assert not cobbler.has_ties and not cobbler.has_strength
    with pytest.raises(ValueError, match="two answer labels"):
        cobbler.parse("System Star is better")


# --- the shared rules -------------------------------------------------------------------------------


def test_strength_and_ties_are_kept_in_every_spelling():
    assert arena("[[A>>B]]") == FIRST_STRONG
    assert arena("[[A>B]]") == FIRST_SLIGHT
    assert arena("[[A=B]]") == TIE == arena("[[B=A]]")
    assert arena("[[B>A]]") == SECOND_SLIGHT
    assert arena("[[B>>A]]") == SECOND_STRONG
    # the mirrored forms Arena-Hard's own scorer maps too
    assert arena("[[B<<A]]") == FIRST_STRONG and arena("[[A<B]]") == SECOND_SLIGHT
    assert (mt("[[A]]"), mt("[[B]]"), mt("[[C]]")) == (Verdict("first"), Verdict("second"), TIE)
    assert TIE.strength is None and TIE.choice is None and FIRST_SLIGHT.choice == "first"


def test_different_labels_without_a_final_line_are_ambiguous_never_guessed():
    assert arena("Accuracy favours A: [[A>B]].\n\nStyle favours B: [[B>A]].") == INVALID
    assert arena("On balance [[A>B]], maybe [[A>>B]].") == INVALID  # even the strength is not guessed
    assert mt("For turn one, [[A]]. For turn two, [[B]].") == INVALID
    reading = get_format("arena-hard").read("[[A>B]]\n\n[[B>A]] on style")
    assert reading.verdict == INVALID and reading.reason.startswith("ambiguous")


def test_agreeing_labels_need_no_final_line():
    assert arena("Correctness: [[A>B]]. Helpfulness: also [[A>B]].") == FIRST_SLIGHT
    assert arena("[[A=B]] ... both are fine, [[B=A]]") == TIE  # the same verdict spelled twice


def test_the_final_verdict_line_decides_over_earlier_labels():
    text = "Correctness: [[A>B]]\nStyle: [[B>>A]]\n\nMy final verdict is Assistant B is slightly better: [[B>A]]"
    assert arena(text) == SECOND_SLIGHT
    assert arena("## Final Verdict\n\n**[[A=B]]**") == TIE  # a heading, then the label
    assert arena("Early on I thought [[B>A]].\n\n[[A>B]]") == FIRST_SLIGHT  # alone on the last line


def test_two_final_lines_that_disagree_are_invalid():
    assert arena("My final verdict is [[A>B]].\n\nWait, no. My final verdict is [[B>A]].") == INVALID
    assert arena("My final verdict is [[A>B]] or maybe [[A>>B]].") == INVALID


def test_restated_labels_cast_no_vote():
    menu = "I will answer with [[A>>B]], [[A>B]], [[A=B]], [[B>A]] or [[B>>A]]."
    assert arena(menu) == INVALID
    assert arena(menu + " Assistant B is slightly better: [[B>A]]") == SECOND_SLIGHT
    listed = "\n".join(
        [
            "1. Assistant A is significantly better: [[A>>B]]",
            "2. Assistant A is slightly better: [[A>B]]",
            "3. Tie, relatively the same: [[A=B]]",
            "4. Assistant B is slightly better: [[B>A]]",
            "5. Assistant B is significantly better: [[B>>A]]",
        ]
    )
    assert arena(listed) == INVALID
    assert arena(listed + "\n\nAssistant A is slightly better: [[A>B]]") == FIRST_SLIGHT
    # FastChat's scorer would read this restated instruction as a vote for A
    assert mt('I output "[[A]]" if assistant A is better, "[[B]]" if B is, and "[[C]]" for a tie.') == INVALID


def test_quoted_questioned_negated_and_counterfactual_labels_cast_no_vote():
    assert arena('The example "My final verdict is tie: [[A=B]]" shows the format. [[B>A]]') == SECOND_SLIGHT
    assert arena("Should this be [[A=B]]? No: [[A>B]]") == FIRST_SLIGHT
    assert arena("It is not [[A>>B]]; it is [[A>B]].") == FIRST_SLIGHT
    assert arena("My final verdict is not [[A>B]] but [[B>A]].") == SECOND_SLIGHT
    assert arena("If A had cited a source, I would have said [[A>B]]. As it is, [[B>A]].") == SECOND_SLIGHT
    assert arena("Had B stayed on topic this would have been [[A=B]]. [[A>B]]") == FIRST_SLIGHT
    # an idiom, not a counterfactual
    assert arena("If I had to choose, my final verdict is [[A>B]]") == FIRST_SLIGHT
    # format talk before the label
    assert arena("The verdict must be given as a label such as [[A=B]].") == INVALID


def test_the_prompt_echoed_back_is_blanked():
    system = (
        "After providing your explanation, you must output only one of the following choices as your final "
        "verdict with a label:\n\n1. Assistant A is significantly better: [[A>>B]]\n2. Assistant A is slightly "
        'better: [[A>B]]\n\nExample output: "My final verdict is tie: [[A=B]]".'
    )
    echoed = system + "\n\nAssistant B handles the edge case. [[B>A]]"
    assert parse("arena-hard", echoed, echo_strings=[system]) == SECOND_SLIGHT
    assert arena('Example output: "My final verdict is tie: [[A=B]]".') == INVALID  # built in


def test_bare_labels_count_only_on_a_final_verdict_line():
    assert arena("My final verdict is A>>B.") == FIRST_STRONG
    assert arena("**Final verdict:** [B>A]") == SECOND_SLIGHT
    assert arena("In general A>B holds for correctness, so the answer favours A.") == INVALID
    assert mt("Final verdict: C") == TIE
    assert mt("Final verdict: [B]") == Verdict("second")
    assert mt("My final verdict is A.") == INVALID  # "is A" may be the article
    assert mt("Assistant B") == INVALID


def test_missing_labels_refusals_and_unknown_labels_are_invalid():
    assert arena("Assistant A is better overall.") == INVALID
    assert arena("I'm sorry, but I can't help with that.") == INVALID
    assert arena("My final verdict is:") == INVALID
    assert arena("My final verdict is [[A>A]]") == INVALID
    assert mt("[[D]]") == INVALID
    assert get_format("arena-hard").read("[[A>B>A]]").reason.startswith("unknown label")
    assert arena("[[Wikipedia]] says A is right.") == INVALID  # not a label at all


def test_a_runaway_output_is_not_a_verdict():
    assert arena("[[A>B]] " * (MAX_TOKENS + 1)) == INVALID
    assert arena("[[A>B]] " * 20) == FIRST_SLIGHT


def test_lower_case_spaces_and_other_signs_are_tolerated():
    assert arena("final verdict: [[b>>a]]") == SECOND_STRONG
    assert arena("[[ A >> B ]]") == FIRST_STRONG
    assert arena("[[A\u226bB]]") == FIRST_STRONG  # "≫"
    assert mt("[[ c ]]") == TIE


def test_long_outputs_read_fast():
    review = "Assistant A explains it well; Assistant B misses a step. " * 1000 + "\n\nMy final verdict is [[A>B]]"
    for text in (review, " " * 50_000 + "[[A>B]]", "\n" * 50_000 + "[[A>B]]", '"' * 20_000, "[[" * 20_000):
        started = time.perf_counter()
        arena(text)
        assert time.perf_counter() - started < 2.0


# --- the verdict and the registry ---------------------------------------------------------------------


def test_verdicts_are_validated():
    with pytest.raises(ValueError, match="slot"):
        Verdict("third")
    with pytest.raises(ValueError, match="strength"):
        Verdict("first", "huge")
    with pytest.raises(ValueError, match="only a verdict for one slot"):
        Verdict("tie", "strong")
    with pytest.raises(ValueError, match="only a verdict for one slot"):
        Verdict(None, "slight")
    assert INVALID.as_json() is None and not INVALID.valid
    assert SECOND_STRONG.as_json() == {"slot": "second", "strength": "strong"}


def test_the_registry():
    assert FORMAT_NAMES == ("cobbler", "arena-hard", "mt-bench", "regex")
    assert get_format("arena-hard").has_strength and get_format("arena-hard").has_ties
    assert not get_format("mt-bench").has_strength
    with pytest.raises(ValueError, match="unknown verdict format"):
        get_format("alpaca")
    with pytest.raises(ValueError, match="needs a spec"):
        get_format("regex")
    with pytest.raises(ValueError, match="takes no spec"):
        get_format("mt-bench", {"pattern": "x"})


# --- the regex format ---------------------------------------------------------------------------------

SPEC = {
    "pattern": r"Winner:\s*(A|B|tie)\b",
    "labels": {"A": ["first", None], "B": ["second", None], "tie": ["tie", None]},
}


def test_a_regex_format_applies_the_same_rules():
    rx = get_format("regex", SPEC)
    assert rx.parse("Long review.\n\nWinner: B") == Verdict("second")
    assert rx.parse("Winner: A or Winner: B, it depends.") == INVALID
    assert rx.parse("Winner: A\n\nFinal verdict - Winner: B") == Verdict("second")
    assert rx.parse("Winner: tie") == TIE
    assert rx.parse("winner: a") == INVALID  # case matters unless ignore_case
    loose = get_format("regex", {**SPEC, "ignore_case": True})
    assert loose.parse("WINNER: a") == Verdict("first")
    assert rx.has_ties and not rx.has_strength
    graded = get_format(
        "regex", {"pattern": r"Score: (\d)", "labels": {"1": ["first", "strong"], "2": ["first", "slight"]}}
    )
    assert graded.parse("Score: 1") == FIRST_STRONG and graded.has_strength and not graded.has_ties
    assert graded.parse("Score: 7") == INVALID  # a captured text the map lacks


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("not an object", "is an object"),
        ({"pattern": "x(y)", "labels": {"y": ["first", None]}, "extra": 1}, "unknown spec keys"),
        ({"pattern": "", "labels": {"y": ["first", None]}}, "non-empty string"),
        ({"pattern": "V(" + "a" * 600 + ")", "labels": {"y": ["first", None]}}, "longer than 500"),
        ({"pattern": "V([AB]", "labels": {"A": ["first", None]}}, "does not compile"),
        ({"pattern": "Verdict: [AB]", "labels": {"A": ["first", None]}}, "exactly one capture group, not 0"),
        ({"pattern": "V: (A)(B)", "labels": {"A": ["first", None]}}, "exactly one capture group, not 2"),
        ({"pattern": "(?i)V: (A)", "labels": {"A": ["first", None]}}, "inline flags"),
        ({"pattern": "V: (?s:(.))", "labels": {"A": ["first", None]}}, "inline flags"),
        ({"pattern": "V: (A)", "labels": {}}, "non-empty object"),
        ({"pattern": "V: (A)", "labels": {"A": "first"}}, "must be \\[slot, strength\\]"),
        ({"pattern": "V: (A)", "labels": {"A": ["best", None]}}, "slot must be"),
        ({"pattern": "V: (A)", "labels": {"A": ["first", "huge"]}}, "strength must be"),
        ({"pattern": "V: (A)", "labels": {"A": ["tie", "strong"]}}, "a tie has no strength"),
        ({"pattern": "V: (A)", "labels": {"A": ["first", None], " A ": ["second", None]}}, "appears twice"),
        ({"pattern": "V: (A)", "labels": {"a": ["first", None], "A": ["second", None]}, "ignore_case": True}, "twice"),
        ({"pattern": "V: (A)", "labels": {"A": ["first", None]}, "ignore_case": "yes"}, "true or false"),
        ({"pattern": "V: (a+)+", "labels": {"a": ["first", None]}}, "nested quantifiers"),
        ({"pattern": r"V: ((?:\s*\w+)*)", "labels": {"a": ["first", None]}}, "nested quantifiers"),
        ({"pattern": "V: (?:a|ab)*(x)", "labels": {"x": ["first", None]}}, "repeated alternation"),
        ({"pattern": r"V: (a)\1", "labels": {"a": ["first", None]}}, "backreferences"),
        ({"pattern": r"V: (?=.*x)(a)", "labels": {"a": ["first", None]}}, "inside a lookaround"),
        ({"pattern": r"\s*(A|B)", "labels": {"A": ["first", None]}}, "starts with a quantifier"),
        ({"pattern": r"<p>\s*([^<]{1,30})\s*</p>", "labels": {"A": ["first", None]}}, "two quantified items"),
        ({"pattern": r"Verdict:\s*(.+)", "labels": {"A": ["first", None]}}, "two quantified items"),
        ({"pattern": r"\[\[([^\]]+)\]\]", "labels": {"A": ["first", None]}}, "run over the part of the pattern"),
        ({"pattern": r"Verdict:(.+)", "labels": {"A": ["first", None]}}, "run over the part of the pattern"),
        ({"pattern": r"V: (a{1,5000})", "labels": {"a": ["first", None]}}, "bound above 1000"),
        ({"pattern": r"V(:)\s*a*b*c*d*e*", "labels": {":": ["first", None]}}, "more than 4 unbounded"),
    ],
)
def test_regex_spec_validation(spec, message):
    with pytest.raises(VerdictSpecError, match=message):
        get_format("regex", spec)


def test_admitted_regexes_stay_fast_on_adversarial_outputs():
    # The validator's promise: what it admits does not blow up. A rejected pattern of the same
    # intent, <preference>\s*([^<]{1,30}?)\s*</preference>, took 50 s on the first input below.
    inputs = ["<preference>" + " " * 20_000, "[RESULT]" * 3_000, "Winner:" * 3_000, "[[" * 10_000]
    inputs += [c * 20_000 for c in " a<>[]:0\n.=R"]
    for spec in [*regex_specs().values(), SPEC]:
        fmt = get_format("regex", spec)
        for text in inputs:
            started = time.perf_counter()
            fmt.parse(text)
            assert time.perf_counter() - started < 2.0, (spec["pattern"], text[:20])
