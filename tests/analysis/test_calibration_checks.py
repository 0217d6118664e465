"""The calibration experiments' in-process checks, run by ``make test`` on every change.

The experiments themselves (tests/analysis/test_calibration.py and test_calibration_styles.py:
about 30,000 simulated judge calls through a real worker) run in ``make calibrate``. What they
rest on is checked here without a worker, in a few seconds:
- the decision formula the expected rates come from (``prompt_probs``) is what the simulator
  does, by Monte Carlo over seeds;
- garbage answers parse as invalid;
- every output style's answer, ramble, restated cue, hedge and negation included, parses back to
  the simulator's own decision (invalid styles to no decision), so the parser cannot make bias.
"""

from __future__ import annotations

import itertools

import numpy as np

from judging import parsers
from judging.prompts import render
from judging.simulator.behaviour import GARBAGE, decide, parse_knobs, read_prompt
from tests.analysis.test_calibration import Shown, prompt_probs
from tests.analysis.test_calibration_styles import JUDGES, STYLES, knobs_of

TEXTS = ("a short answer", "a much longer answer that keeps going on and on")
CUES = {
    "order": {},
    "bandwagon": {"cue_slot": "second", "percent": 85},
    "attentional": {"cue_slot": "first", "distractor": "System Star plays a lot of soccer and basketball."},
}


def test_prompt_probs_match_the_simulator():
    """Monte Carlo over seeds of ``behaviour.decide`` on rendered prompts vs ``prompt_probs``."""
    texts = TEXTS
    settings = [
        ("order_first=0.3", "order", {}),
        ("order_last=0.2,invalid=0.15", "order", {}),
        ("bandwagon=0.6,order_first=0.2", "bandwagon", {"cue_slot": "second", "percent": 85}),
        (
            "distractor=0.4,length=0.3",
            "attentional",
            {"cue_slot": "first", "distractor": "System Star plays a lot of soccer and basketball."},
        ),
        ("self=0.6,length=0.5", "compassion", {"names": ["own", "bravo"], "self_slot": "second"}),
        ("length=0.5,order_last=0.1", "order", {}),
    ]
    for spec, condition, cue in settings:
        for first, second in (texts, texts[::-1]):
            messages = render(
                version="v1",
                condition=condition,
                instruction="Say something.",
                reference="",
                first_text=first,
                second_text=second,
                cue=cue,
            ).messages
            seen = read_prompt(messages)
            assert (seen.first, seen.second) == (first, second)
            n, counts = 4000, {None: 0, "first": 0, "second": 0}
            for seed in range(n):
                d = decide(parse_knobs(f"sim:{spec},seed={seed}"), messages)
                counts[d.slot or None] += 1
            kind = {"bandwagon": "bandwagon", "attentional": "distractor"}.get(condition, "")
            want = prompt_probs(
                parse_knobs(f"sim:{spec}"),
                Shown(first, second, kind, cue.get("cue_slot", "") if kind else "", cue.get("self_slot", "")),
            )
            for outcome, p in want.items():
                se = max(np.sqrt(p * (1 - p) / n), 1e-9)
                assert abs(counts[outcome] / n - p) <= 4 * se + 1e-9, (spec, first, outcome, counts, want)


def test_garbage_answers_parse_as_invalid():
    for text in GARBAGE:
        assert parsers.parse("robust", text, labels=("System Star", "System Square")) is None, text


def test_every_style_parses_back_to_the_simulators_own_decision():
    """40 instructions x 3 conditions x both orders per style and judge: the robust parser (the
    default judges') reads each answer as the slot the simulator decided, and nothing else."""
    wrong, invalid = [], 0
    for style, judge in itertools.product(STYLES, JUDGES):
        knobs = parse_knobs(f"sim:{knobs_of(style, judge)}")
        for index, (condition, cue) in itertools.product(range(40), CUES.items()):
            for first, second in (TEXTS, TEXTS[::-1]):
                prompt = render(
                    version="v1",
                    condition=condition,
                    instruction=f"Describe subject number {index}.",
                    reference="",
                    first_text=f"{first} ({index})",
                    second_text=f"{second} ({index})",
                    cue=cue,
                )
                decision = decide(knobs, prompt.messages)
                read = parsers.parse(
                    "robust", decision.text, labels=prompt.answer_labels, echo_strings=prompt.echo_strings
                )
                invalid += decision.slot is None or decision.slot == ""
                if (read or None) != (decision.slot or None):
                    wrong.append((style, judge, condition, decision.slot, read, decision.text[:200]))
    assert not wrong, wrong[:3]
    assert invalid > 0  # the invalid styles did write answers without a verdict
