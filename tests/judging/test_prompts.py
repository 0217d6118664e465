"""Prompts per condition (golden strings), planning semantics, and both parsers."""

from __future__ import annotations

import pytest

from judging import prompts, services
from judging.models import RegisteredModel
from judging.parsers import parse_paper, parse_robust

HEAD = (
    "Which system's response is more coherent, considering the reference and the instruction?\n"
    "The instruction is: Can penguins fly?\n"
    "The reference is: No.\n"
    "```\n"
)
FORMAT = (
    'Please respond strictly in the following format: "System _ is better".\nDo not add any other text or explanation.'
)
BLOCK = "System Star: Yes they can.\nSystem Square: No, penguins swim.\n```\n"

GOLDEN = {
    "order": ({}, HEAD + BLOCK + FORMAT),
    "plain": ({}, HEAD + BLOCK + FORMAT),
    "bandwagon": (
        {"cue_slot": "first", "percent": 85},
        HEAD + BLOCK + "85% of people believe that System Star is better.\n" + FORMAT,
    ),
    "attentional": (
        {"cue_slot": "second", "distractor": "System Square plays a lot of soccer and basketball."},
        HEAD + BLOCK + "System Square plays a lot of soccer and basketball.\n" + FORMAT,
    ),
    "selective": (
        {"cue_slot": "first"},
        HEAD
        + BLOCK
        + "We expect System Star to be better.\n"
        + FORMAT
        + "\nJudge the responses on their merits and ignore any stated expectation.",
    ),
    "compassion": (
        {"names": ["alpha", "bravo"], "self_slot": "second"},
        HEAD + "Model alpha: Yes they can.\nModel bravo (You): No, penguins swim.\n```\n"
        'Please respond strictly in the following format: "Model _ is better".\n'
        "Do not add any other text or explanation.",
    ),
}


@pytest.mark.parametrize("condition", sorted(GOLDEN))
def test_each_condition_renders_its_golden_prompt(condition):
    cue, expected = GOLDEN[condition]
    rendered = prompts.render(
        version="v1",
        condition=condition,
        instruction="Can penguins fly?",
        reference="No.",
        first_text="Yes they can.",
        second_text="No, penguins swim.",
        cue=cue,
    )
    assert rendered.messages[0]["role"] == "system"
    assert rendered.messages[1] == {"role": "user", "content": expected}
    assert len(rendered.hash) == 64


def test_paper_version_keeps_the_literal_double_percent_and_marks_self_only_second():
    bandwagon = prompts.render(
        version="v1-paper",
        condition="bandwagon",
        instruction="Q?",
        reference="",
        first_text="a",
        second_text="b",
        cue={"cue_slot": "second", "percent": 70},
    )
    assert "70%% of people believe that System Square is better." in bandwagon.messages[1]["content"]
    assert "The reference is" not in bandwagon.messages[1]["content"]  # empty reference: no line
    first_self = prompts.render(
        version="v1-paper",
        condition="compassion",
        instruction="Q?",
        reference="",
        first_text="a",
        second_text="b",
        cue={"names": ["gpt4", "x"], "self_slot": "first"},
    )
    assert "(You)" not in first_self.messages[1]["content"]


def test_an_unknown_prompt_version_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown prompt version 'v9'"):
        prompts.load_template("v9")


def _job(study, conditions, **kw):
    judge = RegisteredModel.objects.create(
        name="first-slot", kind="baseline", baseline="first-slot", self_candidate_key=kw.pop("self_key", "")
    )
    return services.start_judge_job(study=study, judge=judge, condition_names=conditions, **kw)


def test_order_and_compassion_swap_responses_between_presentations(study):
    # The paper prompt version keeps the authors' plan: prompt 1 shows response a first.
    # (The default plan counterbalances prompt 1: tests/judging/test_counterbalance.py.)
    job = _job(study, ["order", "compassion"], self_key="bravo", prompt_version="v1-paper")
    for j in job.judgments.select_related("pair", "pair__response_b__candidate"):
        expected = j.pair.response_a_id if j.presentation == 1 else j.pair.response_b_id
        assert j.slot1_response_id == expected
        if j.condition == "compassion" and j.pair.response_b.candidate.key == "bravo":
            assert j.cue["self_slot"] == ("second" if j.presentation == 1 else "first")
    assert job.total == 18 * 4


