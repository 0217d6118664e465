"""A judge asked with Arena-Hard's (or MT-Bench's) prompt, run by the platform against the
simulator over real HTTP in the order and bandwagon conditions: every stored verdict (slot, tie,
strength, or none) is what the simulator decided for that exact prompt (issue 20, items 1-2)."""

from __future__ import annotations

from collections import Counter

import pytest

from judging import conditions, services
from judging.prompts import templates
from judging.simulator.behaviour import decide, parse_knobs, read_prompt
from tests.judging.test_runner import run_all

# Rates high enough that 72 calls surely hold ties and invalid outputs whatever the seeded arrangement.
KNOBS = "order_first=0.15,bandwagon=0.6,tie=0.25,invalid=0.25,seed=7"


def _messages(job, j):
    return conditions.render_for(
        version=job.prompt_version,
        condition=j.condition,
        pair=j.pair,
        slot1_response_id=j.slot1_response_id,
        cue=j.cue,
        template=job.template(),
    ).messages


@pytest.mark.parametrize(("template", "fmt"), [("arena-hard-v1", "arena-hard"), ("mt-bench-pair-v1", "mt-bench")])
def test_stored_verdicts_are_what_the_simulator_decided(study, make_sim_judge, template, fmt):
    judge = make_sim_judge(knobs=f"format={fmt},{KNOBS}", prompt_template=template)
    assert judge.verdict_format == fmt  # named by the template
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])
    assert (job.prompt_version, job.verdict_format) == (template, fmt)
    assert job.template_hash == templates.builtin(template).hash
    run_all(job)
    assert job.status == "completed" and job.done == job.total == 18 * 4 and job.failed == 0

    sim = parse_knobs(judge.model)
    seen: Counter[tuple[str, str]] = Counter()
    for j in job.judgments.select_related("pair"):
        messages = _messages(job, j)
        assert j.prompt_hash and (j.template_version, j.template_hash) == (template, job.template_hash)
        prompt = read_prompt(messages)  # the simulator found the answers, and the cue where one was given
        assert prompt.cue_kind == ("bandwagon" if j.condition == "bandwagon" else "")
        if j.condition == "bandwagon":
            assert prompt.cue_slot == j.cue["cue_slot"]
        decision = decide(sim, messages)
        expected_slot = "" if decision.garbled else decision.slot
        expected_strength = decision.strength if fmt == "arena-hard" else ""
        assert (j.verdict, j.strength) == (expected_slot, expected_strength), (j.condition, j.raw_text)
        # A tie or no verdict chooses no slot: analysis counts only valid rows as slots.
        assert j.valid == (expected_slot in ("first", "second"))
        assert j.choice == (expected_slot if j.valid else "")
        other = j.pair.response_b_id if j.slot1_response_id == j.pair.response_a_id else j.pair.response_a_id
        expected_chosen = {"first": j.slot1_response_id, "second": other}.get(expected_slot)
        assert j.chosen_response_id == expected_chosen
        seen[(j.verdict or "invalid", j.strength)] += 1
    assert job.ties == seen[("tie", "")] > 0
    assert job.invalid == seen[("invalid", "")] > 0
    if fmt == "arena-hard":
        assert seen[("first", "strong")] + seen[("second", "strong")] > 0
        assert seen[("first", "slight")] + seen[("second", "slight")] > 0


def test_cobbler_judges_store_their_slot_as_the_verdict_as_before(study, make_sim_judge):
    judge = make_sim_judge(knobs="order_first=0.2,invalid=0.2,seed=3")
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    run_all(job)
    rows = list(job.judgments.all())
    assert job.prompt_version == "v1" and job.verdict_format == "cobbler" and job.ties == 0
    assert all(j.verdict == j.choice and j.strength == "" and j.template_version == "v1" for j in rows)
    assert job.invalid == sum(not j.valid for j in rows) > 0


def test_an_alpaca_eval_judge_answers_output_a_or_b_and_is_read_by_its_templates_spec(study, make_sim_judge):
    """AlpacaEval's prompt has no tie and no strength: "Output (a)" / "Output (b)", read by the
    alpaca-eval-v1 template's own regex spec (not the simulator's XML-tag one)."""
    judge = make_sim_judge(
        knobs="format=alpaca-eval,order_first=0.2,invalid=0.2,seed=5", prompt_template="alpaca-eval-v1"
    )
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])
    assert (job.prompt_version, job.verdict_format) == ("alpaca-eval-v1", "regex")
    run_all(job)
    assert job.status == "completed" and job.done == job.total == 72 and job.ties == 0
    sim = parse_knobs(judge.model)
    verdicts = Counter()
    for j in job.judgments.select_related("pair"):
        messages = _messages(job, j)
        prompt = read_prompt(messages)  # its "## Output (a):" layout, and the cue after answer (b)
        assert (prompt.cue_kind, prompt.cue_slot) == (
            ("bandwagon", j.cue["cue_slot"]) if j.condition == "bandwagon" else ("", "")
        )
        decision = decide(sim, messages)
        assert (j.verdict, j.strength) == ("" if decision.garbled else decision.slot, ""), j.raw_text
        verdicts[j.verdict or "invalid"] += 1
    assert verdicts["first"] > 0 and verdicts["second"] > 0 and verdicts["invalid"] > 0, verdicts
    with pytest.raises(ValueError, match="tie needs a format with a tie"):
        parse_knobs("sim:format=alpaca-eval,tie=0.1")
