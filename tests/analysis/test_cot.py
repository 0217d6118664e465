"""``analysis.metrics.cot``: consistency and gold accuracy with and without thinking step by step.

The judgments are the simulator's answers to the real prompts of both runs (planned, rendered,
decided and parsed as a job would), so the expected values follow from the knobs in closed
form: a quality-consistent judge with ``order_first = p`` picks the first slot twice on a share p
of the pairs, so its consistency and its gold accuracy (gold = the better answer) are 1 - p, and
``cot = x`` makes that p (1 - x) in the cot run.

People's row is read from a synthetic answers frame (``loaders.human_pairwise_frame``'s columns)
whose per-pair means, and so its effects, are known by hand.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.metrics.battery import HUMANS
from analysis.metrics.cot import MIN_INSTRUCTIONS, cot_rows, human_cot_row
from annotations.vocabulary import Arrangement, Condition, CrowdChoice, JudgeSlot
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


# --- people --------------------------------------------------------------------------------------

HUMAN_COLUMNS = [
    "rater", "rater_label", "batch", "instruction", "condition", "pair_index", "position", "pair", "resp_a",
    "resp_b", "arrangement", "cue_slot", "choice",
]  # fmt: skip
GOLD, OTHER, TIE = "gold", "other", "tie"


def _human_answers(spec: dict) -> pd.DataFrame:
    """``{(rater, condition, instruction, pair): (first, second)}``, each GOLD, OTHER or TIE (the response
    chosen, or a tie) -> ``human_pairwise_frame``'s rows: one batch per (rater, condition), the first twin in
    arrangement "ab", the second in "ba". The gold response is a on odd pairs, b on even ones."""
    rows = []
    for (rater, condition, instruction, pair), answers in spec.items():
        gold_is_a = pair % 2 == 1
        for twin, (answer, arrangement) in enumerate(zip(answers, (Arrangement.AB, Arrangement.BA), strict=True)):
            if answer == TIE:
                choice = CrowdChoice.TIE
            else:
                chose_a = (answer == GOLD) == gold_is_a
                choice = CrowdChoice.A if chose_a == (arrangement == Arrangement.AB) else CrowdChoice.B
            rows.append(
                {
                    "rater": rater, "rater_label": f"w{rater}", "batch": f"{condition}-{rater}",
                    "instruction": instruction, "condition": condition, "pair_index": pair, "position": 2 * pair + twin,
                    "pair": pair, "resp_a": 2 * pair, "resp_b": 2 * pair + 1, "arrangement": arrangement,
                    "cue_slot": None, "choice": choice,
                }
            )  # fmt: skip
    return pd.DataFrame(rows, columns=HUMAN_COLUMNS)


def _human_gold(answers: pd.DataFrame) -> pd.DataFrame:
    pairs = sorted(set(answers["pair"]))
    return pd.DataFrame({"pair": pairs, "gold_is_a": [p % 2 == 1 for p in pairs]})


HUMAN_INSTRUCTIONS, HUMAN_PAIRS = 10, 6


def _k(instruction: int) -> int:
    """How many of an instruction's pairs the careless order rater answers with the same slot twice."""
    return 1 + instruction % 3  # 1, 2, 3, 1, ...: 19 over the 10 instructions


def _thinking_people(instructions: int = HUMAN_INSTRUCTIONS) -> dict:
    """Order: rater 1 picks slot A twice (inconsistent, JudgeBench score 0) on the first k pairs of an
    instruction, rater 2 a tie then the gold answer (inconsistent, score +1) on the last; cot: raters 3
    and 4 choose the gold answer twice, except rater 4's tie twice on the last pair (consistent, score 0).
    Everything else: the gold answer twice. Pairs i * 10 + j + 1, as the judges' ``_pairs``."""
    spec = {}
    for i in range(instructions):
        for j in range(HUMAN_PAIRS):
            pair = i * PAIRS_PER_INSTRUCTION + j + 1
            first_slot = (GOLD, OTHER) if pair % 2 == 1 else (OTHER, GOLD)  # slot A = response a both times
            last = j == HUMAN_PAIRS - 1
            spec[(1, Condition.ORDER, i, pair)] = first_slot if j < _k(i) else (GOLD, GOLD)
            spec[(2, Condition.ORDER, i, pair)] = (TIE, GOLD) if last else (GOLD, GOLD)
            spec[(3, Condition.COT, i, pair)] = (GOLD, GOLD)
            spec[(4, Condition.COT, i, pair)] = (TIE, TIE) if last else (GOLD, GOLD)
    return spec


