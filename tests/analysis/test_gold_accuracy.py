"""Accuracy on gold labels and position consistency, on a hand-written fixture (every number by hand).

The fixture: four instructions (math, math, coding, writing), two pairs each, answered by
three systems x, y, z; pair p is (x, y) for even p and (x, z) for odd p, so ``a`` is x.
Seven pairs are gold (p6 is not). Judge "arena" answered the order run in Arena-Hard's
format (both presentations) and once in a plain run; judge "mtb" only a plain run in MT-Bench's
format. Raters r1-r3 answered twin tasks in the order condition, r4 (and r1 once) the plain
condition, r5 a bandwagon pair (cued: never read for gold). Outputs are parsed by the real
verdict formats, so "tie" and invalid outputs are the parser's own.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy.special import stdtrit

from analysis.exporters import validate
from analysis.exporters.tidy_tables import tidy_tables
from analysis.profiles import get_profile
from analysis.sections import bias, gold
from analysis.summary import build_summary
from analysis.summary.gold_claims import gold_claim
from judging.verdicts import parse

CATEGORY = {0: "math", 1: "math", 2: "coding", 3: "writing"}
GOLD_IS_A = {0: True, 1: False, 2: True, 3: True, 4: False, 5: True, 7: False}  # p6 has no gold label

# (pair, presentation, response a shown first?, raw Arena-Hard output)
ARENA_ORDER = [
    (
        0,
        1,
        True,
        "My own answer: 221 = 13 x 17, so it is not prime.\n\nAssistant A factors 221 correctly and says it is "
        "not prime. Assistant B claims 221 is prime, which is wrong.\n\nMy final verdict is Assistant A is "
        "significantly better: [[A>>B]]",
    ),
    (
        0,
        2,
        False,
        "Assistant A says 221 is prime; that is incorrect (13 x 17). Assistant B gives the factorisation.\n\n"
        "My final verdict is Assistant B is slightly better: [[B>A]]",
    ),
    (1, 1, False, "Both factor 221, but Assistant A also explains why that rules out primality.\n\n[[A>B]]"),
    (
        1,
        2,
        True,
        "Both assistants give the correct factorisation. Assistant A is more concise, which the prompt asked "
        "for.\n\nMy final verdict is Assistant A is slightly better: [[A>B]]",
    ),
    (2, 1, True, "Both assistants answer 12, which is correct.\n\nMy final verdict is tie: [[A=B]]"),
    (
        2,
        2,
        False,
        "Assistant A only states 12. Assistant B shows the calculation 0.15 x 80 = 12.\n\nMy final verdict is "
        "Assistant B is significantly better: [[B>>A]]",
    ),
    (3, 1, False, "Both are correct and equally clear.\n\nMy final verdict is tie: [[A=B]]"),
    (3, 2, True, "Neither answer has an error and both show the working. My final verdict is tie: [[A=B]]"),
    (4, 1, True, "I'm sorry, but I can't help with evaluating these responses."),  # no label: invalid
    (
        4,
        2,
        False,
        "Assistant A uses slicing, s[::-1], the idiomatic way. Assistant B's loop works but is verbose.\n\n"
        "My final verdict is Assistant A is slightly better: [[A>B]]",
    ),
    (
        5,
        1,
        False,
        "Assistant B handles the empty input.\n\nMy final verdict is Assistant B is slightly better: [[B>A]]",
    ),
    (5, 2, True, "Assistant B is more careful with edge cases.\n\nMy final verdict is: [[B>A]]"),
    (6, 1, True, "Assistant A's haiku keeps 5-7-5.\n\nMy final verdict is Assistant A is slightly better: [[A>B]]"),
    (6, 2, False, "Assistant A's poem is more vivid.\n\nMy final verdict is Assistant A is slightly better: [[A>B]]"),
    (7, 1, False, "Assistant A follows the requested tone exactly.\n\nMy final verdict is [[A>>B]]"),
    (7, 2, True, "Assistant B keeps the formal register the user asked for.\n\nMy final verdict is [[B>A]]"),
]
# The arena judge's plain run: on p1 it chose the gold answer (z), which would make p1 correct;
# it must not count, because the judge's order run holds p1.
ARENA_PLAIN = [(1, 1, False, "Assistant A explains the reasoning.\n\nMy final verdict is [[A>>B]]")]
MTB_PLAIN = [
    (0, 1, True, "Assistant A correctly shows that 221 = 13 x 17.\n\n[[A]]"),
    (1, 1, True, "Assistant A is shorter and still correct.\n\n[[A]]"),
    (4, 1, False, "Both solutions reverse the string correctly. [[C]]"),
    (7, 1, True, "Assistant B keeps the formal tone.\n\n[[B]]"),
]


def _calls(judge: str, fmt: str, condition: str, outputs: list) -> list[dict]:
    rows = []
    for pair, presentation, a_first, raw in outputs:
        verdict = parse(fmt, raw)
        decisive = verdict.choice is not None
        rows.append(
            {
                "judge": judge,
                "self_key": "",
                "job": 1,
                "instruction": pair // 2,
                "pair": pair,
                "cand_a": "x",
                "cand_b": "y" if pair % 2 == 0 else "z",
                "len_a": 300,
                "len_b": 200,
                "condition": condition,
                "presentation": presentation,
                "slot1_is_a": a_first,
                # As judging stores a call and the loader reads it: ``valid`` = a slot was chosen, so a
                # tie has valid False, no choice, and verdict "tie".
                "choice": verdict.choice or "",
                "chosen_is_a": decisive and (verdict.choice == "first") == a_first,
                "valid": decisive,
                "verdict": verdict.slot or "",
                "cue_slot": None,
            }
        )
    return rows


def judgments() -> pd.DataFrame:
    return pd.DataFrame(
        _calls("arena", "arena-hard", "order", ARENA_ORDER)
        + _calls("arena", "arena-hard", "plain", ARENA_PLAIN)
        + _calls("mtb", "mt-bench", "plain", MTB_PLAIN)
    )


# (rater, condition, pair, presentation, letter chosen, cue slot); the twins of a pair share a batch.
VOTES = [
    ("r1", "order", 0, "ab", "A", None),
    ("r1", "order", 0, "ba", "B", None),
    ("r1", "order", 1, "ab", "A", None),
    ("r1", "order", 1, "ba", "A", None),
    ("r1", "plain", 1, "ab", "B", None),  # r1's order twins hold p1: this vote is not read for gold
    ("r2", "order", 2, "ab", "T", None),
    ("r2", "order", 2, "ba", "B", None),
    ("r2", "order", 3, "ab", "B", None),
    ("r2", "order", 3, "ba", "A", None),
    ("r3", "order", 5, "ab", "T", None),
    ("r3", "order", 5, "ba", "T", None),
    ("r3", "order", 7, "ab", "B", None),
    ("r3", "order", 7, "ba", "A", None),
    ("r3", "order", 6, "ab", "A", None),
    ("r3", "order", 6, "ba", "A", None),
    ("r4", "plain", 4, "ab", "B", None),
    ("r4", "plain", 0, "ab", "B", None),
    ("r5", "bandwagon", 0, "ab", "A", "A"),  # cued: gold would count it correct, it must not
    ("r5", "bandwagon", 0, "ba", "B", "B"),
]


def human_answers() -> pd.DataFrame:
    rows = []
    for position, (rater, condition, pair, presentation, choice, cue) in enumerate(VOTES):
        rows.append(
            {
                "rater": rater,
                "rater_label": rater,
                "batch": f"{rater}-{condition}",
                "instruction": pair // 2,
                "condition": condition,
                "pair_index": pair,
                "position": position,
                "pair": pair,
                "resp_a": 10 * pair,
                "resp_b": 10 * pair + 1,
                "arrangement": presentation,
                "cue_slot": cue,
                "choice": choice,
            }
        )
    return pd.DataFrame(rows)


def responses() -> pd.DataFrame:
    rows = []
    for pair in range(8):
        rows.append({"response": 10 * pair, "candidate": "x", "instruction": pair // 2, "text": "a" * 300})
        rows.append({"response": 10 * pair + 1, "candidate": "yz", "instruction": pair // 2, "text": "b" * 200})
    return pd.DataFrame(rows)


def gold_pairs() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"pair": p, "instruction": p // 2, "gold_is_a": is_a, "category": CATEGORY[p // 2]}
            for p, is_a in GOLD_IS_A.items()
        ]
    )


REVIEWS = pd.DataFrame({"condition": ["order", "plain", "bandwagon"], "review": "approved", "counts": True})


def _wilson(value: float, n: float, t: float) -> list[float]:
    """Wilson's interval written out, to check the code's by a second route."""
    centre = (value + t**2 / (2 * n)) / (1 + t**2 / n)
    half = t * math.sqrt(value * (1 - value) / n + t**2 / (4 * n**2)) / (1 + t**2 / n)
    return [centre - half, centre + half]


@pytest.fixture(scope="module")
def gold_rows() -> dict[tuple[str, str | None], dict]:
    rows = gold.from_frames(judgments(), human_answers(), gold_pairs())
    return {(r["subject"], r["category"]): r for r in rows}


@pytest.fixture(scope="module")
def bias_rows() -> dict[tuple[str, str], dict]:
    section = bias.section_from_frames(
        judgments(), human_answers(), responses(), REVIEWS, profile=get_profile("default")
    )
    return {(r["subject"], r["bias"]): r for r in section["bias"]}


def test_parsed_outputs_are_what_the_hand_tally_reads():
    frame = judgments()
    arena = frame[(frame["judge"] == "arena") & (frame["condition"] == "order")]
    assert arena["verdict"].tolist() == [
        "first", "second",  # p0: a, a
        "first", "first",  # p1: b, a (first slot twice)
        "tie", "second",  # p2: tie, a
        "tie", "tie",  # p3
        "", "first",  # p4: no verdict (a refusal), b
        "second", "second",  # p5: a, b (last slot twice)
        "first", "first",  # p6: a, b (first slot twice)
        "first", "second",  # p7: b, b
    ]  # fmt: skip
    assert arena["valid"].sum() == 12  # a slot chosen: 16 calls - 3 ties - 1 refusal


def test_judge_accuracy_follows_judgebench_over_both_presentations(gold_rows):
    row = gold_rows["arena", None]
    # Per gold pair, +1 gold chosen, -1 the other, 0 tie / invalid (order run only):
    # p0 +1+1 = 2 yes | p1 +1-1 = 0 no | p2 0+1 = 1 yes | p3 0+0 = 0 no
    # p4 0+1 = 1 yes | p5 +1-1 = 0 no | p7 +1+1 = 2 yes  -> 4 of 7.
    # Had the plain run's p1 (+1) been added, p1 would read 1 and the value 5/7.
    assert (row["n"], row["correct"], row["pairs"], row["gold_pairs"]) == (7, 4, 7, 7)
    assert row["value"] == pytest.approx(4 / 7)
    assert row["both_orders"] == 7 and row["instructions"] == 4 and row["unit"] == "gold pair"
    assert "the order run (both presentations) on 7 gold pairs" in row["method"]
    # Interval by hand: correct per instruction i0 [1, 0], i1 [1, 0], i2 [1, 0], i3 [1]; p = 4/7.
    # Scores (d - p) / 7 summed per instruction: -1/49, -1/49, -1/49, 3/49; CR1 variance
    # 4/3 (3 + 9) / 49^2 = 16/2401, below the binomial p(1 - p)/n = 84/2401, so deff = 1:
    # Wilson at n = 7 with t(0.975, 3 df) = 3.1824 -> [0.1463, 0.9121].
    assert row["df"] == 3 and row["design_effect"] == 1.0
    assert row["ci95"] == pytest.approx(_wilson(4 / 7, 7, float(stdtrit(3, 0.975))))
    assert row["ci95"] == pytest.approx([0.1463, 0.9121], abs=1e-4)


def test_judge_accuracy_by_category(gold_rows):
    # math p0 yes, p1 no, p2 yes, p3 no: 2/4; coding p4 yes, p5 no: 1/2; writing p7 yes: 1/1.
    got = {c: (gold_rows["arena", c]["correct"], gold_rows["arena", c]["n"]) for c in ("math", "coding", "writing")}
    assert got == {"math": (2, 4), "coding": (1, 2), "writing": (1, 1)}
    # One instruction behind the writing row: no clustered interval, and it says so.
    assert gold_rows["arena", "writing"]["ci95"] is None
    assert "one instruction" in gold_rows["arena", "writing"]["interval"]


def test_a_judge_with_a_plain_run_only_is_read_from_its_one_presentation(gold_rows):
    row = gold_rows["mtb", None]
    # p0 [[A]] with a first: a = gold, +1 yes | p1 [[A]] with a first: a, gold b, -1 no
    # p4 [[C]] a tie: 0 no | p7 [[B]] with a first: b = gold, +1 yes -> 2 of 4.
    assert (row["n"], row["correct"], row["both_orders"]) == (4, 2, 0)
    assert "the plain run (one presentation) on 4 gold pairs" in row["method"]


def test_human_accuracy_is_one_persons_judgement_of_a_pair(gold_rows):
    row = gold_rows["humans", None]
    # Per (rater, gold pair), un-cued votes, the order twins where the rater has them:
    # r1 p0: A on ab = a, B on ba = a: +2 yes | r1 p1: a, b with gold b: 0 no (r1's plain B on p1 unread)
    # r2 p2: tie, B on ba = a: +1 yes         | r2 p3: B on ab = b, A on ba = b, gold a: -2 no
    # r3 p5: tie, tie: 0 no                   | r3 p7: b, b with gold b: +2 yes
    # r4 p4 (plain): b = gold: +1 yes          | r4 p0 (plain): b, gold a: -1 no
    # r5's bandwagon votes on p0 are cued and never read. -> 4 of 8 units.
    assert (row["n"], row["correct"], row["unit"]) == (8, 4, "rater x gold pair")
    assert (row["pairs"], row["raters"], row["instructions"], row["both_orders"]) == (7, 4, 4, 6)
    assert row["value"] == 0.5
    # Interval by hand, two-way over raters and instructions, scores (d - 1/2) / 8 = +-1/16:
    # rater sums r1 0, r2 0, r3 0, r4 0 -> V_rater 0; instruction sums i0 -1/16, i1 0, i2 0,
    # i3 +1/16 -> V_instr 4/3 x 2/256 = 1/96; cell sums (r3 i2, r3 i3, r4 i2, r4 i0) +-1/16, the
    # others 0 -> V_cell 6/5 x 4/256 = 3/160. V_rater + V_instr - V_cell < 0, so the larger
    # one-way variance 1/96, below the binomial 1/32: deff 1, Wilson at n = 8, t on
    # min(4 raters, 4 instructions) - 1 = 3 df -> [0.1263, 0.8737].
    assert row["df"] == 3 and row["design_effect"] == 1.0
    assert row["ci95"] == pytest.approx(_wilson(0.5, 8, float(stdtrit(3, 0.975))))
    assert row["ci95"] == pytest.approx([0.1263, 0.8737], abs=1e-4)
    # math: r1 p0 yes, r1 p1 no, r2 p2 yes, r2 p3 no, r4 p0 no = 2/5; coding 1/2; writing 1/1.
    got = {c: (gold_rows["humans", c]["correct"], gold_rows["humans", c]["n"]) for c in ("math", "coding", "writing")}
    assert got == {"math": (2, 5), "coding": (1, 2), "writing": (1, 1)}


def test_rows_lead_with_the_humans_then_judges_overall_before_categories():
    rows = gold.from_frames(judgments(), human_answers(), gold_pairs())
    assert [(r["subject"], r["category"]) for r in rows] == [
        (subject, category)
        for subject in ("humans", "arena", "mtb")
        for category in (None, "coding", "math", "writing")
    ]


def test_judge_position_rows(bias_rows):
    # Consistency is over the pairs with a verdict (a slot or a tie) in both prompts: all but p4
    # (its prompt 1 is a refusal), 7 of the run's 8. Consistent: p0 (a twice), p3 (tie twice),
    # p7 (b twice) = 3; p1, p6 (first slot twice), p5 (last twice), p2 (tie, then a) are not.
    consistent = bias_rows["arena", "position_consistency"]
    assert (consistent["hits"], consistent["n"], consistent["n_all"]) == (3, 7, 8)
    assert consistent["value"] == pytest.approx(3 / 7) and consistent["value_all"] == pytest.approx(3 / 8)
    assert consistent["random"] == 0.5 and consistent["role"] == "descriptive" and not consistent["family"]
    assert consistent["p_value"] is None and consistent["ci95"][0] < 3 / 7 < consistent["ci95"][1]
    # Prompt-1 valid rate: a slot chosen on p0, p1, p5, p6, p7 (p2, p3 ties, p4 refused) = 5/8.
    assert consistent["valid_rate"] == pytest.approx(5 / 8)
    # The slot rows count the same answered pairs (a tie is an answered pair that is neither a
    # hit nor a mirror, as a person's tie): the 7. First slot twice p1, p6; last twice p5:
    # position_preference (2 - 1) / 7.
    preference = bias_rows["arena", "position_preference"]
    assert (preference["hits"], preference["mirror"], preference["n"]) == (2, 1, 7)
    assert preference["value"] == pytest.approx(1 / 7)  # order_first 2/7 - order_last 1/7
    assert bias_rows["arena", "order_first"]["value"] == pytest.approx(2 / 7)
    assert bias_rows["arena", "order_last"]["value"] == pytest.approx(1 / 7)
    assert ("mtb", "position_consistency") not in bias_rows  # no order run, no position rows


def test_human_position_rows(bias_rows):
    # The order condition's twins, 7 pairs: consistent r1 p0 (a, a), r2 p3 (b, b), r3 p5 (tie,
    # tie), r3 p7 (b, b) = 4; first slot twice r1 p1, r3 p6 = 2; last twice none; r2 p2
    # (tie, then a) neither.
    consistent = bias_rows["humans", "position_consistency"]
    assert (consistent["hits"], consistent["n"]) == (4, 7) and consistent["value"] == pytest.approx(4 / 7)
    preference = bias_rows["humans", "position_preference"]
    assert (preference["hits"], preference["mirror"], preference["n"]) == (2, 0, 7)
    assert preference["value"] == pytest.approx(2 / 7)


def test_the_authors_denominators_count_an_invalid_answer_as_inconsistent():
    section = bias.section_from_frames(
        judgments(), human_answers(), responses(), REVIEWS, profile=get_profile("cobbler-paper")
    )
    rows = {(r["subject"], r["bias"]): r for r in section["bias"]}
    # Every pair of the run (8): a refused, missing or tie-and-slot pair is not consistent.
    assert rows["arena", "position_consistency"]["value"] == pytest.approx(3 / 8)
    assert rows["arena", "position_preference"]["value"] == pytest.approx(1 / 8)  # (2 - 1) / 8
    # Per-rater averaging (the mean of each rater's rate): records r1-i0 (p0 yes, p1 no) 1/2, r2-i1 (p2 no, p3 yes) 1/2,
    # r3-i2 (p5 yes) 1, r3-i3 (p7 yes, p6 no) 1/2 -> mean 0.625.
    assert rows["humans", "position_consistency"]["value"] == pytest.approx(0.625)


def test_the_summary_states_accuracy_where_there_is_gold(gold_rows, bias_rows):
    report = {"bias": list(bias_rows.values()), "gold_accuracy": list(gold_rows.values())}
    cards = {c["subject"]: c for c in build_summary(report)}
    # A plain-only judge with no bias row still gets a card for its accuracy.
    assert set(cards) == {"humans", "arena", "mtb"}
    [line] = [c for c in cards["arena"]["claims"] if c["kind"] == "accuracy"]
    assert line["verdict"] == "not_enough_data" and line["value"] == pytest.approx(4 / 7)
    assert line["text"] == "not enough data for accuracy on gold labels (n = 7 gold pairs; need about 30)"
    # With enough pairs the line gives the number, its interval, n and how it was computed.
    many = gold_rows["arena", None] | {"n": 40, "correct": 30, "value": 0.75, "ci95": [0.6, 0.86], "both_orders": 40}
    assert gold_claim(many)["text"] == (
        "accuracy on gold labels 0.75 [0.60, 0.86] (40 gold pairs over 4 instructions; both presentations, "
        "JudgeBench rule: correct when the gold answer was chosen more often than the other)"
    )
    humans = gold_rows["humans", None] | {"n": 60, "correct": 45, "value": 0.75, "ci95": [0.6, 0.86]}
    assert gold_claim(humans)["text"].startswith(
        "accuracy on gold labels 0.75 [0.60, 0.86] (60 rater x pair units: 7 gold pairs, 4 raters, 4 instructions; "
        "each person's un-cued votes on a pair"
    )
    # No gold rows: no accuracy line on any card.
    plain = build_summary({"bias": list(bias_rows.values()), "gold_accuracy": []})
    assert not [c for card in plain for c in card["claims"] if c["kind"] == "accuracy"]


def test_the_rows_fit_the_schema_and_make_a_tidy_table(gold_rows, bias_rows):
    report = {
        "schema": "cobbler-report/1",
        "study": "fixture",
        "profile": "default",
        "generated_at": "2026-01-01T00:00:00",
        "bias": list(bias_rows.values()),
        "gold_accuracy": list(gold_rows.values()),
        "agreement": [],
        "length_control": {},
        "paper": {},
    }
    report["summary"] = build_summary(report)
    validate(report)
    [table] = [t for t in tidy_tables(report) if t.name == "gold_accuracy"]
    assert table.columns[:6] == ["subject", "category", "value", "n", "ci95_low", "ci95_high"]
    assert len(table.rows) == len(gold_rows)
    writing = next(r for r in table.rows if r["subject"] == "arena" and r["category"] == "writing")
    assert writing["ci95_low"] is None and writing["value"] == 1.0
