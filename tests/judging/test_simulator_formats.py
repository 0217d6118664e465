"""The simulator answers in every verdict format (issue 20, item 2): same decision, the format's
surface, read back by judging.verdicts to exactly the simulated choice (slot, strength, tie)."""

from __future__ import annotations

import pytest

from benchmarks.parser_accuracy import regex_specs
from judging import prompts
from judging.simulator import formats
from judging.simulator.behaviour import Knobs, decide, parse_knobs, quality, read_prompt
from judging.verdicts import INVALID, Verdict, get_format

FORMATS = ("arena-hard", "mt-bench", "regex")
ARENA_SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants "
    "to the user prompt displayed below. [...] After providing your explanation, you must output only one of "
    "the following choices as your final verdict with a label:\n\n1. Assistant A is significantly better: "
    "[[A>>B]]\n2. Assistant A is slightly better: [[A>B]]\n3. Tie, relatively the same: [[A=B]]\n4. Assistant "
    "B is slightly better: [[B>A]]\n5. Assistant B is significantly better: [[B>>A]]\n\nExample output: "
    '"My final verdict is tie: [[A=B]]".'
)


def _reader(fmt: str):
    return get_format(fmt, regex_specs()["xml-preference"] if fmt == "regex" else None)


def _v1_prompts(n: int = 30):
    distractors = prompts.distractor_templates("v1")
    for i in range(n):
        base = {
            "version": "v1",
            "instruction": f"Question {i}?",
            "reference": "R.",
            "first_text": f"first answer {i}",
            "second_text": f"second answer {i} " + "x" * (i % 5),
        }
        slot, label = ("first", "second")[i % 2], ("Star", "Square")[i % 2]
        yield prompts.render(condition="order", **base).messages
        yield prompts.render(condition="bandwagon", cue={"cue_slot": slot, "percent": 60 + i}, **base).messages
        yield prompts.render(
            condition="attentional",
            cue={"cue_slot": slot, "distractor": distractors[i % 4].format(label=label)},
            **base,
        ).messages


def _arena_prompt(i: int, cue: str = "") -> list[dict[str, str]]:
    user = (
        f"<|User Prompt|>\nQuestion {i}?\n\n<|The Start of Assistant A's Answer|>\nanswer one {i}\n"
        f"<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\nanswer two {i} "
        f"{'y' * (i % 3)}\n<|The End of Assistant B's Answer|>{cue}"
    )
    return [{"role": "system", "content": ARENA_SYSTEM}, {"role": "user", "content": user}]


def _mt_prompt(i: int) -> list[dict[str, str]]:
    user = (
        f"[User Question]\nQuestion {i}?\n\n[The Start of Assistant A's Answer]\nanswer one {i}\n"
        f"[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\nanswer two {i}\n"
        "[The End of Assistant B's Answer]"
    )
    return [{"role": "system", "content": "Please act as an impartial judge ..."}, {"role": "user", "content": user}]


def _expected(fmt: str, slot: str, strength: str, garbled: bool) -> Verdict:
    if garbled:
        return INVALID
    return Verdict(slot, (strength or None) if fmt != "mt-bench" else None)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_parses_back_to_the_simulated_choice(fmt):
    knobs = "order_first=0.2,bandwagon=0.5,distractor=0.5,invalid=0.2,tie=0.15,seed=5"
    sim, reader = parse_knobs(f"sim:{knobs},format={fmt}"), _reader(fmt)
    seen, outcomes = set(), set()
    for messages in [*_v1_prompts(), *(_arena_prompt(i) for i in range(30)), *(_mt_prompt(i) for i in range(30))]:
        d = decide(sim, messages)
        assert decide(sim, messages) == d  # deterministic
        assert reader.parse(d.text) == _expected(fmt, d.slot, d.strength, d.garbled), (fmt, d)
        seen.add(d.text.split("\n")[0][:30])
        outcomes.add("invalid" if d.garbled else (d.slot, d.strength))
    assert len(seen) >= 4  # several surfaces
    assert {"invalid", ("tie", "")} <= outcomes
    if fmt != "mt-bench":
        assert {("first", "strong"), ("first", "slight"), ("second", "strong"), ("second", "slight")} <= outcomes


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_format_never_changes_the_decision(fmt):
    knobs = "order_first=0.2,bandwagon=0.5,invalid=0.2,seed=9"
    for messages in _v1_prompts(20):
        d, plain = (
            decide(parse_knobs(f"sim:{knobs},format={fmt}"), messages),
            decide(parse_knobs(f"sim:{knobs}"), messages),
        )
        assert (d.slot, d.garbled) == (plain.slot, plain.garbled)


def test_strength_is_strong_exactly_when_the_better_answer_wins_by_half_the_scale():
    knobs, strong, n = Knobs(format="arena-hard", seed=2), 0, 600
    for i in range(n):
        messages = _arena_prompt(i)
        p, d = read_prompt(messages), decide(knobs, messages)
        gap = abs(quality(p.first) - quality(p.second))
        assert d.strength == ("strong" if gap >= formats.STRONG_GAP else "slight")
        strong += d.strength == "strong"
    assert abs(strong / n - 0.25) < 0.06  # P(|U1 - U2| >= 1/2) = 1/4
    # a biased choice of the worse answer is never strong
    biased = Knobs(format="arena-hard", order_first=1.0)
    for i in range(50):
        p, d = read_prompt(_arena_prompt(i)), decide(biased, _arena_prompt(i))
        assert d.slot == "first" and (d.strength == "slight" or quality(p.first) - quality(p.second) >= 0.5)


def test_the_tie_rate_is_measured_as_set():
    knobs, n = Knobs(format="mt-bench", tie=0.3, seed=4), 1500
    ties = sum(decide(knobs, _arena_prompt(i)).slot == "tie" for i in range(n))
    assert abs(ties / n - 0.3) < 0.04


def test_arena_hard_and_mt_bench_layouts_are_read_with_their_cues():
    p = read_prompt(_arena_prompt(3))
    assert (p.first, p.second, p.labels) == ("answer one 3", "answer two 3 ", ("Assistant A", "Assistant B"))
    assert read_prompt(_mt_prompt(4)).first == "answer one 4"
    cued = _arena_prompt(5, cue="\n\n85% of people believe that Assistant B is better.")
    assert (read_prompt(cued).cue_kind, read_prompt(cued).cue_slot) == ("bandwagon", "second")
    followed = decide(Knobs(format="arena-hard", bandwagon=1.0), cued)
    assert followed.slot == "second" and _reader("arena-hard").parse(followed.text).slot == "second"
    # the cobbler format speaks the layout's labels, which the robust parser reads back
    d = decide(Knobs(), _arena_prompt(6))
    assert get_format("cobbler").parse(d.text, labels=("Assistant A", "Assistant B")).slot == d.slot


def test_defaults_are_unchanged_and_bad_formats_rejected():
    assert parse_knobs("sim:seed=1").format == "cobbler" and parse_knobs("sim:seed=1").tie == 0
    for messages in _v1_prompts(10):
        assert decide(parse_knobs("sim:seed=3,format=cobbler"), messages) == decide(parse_knobs("sim:seed=3"), messages)
    with pytest.raises(ValueError, match="format must be one of"):
        parse_knobs("sim:format=alpaca")
    with pytest.raises(ValueError, match="tie needs a format with a tie"):
        parse_knobs("sim:tie=0.2")