def test_people_who_are_consistent_after_writing_their_reasoning_have_a_known_gain():
    answers = _human_answers(_thinking_people())
    row = human_cot_row(answers, _human_gold(answers))
    n = HUMAN_INSTRUCTIONS * HUMAN_PAIRS
    ks = sum(_k(i) for i in range(HUMAN_INSTRUCTIONS))  # 19
    assert row["judge"] == HUMANS and row["raters"] == 4
    consistency, accuracy = row["consistency"], row["gold_accuracy"]
    # Consistency per pair (mean of two raters): order 0.5 on the k careless pairs and on the last (a
    # tie and a letter), else 1; cot 1 everywhere (a tie twice is consistent).
    assert consistency["n"] == n and consistency["instructions"] == HUMAN_INSTRUCTIONS
    assert consistency["without"] == pytest.approx(1 - 0.5 * (ks + HUMAN_INSTRUCTIONS) / n)
    assert consistency["with_cot"] == 1
    assert consistency["effect"] == pytest.approx(0.5 * (ks + HUMAN_INSTRUCTIONS) / n)
    # Every instruction gains: the sign-flip p is 2 / 2^10, Holm doubles it at most.
    assert consistency["p_value"] == pytest.approx(2 / 2**HUMAN_INSTRUCTIONS)
    assert consistency["ci95"][0] > 0 and consistency["claim"] == "higher"
    # JudgeBench per rater: slot A twice scores 0 (wrong), a tie and the gold +1 (right), a tie twice 0
    # (wrong). Order: 0.5 on the k pairs; cot: 0.5 on the last pair.
    assert accuracy["n"] == n
    assert accuracy["without"] == pytest.approx(1 - 0.5 * ks / n)
    assert accuracy["with_cot"] == pytest.approx(1 - 0.5 * HUMAN_INSTRUCTIONS / n)
    assert accuracy["effect"] == pytest.approx(0.5 * (ks - HUMAN_INSTRUCTIONS) / n)
    assert accuracy["p_holm"] is not None and accuracy["p_holm"] >= consistency["p_holm"]


def test_a_tie_twice_is_consistent_a_tie_and_a_letter_is_not_and_gold_scores_by_the_rule():
    spec = {
        (1, Condition.ORDER, 0, 1): (TIE, GOLD),  # inconsistent; +1: right
        (2, Condition.COT, 0, 1): (TIE, TIE),  # consistent; 0: wrong
        (1, Condition.ORDER, 0, 2): (GOLD, OTHER),  # inconsistent; 0: wrong
        (2, Condition.COT, 0, 2): (OTHER, OTHER),  # consistent; -2: wrong
        (1, Condition.ORDER, 0, 3): (TIE, TIE),  # consistent; 0: wrong
        (2, Condition.COT, 0, 3): (OTHER, TIE),  # inconsistent; -1: wrong
    }
    answers = _human_answers(spec)
    row = human_cot_row(answers, _human_gold(answers))
    consistency, accuracy = row["consistency"], row["gold_accuracy"]
    assert (consistency["without"], consistency["with_cot"]) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert (accuracy["without"], accuracy["with_cot"]) == (pytest.approx(1 / 3), 0)
    # One instruction: no claim, and a reason.
    assert consistency["claim"] is None and "instruction" in consistency["reason"]
    # Off gold pairs accuracy has no pair; people who answered only the order run have no row.
    no_gold = human_cot_row(answers, pd.DataFrame(columns=["pair", "gold_is_a"]))
    assert no_gold["gold_accuracy"]["n"] == 0 and "gold labels" in no_gold["gold_accuracy"]["reason"]
    assert human_cot_row(answers[answers["condition"] == Condition.ORDER], _human_gold(answers)) is None
    assert human_cot_row(answers.iloc[0:0], _human_gold(answers)) is None


def test_a_judge_row_gets_its_effect_minus_peoples_on_the_pairs_both_have():
    pairs = _pairs(HUMAN_INSTRUCTIONS)
    judgments = _judgments(pairs, "thinks", "seed=1,order_first=0.4,cot=0.75")
    gold = _gold(pairs)
    spec = _thinking_people()
    # People also answered pairs no judge saw (a further instruction): they stay out of the difference.
    spec.update({key: value for key, value in _thinking_people(HUMAN_INSTRUCTIONS + 1).items() if key[2] == 10})
    answers = _human_answers(spec)
    people_gold = pd.concat([gold, _human_gold(answers)]).drop_duplicates("pair")
    (row,) = cot_rows(judgments, people_gold, answers)
    shared = set(gold["pair"]) & set(answers["pair"])
    assert len(shared) == HUMAN_INSTRUCTIONS * HUMAN_PAIRS
    (judge_on_shared,) = cot_rows(judgments[judgments["pair"].isin(shared)], people_gold)
    people_on_shared = human_cot_row(answers[answers["pair"].isin(shared)], people_gold)
    for outcome in ("consistency", "gold_accuracy"):
        minus = row[outcome]["minus_humans"]
        want = judge_on_shared[outcome]["effect"] - people_on_shared[outcome]["effect"]
        assert minus["effect"] == pytest.approx(want)
        assert minus["n"] == len(shared) and minus["instructions"] == HUMAN_INSTRUCTIONS
        assert minus["ci95"][0] < minus["effect"] < minus["ci95"][1] and 0 <= minus["p_value"] <= 1
        assert "claim" not in minus and "p_holm" not in minus
        # The judge's own numbers are those without people.
        (alone,) = cot_rows(judgments, people_gold)
        assert {k: v for k, v in row[outcome].items() if k != "minus_humans"} == alone[outcome]


