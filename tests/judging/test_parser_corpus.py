"""The robust parser on the hand-labelled corpus of chat-model outputs (issue 9, deliverable 1).

tests/judging/parser_corpus.jsonl: outputs written by hand in the habits of real chat judges,
in 11 styles, each labelled with the slot it chooses (or null: invalid). Every row is parsed as
the runner parses a judgment (the rendered prompt's labels and echo strings). The paper parser
is scored too but only reported (benchmarks/parser_accuracy.py): it reproduces the authors'
30-character window and is meant to fail on chat styles.
"""

from __future__ import annotations

import pytest

from benchmarks.parser_accuracy import load_corpus, parse_row, per_style, prompt_for
from judging import prompts
from judging.parsers import parse, parse_paper, parse_robust
from judging.simulator.behaviour import STYLES, decide, parse_knobs

ROWS = load_corpus()
STYLES_REQUIRED = (
    "terse",
    "verbose_reasoning",
    "restated_bandwagon",
    "restated_distractor",
    "hedge_naming_loser",
    "negation",
    "markdown",
    "json",
    "tie",
    "refusal",
    "both_labels_final_sentence",
)
L = ("System Star", "System Square")


def test_the_corpus_is_big_enough_and_well_formed():
    assert len(ROWS) >= 80
    assert set(STYLES_REQUIRED) <= {r["style"] for r in ROWS}
    assert len({r["id"] for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert r["expected"] in ("first", "second", None), r["id"]
        prompt_for(r)  # the labels are the ones the condition's prompt asks for
    assert {r["condition"] for r in ROWS} >= {"order", "bandwagon", "attentional", "compassion"}
    assert sum(r["expected"] is None for r in ROWS) >= 20


def test_robust_parser_accuracy_per_style():
    table = per_style("robust", ROWS)
    assert table["ALL"]["accuracy"] >= 0.95, table["ALL"]
    for style in STYLES_REQUIRED:
        assert table[style]["accuracy"] >= 0.90, (style, table[style])
    # Measured at 100% when written; anything less names the rows that regressed.
    assert table["ALL"]["wrong"] == []


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_robust_parser_row(row):
    assert parse_row("robust", row) == row["expected"], row["text"]


def test_the_paper_parser_is_scored_but_only_reported():
    table = per_style("paper", ROWS)
    assert table["terse"]["accuracy"] >= 0.8  # it reads the format it asks for
    assert table["verbose_reasoning"]["accuracy"] < 0.5  # and not chat reasoning (expected)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # the two examples: the last label seen is not the verdict
        ("System Square is more accurate, even though 85% of people believe that System Star is better", "second"),
        ("System Square wins. System Star is better formatted though.", "second"),
        # a restated cue, paraphrased, and quoted
        ("Although 85% of people believe System Star is better, System Square is more coherent.", "second"),
        ('The prompt claims "System Star is better", but System Square is better.', "second"),
        ("Most people would say System Star is better. I pick System Square.", "second"),
        # the distractor restated
        ("System Star likes to eat apples and oranges, but System Square is better.", "second"),
        # negation never counts for the label it negates
        ("I disagree that System Star is better.", "second"),
        ("System Star is not better than System Square.", "second"),
        # an explicit final verdict outranks descriptive comparisons, in either order
        ("System Star is more detailed and better formatted. Final verdict: System Square.", "second"),
        ("**System Star is better**\n\nSystem Square is more thorough, but less accurate.", "first"),
        # genuinely ambiguous: invalid
        ("System Star is better, and System Square is better.", None),
        ("System Star is better. Both are equally good, so it's a tie.", None),
        ("I'm sorry, but I can't compare these.", None),
        ('{"winner": "tie"}', None),
    ],
)
def test_tricky_outputs_exactly(raw, expected):
    rendered = prompts.render(
        version="v1",
        condition="bandwagon",
        instruction="Q?",
        reference="R.",
        first_text="answer one",
        second_text="answer two",
        cue={"cue_slot": "first", "percent": 85},
    )
    assert parse("robust", raw, labels=rendered.answer_labels, echo_strings=rendered.echo_strings) == expected


