"""The cot run: the order run's pairs and arrangements with a step-by-step instruction, a
simulator knob for what thinking changes, and verdicts read after the reasoning."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from annotations.vocabulary import Condition, JudgeSlot
from judging import conditions, prompts, verdicts
from judging.prompts import templates
from judging.prompts.cot import COT_INSTRUCTION
from judging.simulator.behaviour import decide, parse_knobs, read_prompt

pytestmark = pytest.mark.smoke

FIRST = "The capital of France is Paris, on the Seine."
SECOND = "Paris."
# (host, the simulator's verdict format, the parser's format name) for every prompt a judge can get.
HOSTS = [
    ("v1", "cobbler", "cobbler"),
    ("arena-hard-v1", "arena-hard", "arena-hard"),
    ("mt-bench-pair-v1", "mt-bench", "mt-bench"),
]


def _pair(pk: int) -> SimpleNamespace:
    def response(pk: int, key: str, text: str) -> SimpleNamespace:
        return SimpleNamespace(pk=pk, text=text, candidate=SimpleNamespace(key=key, name=key))

    return SimpleNamespace(
        pk=pk,
        instruction_id=pk % 3,
        response_a=response(10 * pk, "a", FIRST),
        response_b=response(10 * pk + 1, "b", SECOND),
    )


def _rendered(host: str, condition: str, first: str = FIRST, second: str = SECOND):
    if host in templates.builtin_versions():
        return templates.render_template(
            templates.builtin(host), condition=condition, instruction="Name the capital.", reference="",
            first_text=first, second_text=second, cue={},
        )  # fmt: skip
    return prompts.render(
        version=host, condition=condition, instruction="Name the capital.", reference="",
        first_text=first, second_text=second, cue={},
    )  # fmt: skip


def test_the_cot_run_plans_the_order_runs_pairs_and_arrangements():
    pairs = [_pair(pk) for pk in range(1, 13)]
    a_first = conditions.a_first_plan(pairs, seed=5, version="v1")
    for pair in pairs:
        order, cot = (
            conditions.plan(pair=pair, condition=c, seed=5, version="v1", bandwagon_percent=85, self_key="",
                            a_first=a_first[pair.pk])
            for c in (Condition.ORDER, Condition.COT)
        )  # fmt: skip
        assert [(r["presentation"], r["slot1_response"].pk) for r in cot] == [
            (r["presentation"], r["slot1_response"].pk) for r in order
        ]
        assert cot[0]["slot1_response"] is not cot[1]["slot1_response"]  # the answers swap, as in the order run
    assert conditions.normalise(["cot"]) == [Condition.COT]


@pytest.mark.parametrize(("host", "sim_format", "parser"), HOSTS)
def test_the_prompt_asks_for_reasoning_and_nothing_else_changes(host, sim_format, parser):
    order, cot = _rendered(host, Condition.ORDER), _rendered(host, Condition.COT)
    order_text, cot_text = order.messages[-1]["content"], cot.messages[-1]["content"]
    assert COT_INSTRUCTION in cot_text and COT_INSTRUCTION not in order_text
    assert order.messages[:-1] == cot.messages[:-1]
    if host == "v1":  # the CoBBLEr prompt's "no explanation" line is what cot replaces
        no_explanation = prompts.load_template("v1")["no_explanation"]
        assert cot_text == order_text.replace(no_explanation, COT_INSTRUCTION)
    assert read_prompt(cot.messages).step_by_step and not read_prompt(order.messages).step_by_step


@pytest.mark.parametrize(
    ("host", "sim_format", "parser", "style"),
    [
        *((h, f, p, "terse") for h, f, p in HOSTS),
        *(("v1", "cobbler", "cobbler", s) for s in ("json", "markdown", "verbose_reasoning")),
    ],
)
def test_a_verdict_after_step_by_step_reasoning_is_read(host, sim_format, parser, style):
    """The reasoning names both answers before the verdict: the verdict, not the first label, decides."""
    rendered = _rendered(host, Condition.COT)
    for seed in range(6):
        decision = decide(parse_knobs(f"sim:seed={seed},format={sim_format},style={style}"), rendered.messages)
        assert decision.text.startswith("Let me think step by step.")
        parsed = verdicts.parse(
            parser, decision.text, labels=rendered.answer_labels, echo_strings=rendered.echo_strings
        )
        assert parsed.slot == decision.slot, decision.text


def test_thinking_scales_every_pull_away_from_quality():
    """cot = x multiplies the position knobs by (1 - x) on a step-by-step prompt, and only there."""
    # The arrangement whose better answer (the simulator's latent quality) is shown second, so
    # every first-slot choice is the knob's doing.
    arrangement = (FIRST, SECOND)
    if (
        decide(parse_knobs("sim:seed=0"), _rendered("v1", Condition.ORDER, *arrangement).messages).slot
        == JudgeSlot.FIRST
    ):
        arrangement = (SECOND, FIRST)
    order, cot = (_rendered("v1", c, *arrangement) for c in (Condition.ORDER, Condition.COT))

    def first_share(rendered, knobs: str, runs: int = 400) -> float:
        chosen = [decide(parse_knobs(f"sim:seed={s},{knobs}"), rendered.messages).slot for s in range(runs)]
        return chosen.count(JudgeSlot.FIRST) / runs

    assert first_share(order, "order_first=0.6,cot=0.5") == pytest.approx(0.6, abs=0.08)
    assert first_share(cot, "order_first=0.6,cot=0.5") == pytest.approx(0.3, abs=0.08)
    assert first_share(cot, "order_first=0.6") == pytest.approx(0.6, abs=0.08)
    assert first_share(cot, "order_first=0.4,cot=-1") == pytest.approx(0.8, abs=0.08)
    with pytest.raises(ValueError, match="cot must be between"):
        parse_knobs("sim:cot=1.5")
