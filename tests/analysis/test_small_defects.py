"""Issue 19 item 6, on frames built in memory: a tie is never a slot or a response, salience keeps
both-answered pairs under one rule for judges and humans, a length share outside [0, 1] is never
a percentage, and a card says each line once (docs/methods.md "Rows, hits and mirrors",
"Length control", "Verdict summary")."""

from __future__ import annotations

import pandas as pd
import pytest
from django.template.loader import render_to_string

from analysis.exporters.html_export import _headline
from analysis.metrics.bias import judge_bias_counts
from analysis.metrics.human_bias import human_bias_records
from analysis.profiles import get_profile
from analysis.summary.cards import _card
from analysis.summary.claims import length_claim, percent_claim

PAPER, DEFAULT = get_profile("cobbler-paper"), get_profile("default")


# --- humans -------------------------------------------------------------------------------


def _human_pair(pair: int, condition: str, votes: tuple[str, str], *, units=(20, 10)) -> list[dict]:
    """One rater's twin tasks on one pair: order swaps the slots (ab, ba), the cue studies move the cue (A, B)."""
    rows = []
    for twin, choice in enumerate(votes):
        order = condition == "order"
        rows.append(
            {
                "rater": 1,
                "batch": condition,
                "instruction": 0,
                "condition": condition,
                "pair_index": pair,
                "position": 2 * pair + twin,
                "resp_a": 2 * pair,
                "resp_b": 2 * pair + 1,
                "arrangement": ("ab", "ba")[twin] if order else "ab",
                "cue_slot": None if order else ("A", "B")[twin],
                "choice": choice,
                "units_a": units[0],
                "units_b": units[1],
            }
        )
    return rows


def _records(pairs: list[list[dict]], *, denominator: str = "valid") -> pd.DataFrame:
    answers = pd.DataFrame([row for pair in pairs for row in pair])
    return human_bias_records(answers, denominator=denominator).set_index("bias")


def _counts(records: pd.DataFrame, bias: str) -> tuple[int, int, int]:
    row = records.loc[bias]
    return int(row["hits"]), int(row["mirror"]), int(row["n"])


def test_a_tie_in_an_order_twin_is_no_slot_but_stays_an_answered_pair():
    records = _records(
        [
            _human_pair(0, "order", ("T", "T")),  # before: "the same slot twice"
            _human_pair(1, "order", ("A", "T")),
            _human_pair(2, "order", ("A", "A")),  # first twice
            _human_pair(3, "order", ("B", "B")),  # last twice
        ]
    )
    assert _counts(records, "order_first") == (1, 1, 4)
    assert _counts(records, "order_last") == (1, 1, 4)


@pytest.mark.parametrize("denominator", ["valid", "all"])
def test_a_tie_is_never_a_response_in_human_salience(denominator):
    # Response a (20 units) is the longer. "T" on ab was read as slot B = response b, and "A" on
    # ba is response b: the old reading counted "the shorter chosen twice".
    records = _records(
        [
            _human_pair(0, "order", ("T", "A")),
            _human_pair(1, "order", ("B", "T")),  # "T" on ba was read as slot A = response b
            _human_pair(2, "order", ("T", "T")),
            _human_pair(3, "order", ("A", "B")),  # response a twice: the longer, consistently
        ],
        denominator=denominator,
    )
    assert _counts(records, "salience_longer") == (1, 0, 1)


def test_a_tie_neither_follows_nor_goes_against_a_cue():
    for condition in ("bandwagon", "attentional"):
        records = _records(
            [
                _human_pair(0, condition, ("T", "T")),
                _human_pair(1, condition, ("A", "T")),
                _human_pair(2, condition, ("A", "B")),  # followed the cue twice
                _human_pair(3, condition, ("B", "A")),  # against it twice
            ]
        )
        assert _counts(records, condition) == (1, 1, 4)


def test_equal_lengths_leave_the_human_salience_n_by_default_and_stay_in_it_as_the_authors_had_it():
    pairs = [
        _human_pair(0, "order", ("A", "B"), units=(10, 10)),  # consistent, equal lengths
        _human_pair(1, "order", ("A", "B")),  # consistent, the longer chosen
    ]
    assert _counts(_records(pairs, denominator="valid"), "salience_longer") == (1, 0, 1)
    assert _counts(_records(pairs, denominator="all"), "salience_longer") == (1, 0, 2)


