"""``analysis.metrics.cot``: consistency and gold accuracy with and without thinking step by step.

The judgments are the simulator's answers to the real prompts of both runs (planned, rendered,
decided and parsed as a job would), so the expected values follow from the knobs in closed
form: a quality-consistent judge with ``order_first = p`` picks the first slot twice on a share p
of the pairs, so its consistency and its gold accuracy (gold = the better answer) are 1 - p, and
``cot = x`` makes that p (1 - x) in the cot run.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.metrics.cot import MIN_INSTRUCTIONS, cot_rows
from annotations.vocabulary import Condition, JudgeSlot
from judging import conditions, prompts, verdicts
from judging.simulator.behaviour import decide, parse_knobs, quality

pytestmark = pytest.mark.smoke

INSTRUCTIONS, PAIRS_PER_INSTRUCTION = 24, 10


def _pairs(instructions: int) -> list[SimpleNamespace]:
    def response(pk: int, text: str) -> SimpleNamespace:
        return SimpleNamespace(pk=pk, text=text, candidate=SimpleNamespace(key=f"c{pk % 5}", name=f"c{pk % 5}"))

    pairs = []
    for i in range(instructions):
        for j in range(PAIRS_PER_INSTRUCTION):
            pk = i * PAIRS_PER_INSTRUCTION + j + 1
            a, b = (
                response(2 * pk, f"Answer {pk} one, about topic {i}."),
                response(2 * pk + 1, f"Answer {pk} two: topic {i}."),
            )
            pairs.append(SimpleNamespace(pk=pk, instruction_id=i, response_a=a, response_b=b, text=f"Question {i}?"))
    return pairs


def _judgments(pairs, judge: str, knobs: str) -> pd.DataFrame:
    """The rows ``loaders.judgments_frame`` would give for an order and a cot run of this judge."""
    a_first = conditions.a_first_plan(pairs, seed=3, version="v1")
    rows = []
    for condition in (Condition.ORDER, Condition.COT):
        for pair in pairs:
            planned = conditions.plan(
                pair=pair, condition=condition, seed=3, version="v1", bandwagon_percent=85, self_key="",
                a_first=a_first[pair.pk],
            )  # fmt: skip
            for row in planned:
                first = row["slot1_response"]
                second = pair.response_b if first is pair.response_a else pair.response_a
                rendered = prompts.render(
                    version="v1", condition=condition, instruction=pair.text, reference="",
                    first_text=first.text, second_text=second.text, cue={},
                )  # fmt: skip
                text = decide(parse_knobs(f"sim:{knobs}"), rendered.messages).text
                parsed = verdicts.parse(
                    "cobbler", text, labels=rendered.answer_labels, echo_strings=rendered.echo_strings
                )
                chosen = (
                    first if parsed.slot == JudgeSlot.FIRST else second if parsed.slot == JudgeSlot.SECOND else None
                )
                rows.append(
                    {
                        "judge": judge, "condition": condition, "pair": pair.pk, "instruction": pair.instruction_id,
                        "presentation": row["presentation"], "choice": parsed.slot or "", "valid": chosen is not None,
                        "verdict": parsed.slot or "", "chosen_is_a": chosen is pair.response_a, "cue_slot": "",
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


def _gold(pairs) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pair": [p.pk for p in pairs],
            "gold_is_a": [quality(p.response_a.text) > quality(p.response_b.text) for p in pairs],
        }
    )


def test_thinking_that_halves_the_position_pull_is_measured_within_its_interval():
    pairs = _pairs(INSTRUCTIONS)
    judgments = pd.concat(
        [
            _judgments(pairs, "thinks", "seed=1,order_first=0.4,cot=0.75"),
            _judgments(pairs, "unmoved", "seed=2,order_first=0.4"),
        ]
    )
    rows = {r["judge"]: r for r in cot_rows(judgments, _gold(pairs))}
    thinks, unmoved = rows["thinks"], rows["unmoved"]
    # Truth: consistency and accuracy 1 - 0.4 = 0.6 without, 1 - 0.1 = 0.9 with: +0.3.
    for outcome in ("consistency", "gold_accuracy"):
        r = thinks[outcome]
        assert r["n"] == len(pairs) and r["instructions"] == INSTRUCTIONS
        assert r["without"] == pytest.approx(0.6, abs=0.08) and r["with_cot"] == pytest.approx(0.9, abs=0.06)
        assert r["ci95"][0] < 0.3 < r["ci95"][1] and r["ci95"][0] > 0
        assert r["claim"] == "higher" and r["p_value"] < 0.01
        # A judge that thinks to no effect: its intervals hold 0 and nothing is claimed.
        u = unmoved[outcome]
        assert u["ci95"][0] < 0 < u["ci95"][1] and u["claim"] is None


def test_no_cot_run_no_row_and_few_instructions_no_claim():
    pairs = _pairs(MIN_INSTRUCTIONS - 1)
    judgments = _judgments(pairs, "thinks", "seed=1,order_first=0.6,cot=1")
    assert cot_rows(judgments[judgments["condition"] == Condition.ORDER], _gold(pairs)) == []
    (row,) = cot_rows(judgments, pd.DataFrame(columns=["pair", "gold_is_a"]))
    assert row["consistency"]["effect"] > 0.3 and row["consistency"]["claim"] is None
    assert "instruction" in row["consistency"]["reason"]
    assert row["gold_accuracy"]["n"] == 0 and "gold labels" in row["gold_accuracy"]["reason"]


@pytest.mark.slow
@pytest.mark.django_db
def test_the_demo_report_shows_what_thinking_changed_for_a_judge_with_a_cot_run(demo_study):
    """End to end: a judge run on order and cot through the simulator over real HTTP, the report's
    ``cot`` row (schema-valid), its CSV table, and the reason a study without one gets."""
    import io
    import json
    import zipfile

    from analysis.exporters import export, validate
    from analysis.report import build_report
    from analysis.summary.work import empty_reasons
    from judging import services
    from judging.models import Judge
    from judging.simulator.server import SimulatorServer
    from tests.analysis.conftest import run_in_process

    assert "cot" in empty_reasons({"cot": [], "judge_jobs": [1]})["cot"]["action"]
    server = SimulatorServer(max_concurrency=64).start_in_thread()
    try:
        judge = services.create_judge(
            name="thinking-judge", base_url=server.base_url, model="sim:order_first=0.4,cot=0.75,seed=5",
            max_concurrency=16, requests_per_minute=0, request_timeout=10.0, transport=Judge.Transport.HTTP,
        )  # fmt: skip
        job = services.start_judge_job(study=demo_study, judge=judge, condition_names=["order", "cot"], seed=3)
        run_in_process(job)
    finally:
        server.stop()
    report = build_report(study=demo_study, profile="default")
    validate(json.loads(export(report, "json")))
    (row,) = [r for r in report["cot"] if r["judge"] == "thinking-judge"]
    consistency = row["consistency"]
    # Closed form: 1 - 0.4 without, 1 - 0.4 * 0.25 = 0.9 with, on the demo's 120 pairs (sd about 0.045).
    assert consistency["n"] == 120 and consistency["instructions"] == 12
    assert consistency["without"] == pytest.approx(0.6, abs=0.15) and consistency["with_cot"] == pytest.approx(
        0.9, abs=0.1
    )
    low, high = consistency["ci95"]
    assert low <= 0.3 <= high and consistency["claim"] == "higher"
    assert "cot" not in report["no_data"]
    # The demo's own simulated judge thinks too (knob cot=0.5 halves its 30% first-slot pull).
    (demo,) = [r for r in report["cot"] if r["judge"] == "simulated-judge"]
    assert demo["consistency"]["with_cot"] > demo["consistency"]["without"]
    archive = zipfile.ZipFile(io.BytesIO(export(report, "csv")))
    lines = archive.read("cot.csv").decode().splitlines()
    assert lines[0].startswith("judge,outcome,without,with_cot,effect,ci95_low,ci95_high,n,instructions")
    assert sum(line.startswith("thinking-judge,") for line in lines) == 2
