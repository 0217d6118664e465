"""The bias battery on the judge side: every cue bias plugin, planned, rendered and read back.

For each cue bias of ``annotations.biases`` and each prompt a judge can be given (the CoBBLEr
versions and the built-in templates of other benchmarks): the perturbation sits on the cued
answer in presentation 1 and moves to the other answer in presentation 2, the draw is seeded and
stored, and the simulator (standing in for an outside model) finds the cue, and for an answer
perturbation the original answer under it, so a judge without the knob decides on the answers.
"""

from __future__ import annotations

import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from annotations.biases import ANSWER, CALM, PROMPT, REGISTRY, REWRITTEN, Rewritten
from annotations.vocabulary import Condition, JudgeSlot
from judging import conditions, prompts, verdicts
from judging.generate.prompts import rewrite_messages
from judging.generate.rewrite_output import read_rewrite
from judging.prompts import templates
from judging.simulator.behaviour import decide, parse_knobs, read_prompt

pytestmark = pytest.mark.smoke

FIRST = "The capital of France is Paris.\n\nIt has been the capital for centuries."
SECOND = "Paris."
HOSTS = ["v1", "v1-paper", *templates.builtin_versions()]


def _pair(pk: int) -> SimpleNamespace:
    def response(pk: int, key: str, text: str) -> SimpleNamespace:
        return SimpleNamespace(pk=pk, text=text, candidate=SimpleNamespace(key=key, name=key))

    return SimpleNamespace(
        pk=pk, instruction_id=1, response_a=response(10 * pk, "a", FIRST), response_b=response(10 * pk + 1, "b", SECOND)
    )


def _render(host: str, condition: str, cue: dict, first: str = FIRST, second: str = SECOND) -> list[dict]:
    if host in templates.builtin_versions():
        t = templates.builtin(host)
        rendered = templates.render_template(
            t,
            condition=condition,
            instruction="Name the capital.",
            reference="",
            first_text=first,
            second_text=second,
            cue=cue,
        )
    else:
        rendered = prompts.render(
            version=host,
            condition=condition,
            instruction="Name the capital.",
            reference="",
            first_text=first,
            second_text=second,
            cue=cue,
        )
    return rendered.messages


def _rewrites(pair: SimpleNamespace) -> dict[int, Rewritten]:
    """Both answers rewritten by the simulator, as a sentiment rewrite job would store them."""
    out = {}
    for response in (pair.response_a, pair.response_b):
        messages = rewrite_messages("Name the capital.", response.text, version="sentiment-v1")
        read = read_rewrite(decide(parse_knobs("sim:seed=1"), messages).text, response.text)
        assert not read.problem, read.problem
        out[response.pk] = Rewritten(id=response.pk + 1000, text=read.text)
    return out


def _plan(condition: str, host: str, seed: int = 7, pk: int = 3) -> list[dict]:
    template = templates.builtin(host) if host in templates.builtin_versions() else None
    pair = _pair(pk)
    return conditions.plan(
        pair=pair, condition=condition, seed=seed, version="v1" if template else host,
        bandwagon_percent=85, self_key="", template=template, rewrites=_rewrites(pair),
    )  # fmt: skip


def test_a_rewritten_bias_shows_no_pair_without_both_rewrites():
    pair = _pair(3)
    partial = {k: v for k, v in _rewrites(pair).items() if k == pair.response_a.pk}
    for rewrites in (None, {}, partial):
        assert (
            conditions.plan(
                pair=pair, condition=Condition.SENTIMENT, seed=7, version="v1", bandwagon_percent=85, self_key="",
                rewrites=rewrites,
            )
            == []
        )  # fmt: skip


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("condition", list(REGISTRY))
def test_the_cue_moves_between_the_two_showings_and_the_simulator_reads_it(condition, host):
    bias = REGISTRY[condition]
    rows = _plan(condition, host)
    assert [r["presentation"] for r in rows] == [1, 2]
    assert rows[0]["slot1_response"] is rows[1]["slot1_response"]  # the same arrangement: only the cue moves
    assert [r["cue"]["cue_slot"] for r in rows] == [JudgeSlot.FIRST, JudgeSlot.SECOND]
    first, second = (FIRST, SECOND) if rows[0]["slot1_response"].text == FIRST else (SECOND, FIRST)
    for row in rows:
        messages = _render(host, condition, row["cue"], first, second)
        user = messages[-1]["content"]
        seen = read_prompt(messages)
        assert (seen.first, seen.second) == (first, second), "the simulator decides on the original answers"
        assert seen.cue_slot == row["cue"]["cue_slot"]
        assert seen.cue_kind == bias.knob
        if bias.perturbs == ANSWER:
            cued, other = (first, second) if row["cue"]["cue_slot"] == JudgeSlot.FIRST else (second, first)
            assert bias.perturb is not None and bias.perturb(cued, row["cue"]) in user
            if bias.rewrite_kind:  # the stored rewrite is the cued answer's own
                assert row["cue"]["rewritten"] != cued and cued in row["cue"]["rewritten"]
            else:
                assert bias.perturb(other, row["cue"]) not in user