# --- judges -------------------------------------------------------------------------------


def _judge_pair(pair: int, choices: tuple[str, str], *, lengths=(200, 100)) -> list[dict]:
    """A judge's two prompts on one order pair: prompt 1 shows a first, prompt 2 swaps the slots."""
    rows = []
    for presentation, choice in zip((1, 2), choices, strict=True):
        slot1_is_a = presentation == 1
        rows.append(
            {
                "judge": "j",
                "self_key": "",
                "job": 1,
                "instruction": pair,
                "pair": pair,
                "cand_a": "m1",
                "cand_b": "m2",
                "len_a": lengths[0],
                "len_b": lengths[1],
                "condition": "order",
                "presentation": presentation,
                "slot1_is_a": slot1_is_a,
                "choice": choice,
                "chosen_is_a": bool(choice) and ((choice == "first") == slot1_is_a),
                "valid": bool(choice),
                "cue_slot": None,
            }
        )
    return rows


def _salience(pairs: list[list[dict]], profile) -> tuple[int, int, int]:
    frame = pd.DataFrame([row for pair in pairs for row in pair])
    row = judge_bias_counts(frame, profile=profile).set_index("bias").loc["salience_longer"]
    return int(row["hits"]), int(row["mirror"]), int(row["n_valid"])


def test_a_half_invalid_pair_is_no_kept_salience_pair_by_default():
    pairs = [
        _judge_pair(0, ("first", "")),  # prompt 1 chose the longer (a), prompt 2 unparsed
        _judge_pair(1, ("first", "second")),  # the longer (a) in both presentations
        _judge_pair(2, ("second", "first")),  # the shorter (b) in both presentations
        _judge_pair(3, ("first", "first")),  # the same slot twice: not kept by either rule
        _judge_pair(4, ("first", "second"), lengths=(100, 100)),  # equal lengths
    ]
    assert _salience(pairs, DEFAULT) == (1, 1, 2)
    # The authors' rule is kept as it was: prompt 1 valid and not the same slot twice (the
    # half-invalid pair included), equal lengths credited to m2 (b).
    assert _salience(pairs, PAPER) == (2, 2, 4)


# --- length control -----------------------------------------------------------------------


LENGTH_ROW = {
    "judge": "j",
    "condition": "attentional",
    "agreement": 0.71,
    "n": 40,
    "ci95": [0.6, 0.8],
    "verdict": "semantic",
    "matched_agreement": 0.7,
    "matched_n": 20,
    "matched_null_agreement": 0.5,
}


@pytest.mark.parametrize(
    ("share", "reason"),
    [
        (-6.42, "length alone agrees with the human majority below chance on attentional pairs, so the share of "
         "agreement it explains is not interpretable (share -6.42)"),
        (3.09, "length alone agrees with the human majority more than the judge does on attentional pairs, so "
         "the share of agreement it explains is not interpretable (share 3.09)"),
    ],
)  # fmt: skip
def test_a_share_outside_zero_to_one_is_not_interpretable_and_never_a_percentage(share, reason):
    claim = length_claim(LENGTH_ROW | {"headline_share": share})
    assert claim["share_meaningful"] is False and claim["share"] == share
    assert claim["text"].startswith(reason) and "%" not in claim["text"]
    card = _card("j", "judge", [claim])
    assert card["claims"][0]["estimate"] is None and "%" not in card["text"]
    headline = _headline(LENGTH_ROW | {"headline_share": share})
    assert headline["share_percent"] is None and "not interpretable" in headline["share_reason"]
    page = render_to_string("analysis/_report_body.html", {"report": {}, "headlines": [headline]})
    assert "not interpretable" in page and "%" not in page.split("Length control")[1]


def test_a_share_inside_zero_to_one_is_a_percentage():
    claim = length_claim(LENGTH_ROW | {"headline_share": 0.12})
    assert (
        claim["share_meaningful"] is True and "length alone recovers 12% of its above-chance agreement" in claim["text"]
    )
    assert _headline(LENGTH_ROW | {"headline_share": 0.12})["share_percent"] == "12%"


# --- cards --------------------------------------------------------------------------------


def _agreement_row(condition: str, n: int) -> dict:
    return {
        "a": "humans:all",
        "b": "j",
        "condition": condition,
        "value": 0.6,
        "ci95": None,
        "n": n,
        "n_instructions": 1,
    }