def test_without_peoples_cot_answers_judge_rows_are_unchanged_and_people_have_no_row():
    pairs = _pairs(MIN_INSTRUCTIONS)
    judgments = _judgments(pairs, "thinks", "seed=1,order_first=0.4,cot=0.75")
    answers = _human_answers(_thinking_people(MIN_INSTRUCTIONS))
    order_only = answers[answers["condition"] == Condition.ORDER]
    alone = cot_rows(judgments, _gold(pairs))
    assert cot_rows(judgments, _gold(pairs), order_only) == alone
    assert all("minus_humans" not in r[o] for r in alone for o in ("consistency", "gold_accuracy"))
    assert "raters" not in alone[0] and human_cot_row(order_only, _gold(pairs)) is None
    # People with no pair in common with the judge: a difference on no pair, and why.
    elsewhere = answers.assign(pair=answers["pair"] + 10_000)
    (row,) = cot_rows(judgments, _gold(pairs), elsewhere)
    minus = row["consistency"]["minus_humans"]
    assert minus["n"] == 0 and minus["effect"] is None and "no pair" in minus["reason"]
    # Judge without gold pairs: no accuracy pairs, so no difference.
    (row,) = cot_rows(judgments, pd.DataFrame(columns=["pair", "gold_is_a"]), answers)
    assert row["gold_accuracy"]["minus_humans"] is None


def test_a_cot_list_with_people_and_differences_validates_and_exports_its_columns():
    import csv
    import io
    import json
    import zipfile

    from analysis.exporters import export, validate
    from analysis.exporters.cot_table import COLUMNS

    pairs = _pairs(HUMAN_INSTRUCTIONS)
    answers = _human_answers(_thinking_people())
    judgments = _judgments(pairs, "thinks", "seed=1,order_first=0.4,cot=0.75")
    rows = cot_rows(judgments, _gold(pairs), answers) + [human_cot_row(answers, _gold(pairs))]
    for row in rows:
        row.update(profile="default", method="m")
        for outcome in ("consistency", "gold_accuracy"):
            row[outcome]["estimand"] = "e"
    report = {
        "schema": "cobbler-report/1", "study": "cot", "profile": "default", "profile_choices": {},
        "generated_at": "2026-12-05T00:00:00+00:00", "bias": [], "agreement": [], "length_control": {},
        "paper": {}, "cot": rows,
    }  # fmt: skip
    report = json.loads(json.dumps(report))
    validate(report)
    broken = json.loads(json.dumps(report))
    broken["cot"][0]["consistency"]["minus_humans"]["n"] = -1
    with pytest.raises(ValueError, match="cot"):
        validate(broken)
    assert COLUMNS[:14] == [
        "judge", "outcome", "without", "with_cot", "effect", "ci95_low", "ci95_high", "n", "instructions",
        "p_value", "p_holm", "claim", "reason", "profile",
    ]  # fmt: skip
    table = list(
        csv.DictReader(io.StringIO(zipfile.ZipFile(io.BytesIO(export(report, "csv"))).read("cot.csv").decode()))
    )
    assert [r["judge"] for r in table] == ["thinks", "thinks", HUMANS, HUMANS]
    judge_row = table[0]
    minus = rows[0]["consistency"]["minus_humans"]
    assert float(judge_row["minus_humans"]) == pytest.approx(minus["effect"])
    assert float(judge_row["minus_humans_ci95_low"]) == pytest.approx(minus["ci95"][0])
    assert table[2]["minus_humans"] == ""


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
    from judging.models import RegisteredModel
    from judging.simulator.server import SimulatorServer
    from tests.analysis.conftest import run_in_process

    assert "cot" in empty_reasons({"cot": [], "judge_jobs": [1]})["cot"]["action"]
    server = SimulatorServer(max_concurrency=64).start_in_thread()
    try:
        judge = services.create_judge(
            name="thinking-judge", base_url=server.base_url, model="sim:order_first=0.4,cot=0.75,seed=5",
            max_concurrency=16, requests_per_minute=0, request_timeout=10.0, transport=RegisteredModel.Transport.HTTP,
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
    # The demo's crowd answered the cot condition too: people's row comes last, and every judge row
    # carries its difference from people on the pairs both have.
    people = report["cot"][-1]
    assert people["judge"] == HUMANS and people["raters"] > 0 and people["consistency"]["n"] > 0
    assert all(r["judge"] != HUMANS for r in report["cot"][:-1])
    minus = row["consistency"]["minus_humans"]
    assert minus["n"] > 0 and minus["effect"] is not None
    archive = zipfile.ZipFile(io.BytesIO(export(report, "csv")))
    lines = archive.read("cot.csv").decode().splitlines()
    assert lines[0].startswith("judge,outcome,without,with_cot,effect,ci95_low,ci95_high,n,instructions")
    assert sum(line.startswith("thinking-judge,") for line in lines) == 2