@pytest.mark.parametrize("condition", CALM)
def test_a_draw_is_seeded_and_stored(condition):
    assert _plan(condition, "v1", seed=7) == _plan(condition, "v1", seed=7)
    details = [{k: v for k, v in r["cue"].items() if k != "cue_slot"} for r in _plan(condition, "v1")]
    if condition in (Condition.AUTHORITY, Condition.VERBOSITY, Condition.IDENTITY):
        assert all(details), "the perturbation's text is stored with the cue, so review can show it again"
        drawn = {str(_plan(condition, "v1", seed=s, pk=pk)[0]["cue"]) for s in range(5) for pk in range(1, 5)}
        assert len(drawn) > 3, "the draw varies across pairs and seeds"


def test_an_authority_citation_reads_like_a_reference():
    cue = REGISTRY[Condition.AUTHORITY].cue(
        random.Random(1), JudgeSlot.FIRST, prompts.cue_context("v1", Condition.AUTHORITY, JudgeSlot.FIRST)
    )
    citation = cue["citation"]
    assert "(" in citation and ")." in citation and any(ch.isdigit() for ch in citation)
    assert citation.split(" (")[0].count(",") >= 1  # "Surname, I." authors first


@pytest.mark.parametrize("condition", [c for c, b in REGISTRY.items() if b.perturbs == PROMPT])
def test_a_template_without_a_cue_point_refuses_a_sentence_bias(condition):
    t = templates.Template(
        version="mine@x", verdict_format=templates.builtin("arena-hard-v1").verdict_format,
        system="", user="Q: {instruction}\nA: {answer_a}\nB: {answer_b}",
    )  # fmt: skip
    assert "{cue}" in t.refusal(condition)
    assert t.refusal(Condition.AUTHORITY) == t.refusal(Condition.VERBOSITY) == ""  # they change the answers


@pytest.mark.parametrize("condition", [*CALM, *REWRITTEN])
def test_the_knob_is_the_probability_of_choosing_the_cued_answer(condition):
    bias = REGISTRY[condition]
    rewrites = _rewrites(_pair(3))
    for slot in (JudgeSlot.FIRST, JudgeSlot.SECOND):
        ctx = prompts.cue_context("v1", condition, slot)
        if bias.rewrite_kind:  # the cued answer is FIRST in slot 1, SECOND in slot 2
            ctx = replace(ctx, rewrite=rewrites[30 if slot == JudgeSlot.FIRST else 31])
        cue = bias.cue(random.Random(2), slot, ctx)
        messages = _render("v1", condition, cue)
        assert decide(parse_knobs(f"sim:{bias.knob}=1"), messages).slot == slot
        # Without the knob the decision is the plain prompt's: the perturbation adds nothing.
        plain = _render("v1", Condition.PLAIN, {})
        assert decide(parse_knobs("sim:seed=3"), messages).slot == decide(parse_knobs("sim:seed=3"), plain).slot


@pytest.mark.parametrize("condition", [c for c, b in REGISTRY.items() if b.perturbs == PROMPT])
def test_a_judge_that_restates_the_cue_is_read_by_its_verdict(condition):
    """A chat model that copies the cue sentence back ("System Star is a refined version ...") casts
    no vote with the label inside it: the verdict after it decides."""
    bias = REGISTRY[condition]
    cue = bias.cue(random.Random(4), JudgeSlot.FIRST, prompts.cue_context("v1", condition, JudgeSlot.FIRST))
    rendered = prompts.render(
        version="v1", condition=condition, instruction="Name the capital.", reference="",
        first_text=FIRST, second_text=SECOND, cue=cue,
    )  # fmt: skip
    sentence = prompts._cue_sentence("v1", condition, cue)
    assert sentence and "System Star" in sentence
    answer = f"{sentence} Still, System Square is better."
    parsed = verdicts.parse("cobbler", answer, labels=rendered.answer_labels, echo_strings=rendered.echo_strings)
    assert parsed.slot == JudgeSlot.SECOND, parsed