def test_a_card_says_each_not_enough_data_line_once_and_keeps_every_claim():
    claims = [
        percent_claim(_agreement_row(c, n), None) for c, n in (("order", 2), ("bandwagon", 4), ("attentional", 0))
    ]
    length = [
        length_claim(LENGTH_ROW | {"condition": c, "n": 5, "headline_share": None}) for c in ("order", "bandwagon")
    ]
    duplicate = {"kind": "bias", "subject": "j", "verdict": "no_data", "n": 0, "text": "nothing measured yet"}
    card = _card("j", "judge", [*claims, *length, duplicate, dict(duplicate)])
    assert len(card["claims"]) == 7  # the JSON keeps one claim per statistic and condition
    texts = [line["text"] for line in card["lines"]]
    assert len(texts) == 3 and len(set(card["text"].split("; "))) == len(card["text"].split("; "))
    # The agreement lines' own words belong to percent_claim; the merge names every condition once.
    agreement = texts[0]
    assert agreement.startswith(
        "not enough data for agreement with human votes on order, bandwagon and attentional pairs ("
    )
    assert all(f"{c}: {n} " in agreement for c, n in (("order", 2), ("bandwagon", 4), ("attentional", 0)))
    assert texts[1:] == [
        "not enough data for length control on order and bandwagon pairs (n = 5 each; need about 30 keys with a "
        "decisive human majority)",
        "nothing measured yet",
    ]
    assert card["text"] == "; ".join([texts[0][0].upper() + texts[0][1:], *texts[1:]]) + "."
    page = render_to_string("analysis/_report_body.html", {"report": {"summary": [card]}, "summary": [card]})
    assert page.lower().count("not enough data for agreement") == 1 and page.lower().count("nothing measured yet") == 1


def test_identical_lines_merge_and_different_lines_stay():
    same = {"kind": "bias", "subject": "j", "verdict": "not_enough_data", "n": 2, "text": "not enough data (n = 2)"}
    other = same | {"text": "not enough data for position bias (n = 3; need about 30)", "bias": "position_preference"}
    card = _card("j", "judge", [same, dict(same), other])
    assert [line["text"] for line in card["lines"]] == [same["text"], other["text"]]


def test_the_same_condition_twice_with_one_text_is_one_line():
    row = LENGTH_ROW | {"n": 5, "headline_share": None}
    card = _card("j", "judge", [length_claim(row), length_claim(row)])
    assert [line["text"] for line in card["lines"]] == [length_claim(row)["text"]]


def _votes_row(*, kappa_ci95: list[float], kappa_p: float, ci95: list[float]) -> dict:
    return {
        "kind": "human_vs_judge",
        "metric": "percent",
        "a": "humans:order",
        "b": "j",
        "condition": "order",
        "value": 0.63,
        "ci95": ci95,
        "chance": 0.66,
        "kappa": 0.0,
        "kappa_ci95": kappa_ci95,
        "kappa_p": kappa_p,
        "n": 350,
        "n_instructions": 12,
    }


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        # The demo's length-only judge: 0.68 with the majority, no better than chance with the votes.
        (
            _votes_row(kappa_ci95=[-0.26, 0.06], kappa_p=0.9, ci95=[0.52, 0.72]),
            "agrees with human votes no better than chance on order pairs, so there is no above-chance agreement "
            "for length to explain (with the human majority 0.68 [0.56, 0.79], n = 57)",
        ),
        (
            _votes_row(kappa_ci95=[0.2, 0.5], kappa_p=0.001, ci95=[0.75, 0.85]),
            "length alone recovers 70% of its above-chance agreement with the human majority on order pairs",
        ),
    ],
)
def test_the_length_line_finds_above_chance_agreement_only_where_the_votes_line_does(votes, expected):
    from analysis.summary.cards import build_summary

    length = LENGTH_ROW | {"condition": "order", "agreement": 0.68, "ci95": [0.56, 0.79], "n": 57}
    report = {"agreement": [votes], "length_control": {"judge_vs_human": [length | {"headline_share": 0.7}]}}
    (card,) = build_summary(report)
    (line,) = [c for c in card["claims"] if c["kind"] == "length"]
    assert line["text"].startswith(expected)
    assert line["share_meaningful"] is ("%" in expected)
    assert ("70%" in card["text"]) is ("%" in expected)