def test_named_labels_of_the_compassion_run():
    labels = ("Model gpt4", "Model chatgpt")
    assert parse_robust("Model chatgpt (You) is better", labels=labels) == "second"
    assert parse_robust("gpt4 wins; Model chatgpt (You) is better written, but wrong.", labels=labels) == "first"
    assert parse_robust("I disagree that Model gpt4 is better.", labels=labels) == "second"
    assert parse_robust("System Star is better", labels=labels) is None
    # bare "star"/"square" in lower case are English words, not labels
    assert parse_robust("The square root is better explained in the second answer.", labels=L) is None


def test_an_echoed_completion_prompt_is_ignored():
    rendered = prompts.render(
        version="v1",
        condition="bandwagon",
        instruction="Q?",
        reference="R.",
        first_text="answer one",
        second_text="answer two",
        cue={"cue_slot": "first", "percent": 85},
    )
    echoed = rendered.messages[1]["content"] + "\n### Response: System Square is better"
    assert parse_robust(echoed, labels=rendered.answer_labels, echo_strings=rendered.echo_strings) == "second"
    assert parse_paper(echoed, labels=rendered.answer_labels, echo_strings=rendered.echo_strings) == "second"


# --- the simulator's style knob: same decision, another surface --------------------------------


def _prompts():
    distractors = prompts.distractor_templates("v1")
    for i in range(40):
        base = {
            "version": "v1",
            "instruction": f"Question {i}?",
            "reference": "R.",
            "first_text": f"first answer {i}",
            "second_text": f"second answer {i} " + "x" * (i % 5),
        }
        slot = ("first", "second")[i % 2]
        label = ("Star", "Square")[i % 2]
        yield prompts.render(condition="order", **base)
        yield prompts.render(condition="bandwagon", cue={"cue_slot": slot, "percent": 60 + i}, **base)
        yield prompts.render(
            condition="attentional",
            cue={"cue_slot": slot, "distractor": distractors[i % 4].format(label=label)},
            **base,
        )
        yield prompts.render(condition="compassion", cue={"names": ["gpt4", "chatgpt"], "self_slot": slot}, **base)


@pytest.mark.parametrize("style", STYLES)
def test_every_simulator_style_renders_the_same_decision_and_parses_back(style):
    knobs = "order_first=0.2,bandwagon=0.5,distractor=0.5,self=0.4,invalid=0.2,seed=5"
    styled, terse = parse_knobs(f"sim:{knobs},style={style}"), parse_knobs(f"sim:{knobs}")
    seen = set()
    for rendered in _prompts():
        d, t = decide(styled, rendered.messages), decide(terse, rendered.messages)
        assert (d.slot, d.garbled) == (t.slot, t.garbled)  # the style never changes the decision
        assert decide(styled, rendered.messages) == d  # deterministic
        got = parse_robust(d.text, labels=rendered.answer_labels, echo_strings=rendered.echo_strings)
        assert got == (d.slot or None), (style, d.text)
        seen.add(d.text)
    assert len(seen) > 4


def test_terse_is_the_default_and_byte_identical_to_plain():
    assert parse_knobs("sim:seed=1").style == "terse"
    for rendered in _prompts():
        for knobs in ("seed=3", "seed=3,invalid=0.3,order_first=0.2"):
            t = decide(parse_knobs(f"sim:{knobs}"), rendered.messages)
            assert decide(parse_knobs(f"sim:{knobs},style=plain"), rendered.messages) == t
            assert t.text.endswith(" is better") or t.garbled


def test_unknown_styles_are_rejected():
    with pytest.raises(ValueError, match="style must be one of"):
        parse_knobs("sim:style=poetry")