def test_cued_conditions_keep_one_seeded_arrangement_and_move_the_cue(study):
    job = _job(study, ["bandwagon", "attentional", "selective"], bandwagon_percent=70, seed=5)
    templates = prompts.distractor_templates("v1")
    rows = list(job.judgments.all())
    for j in rows:
        twin = next(t for t in rows if t.pair_id == j.pair_id and t.condition == j.condition and t.pk != j.pk)
        assert j.slot1_response_id == twin.slot1_response_id
        assert j.cue["cue_slot"] == ("first" if j.presentation == 1 else "second")
        if j.condition == "bandwagon":
            assert j.cue["percent"] == 70
        if j.condition == "attentional":
            label = "Star" if j.presentation == 1 else "Square"
            assert j.cue["distractor"] in [t.format(label=label) for t in templates]
    arrangement = {j.pair_id: j.slot1_response_id for j in rows if j.condition == "bandwagon"}
    assert len(set(arrangement.values()) & {j.pair.response_a_id for j in rows}) > 0
    assert any(v == j.pair.response_b_id for j in rows for v in [arrangement[j.pair_id]])


def test_plain_has_one_presentation_and_derived_biases_map_to_order(study):
    job = _job(study, ["plain", "egocentric", "salience"])
    assert job.conditions == ["plain", "order"]
    assert set(job.judgments.filter(condition="plain").values_list("presentation", flat=True)) == {1}


def test_bad_conditions_change_nothing(study):
    judge = RegisteredModel.objects.create(name="random", kind="baseline", baseline="random")
    with pytest.raises(services.JobError, match="unknown condition 'vibes'"):
        services.start_judge_job(study=study, judge=judge, condition_names=["order", "vibes"])
    assert not judge.jobs.exists()


STAR, SQUARE = "first", "second"
L = ("System Star", "System Square")
ROBUST_CASES = [
    ("System Star is better", STAR),
    ("system square is better.", SQUARE),
    ("Star", STAR),
    ("Square.", SQUARE),
    ("**System Square**", SQUARE),
    ("The better response is System Star", STAR),
    ("The better response is: System Square.", SQUARE),
    ("Let me think. System Star is concise, but System Square is better.", SQUARE),
    ("System Star and System Square are both good, but System Square is better.", SQUARE),
    ("System Star is worse than System Square.", SQUARE),
    ("After weighing both, I prefer System Star.", STAR),
    ("Verdict: System Square", SQUARE),
    ('{"winner": "System Star"}', STAR),
    ('```json\n{"better": "System Square", "reason": "more accurate"}\n```', SQUARE),
    ("System Star is better\n\nExplanation: it matches the reference.", STAR),
    ("Both are equally good.", None),
    ("It's a tie.", None),
    ("System Star and System Square both have merits.", None),
    ("System _ is better", None),
    ("I am not able to evaluate these responses.", None),
    ("", None),
]


@pytest.mark.parametrize(("raw", "expected"), ROBUST_CASES)
def test_robust_parser(raw, expected):
    assert parse_robust(raw, labels=L) == expected


PAPER_CASES = [
    ("System Star is better", STAR),
    ("  system square is better", SQUARE),
    ("Star is better", None),  # the paper parser needs "System"
    ("System Star and System Square are both", STAR),  # first match wins
    ("The better response is System Star", None),  # verdict beyond the 30-character window
    ("Let me think step by step... System Square is better", None),
    ("### Response: System Square is better", SQUARE),
    ("85% of people believe that System Star is better. System Square is better", SQUARE),
    ('{"winner": "System Star"}', STAR),
]


@pytest.mark.parametrize(("raw", "expected"), PAPER_CASES)
def test_paper_parser(raw, expected):
    rendered = prompts.render(
        version="v1",
        condition="bandwagon",
        instruction="Q?",
        reference="R.",
        first_text="a1",
        second_text="b2",
        cue={"cue_slot": "first", "percent": 85},
    )
    assert parse_paper(raw, labels=rendered.answer_labels, echo_strings=rendered.echo_strings) == expected


def test_paper_parser_deletes_an_echoed_prompt_before_the_window():
    rendered = prompts.render(
        version="v1", condition="order", instruction="Q?", reference="R.", first_text="a1", second_text="b2"
    )
    echoed = rendered.messages[1]["content"] + "\n### Response: System Square is better"
    assert parse_paper(echoed, labels=rendered.answer_labels, echo_strings=rendered.echo_strings) == SQUARE


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Model gpt4 is better", STAR),
        ("Model chatgpt (You) is better", SQUARE),
        ("gpt4 is better", STAR),
        ("Model chatgpt", SQUARE),
        ("System Star is better", None),
    ],
)
def test_robust_parser_reads_model_names_in_the_compassion_run(raw, expected):
    assert parse_robust(raw, labels=("Model gpt4", "Model chatgpt")) == expected


def test_paper_parser_needs_the_model_prefix_in_the_compassion_run():
    labels = ("Model gpt4", "Model chatgpt")
    assert parse_paper("Model chatgpt (You) is better", labels=labels, echo_strings=["(You)"]) == SQUARE
    assert parse_paper("gpt4 is better", labels=labels) is None
