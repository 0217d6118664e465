"""The bias battery (issue 24, Measures): robustness, the bias table's effect, judge minus humans.

Synthetic frames whose answers are known by construction: a judge that changes k of its n cued
verdicts has robustness (n - k) / n; a judge that follows every cue is further from no bias than
people who follow a quarter of them, and the difference's interval says so.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from analysis.exporters import export, validate
from analysis.exporters.json_export import SCHEMA_PATH
from analysis.metrics.battery import human_robustness_units, judge_robustness_units, robustness
from analysis.metrics.cluster_tests import _cr1, ratio_difference_t
from analysis.plots.base import house_style
from analysis.plots.battery import battery_plot
from analysis.profiles import get_profile
from analysis.sections import battery
from analysis.sections.bias import section_from_frames
from analysis.summary.work import empty_reasons
from annotations.biases import CALM, CUE_CONDITIONS
from tests.analysis.test_bias import make_judgments
from tests.analysis.test_plots_layout import layout_problems

DEFAULT = get_profile("default")
# The columns of loaders.human_pairwise_frame.
HUMAN_COLUMNS = [
    "rater", "rater_label", "batch", "instruction", "condition", "pair_index", "position", "pair", "resp_a",
    "resp_b", "arrangement", "cue_slot", "choice",
]  # fmt: skip
NO_HUMANS = pd.DataFrame(columns=HUMAN_COLUMNS)
HOSTILE = '=HYPERLINK("x")<b>judge</b>'  # a judge name that must stay text in the CSV and the HTML
NO_RESPONSES = pd.DataFrame(columns=["response", "candidate", "instruction", "text"])
NO_REVIEWS = pd.DataFrame(columns=["condition", "review", "counts"])


def with_plain(cued: pd.DataFrame, choose=lambda pair: "first") -> pd.DataFrame:
    """The cued calls plus one plain call per pair in the cued arrangement, choosing ``choose(pair)``."""
    plain = cued[cued["presentation"] == 1].assign(condition="plain", cue_slot=None)
    plain["choice"] = plain["pair"].map(choose)
    plain["valid"] = True
    frame = pd.concat([cued, plain], ignore_index=True)
    frame["chosen_is_a"] = frame["valid"] & ((frame["choice"] == "first") == frame["slot1_is_a"])
    return frame


def rows_for(judgments: pd.DataFrame, answers: pd.DataFrame = NO_HUMANS, responses=NO_RESPONSES) -> list[dict]:
    """The battery of these frames, through the bias section as the report builds it."""
    reviews = pd.DataFrame({"condition": answers["condition"].unique(), "review": "approved", "counts": True})
    bias_rows = section_from_frames(judgments, answers, responses, reviews, profile=DEFAULT)["bias"]
    return battery.from_frames(bias_rows, judgments, answers, responses, profile=DEFAULT)


def human_answers(follow, *, condition="bandwagon", n_inst=12, pairs_per_inst=5, raters_per_inst=2):
    """Twin answers of people: per instruction, its own raters answer each of its pairs twice (the cue
    on A, then on B), and one order rater per instruction answers the same pairs in both arrangements
    (always response a). ``follow(pair, rater)`` says whether that rater follows the cue (else A twice)."""
    rows = []
    for inst in range(n_inst):
        for j in range(pairs_per_inst):
            pair = inst * pairs_per_inst + j
            for r in range(raters_per_inst):
                rater = inst * 10 + r
                for twin, slot in enumerate("AB"):
                    choice = slot if follow(pair, rater) else "A"
                    rows.append((rater, condition, inst, pair, twin, "ab", slot, choice))
            order_rater = inst * 10 + 9
            for twin, arrangement in enumerate(("ab", "ba")):
                rows.append((order_rater, "order", inst, pair, twin, arrangement, None, "A" if twin == 0 else "B"))
    frame = pd.DataFrame(
        rows, columns=["rater", "condition", "instruction", "pair", "twin", "arrangement", "cue_slot", "choice"]
    )
    return frame.assign(
        rater_label=frame["rater"].astype(str),
        batch=frame["condition"] + "-" + frame["instruction"].astype(str),
        pair_index=frame["pair"],
        position=2 * frame["pair"] + frame["twin"],
        resp_a=2 * frame["pair"],
        resp_b=2 * frame["pair"] + 1,
    )[HUMAN_COLUMNS]


def responses_for(answers: pd.DataFrame) -> pd.DataFrame:
    ids = sorted(set(answers["resp_a"]) | set(answers["resp_b"]))
    return pd.DataFrame({"response": ids, "candidate": "c", "instruction": 0, "text": ["an answer"] * len(ids)})


# --- robustness -------------------------------------------------------------------------------


def test_a_judge_that_changes_k_of_n_cued_verdicts_has_robustness_n_minus_k_over_n():
    changed = {3, 10, 17, 29, 44}  # cued calls (by position) whose verdict differs from plain's "first"
    calls = iter(range(10_000))

    def answer(pair, presentation, slot1_is_a, cue):
        return "second" if next(calls) in changed else "first"

    cued = make_judgments(answer, condition="authority", n_inst=6)  # 60 pairs, 120 cued verdicts
    units, counts = judge_robustness_units(with_plain(cued))
    n = len(cued)
    result = robustness(units, unmatched=0, two_way=False)
    assert (result.n, result.pairs, result.clusters) == (n, 60, 6)
    assert result.rate == pytest.approx((n - len(changed)) / n)
    assert result.ci95[0] < result.rate < result.ci95[1] and result.df == 5
    assert counts.set_index("bias").loc["authority", ["answered", "matched"]].tolist() == [n, n]


def test_robustness_compares_the_same_arrangement_and_leaves_out_invalid_and_unmatched_verdicts():
    cued = make_judgments(lambda *_: "first", condition="verbosity", n_inst=6)
    cued.loc[0, ["choice", "valid"]] = ["", False]  # an invalid cued verdict: out of n, not unmatched
    frame = with_plain(cued)
    # Pair 1's plain call shows the other answer first: it is no reference for pair 1's cued calls.
    plain_1 = (frame["condition"] == "plain") & (frame["pair"] == 1)
    frame.loc[plain_1, "slot1_is_a"] = ~frame.loc[plain_1, "slot1_is_a"]
    rows = rows_for(frame)
    (row,) = rows
    block = row["robustness"]
    assert block["n"] == len(cued) - 1 - 2 and block["unmatched"] == 2
    assert block["rate"] == 1.0  # "first" under the cue and without it, arrangement by arrangement


def test_the_order_run_is_an_unperturbed_reference_in_both_arrangements():
    # CoBBLEr's judges have an order run and no plain run: each cued call meets the order call
    # that showed the same answer first. A judge that always picks response a never changes.
    picks_a = make_judgments(lambda n, pres, slot1_is_a, cue: "first" if slot1_is_a else "second", n_inst=5)
    cued = make_judgments(
        lambda n, pres, slot1_is_a, cue: "first" if slot1_is_a else "second", condition="bandwagon", n_inst=5
    )
    (row,) = rows_for(pd.concat([picks_a, cued], ignore_index=True))
    assert row["robustness"]["rate"] == 1.0 and row["robustness"]["n"] == len(cued)
    assert row["effect"]["estimate"] == 0.0 and row["effect"]["claim"] == "no_evidence"


def test_people_are_compared_with_the_unperturbed_answers_on_their_pair_and_arrangement():
    # Followers choose B when the cue is on B: one of their two cued answers differs from the order
    # rater's "A" (response a, arrangement ab); the others answer A twice and never differ.
    answers = human_answers(lambda pair, rater: pair % 4 == 0)
    units, _ = human_robustness_units(answers)
    cued = answers[answers["condition"] == "bandwagon"]
    changed = ((cued["pair"] % 4 == 0) & (cued["cue_slot"] == "B")).sum()
    assert len(units) == len(cued)  # the "ba" order answers are no reference for "ab" answers
    result = robustness(units, unmatched=0, two_way=True)
    assert result.rate == pytest.approx(1 - changed / len(cued))
    assert result.raters == 24 and result.clusters == 12
    assert "two-way" in result.interval and result.df == 11


# --- effect and judge minus humans --------------------------------------------------------------


def test_the_effect_is_the_bias_tables_own_row():
    answers = human_answers(lambda pair, rater: pair % 4 == 0)
    judge = with_plain(make_judgments(lambda n, pres, s, cue: cue, condition="bandwagon", n_inst=12))
    reviews = pd.DataFrame({"condition": ["bandwagon", "order"], "review": "approved", "counts": True})
    responses = responses_for(answers)
    bias_rows = section_from_frames(judge, answers, responses, reviews, profile=DEFAULT)["bias"]
    rows = battery.from_frames(bias_rows, judge, answers, responses, profile=DEFAULT)
    for row in rows:
        table = next(r for r in bias_rows if (r["subject"], r["bias"]) == (row["subject"], row["bias"]))
        assert row["effect"]["estimate"] == table["effect"] and row["effect"]["ci95"] == table["effect_ci95"]
        assert row["effect"]["p_adjusted"] == table["p_adjusted"] and row["n"] == table["n"]
    assert [r["subject"] for r in rows] == ["humans", "j"]  # people first: the reference


def test_a_judge_following_every_cue_is_further_from_no_bias_than_people():
    answers = human_answers(lambda pair, rater: pair % 4 == 0)
    follower = with_plain(make_judgments(lambda n, pres, s, cue: cue, condition="bandwagon", n_inst=12))
    humans, judge = rows_for(follower, answers, responses_for(answers))
    versus = judge["vs_humans"]
    assert humans["vs_humans"] is None and humans["vs_humans_reason"] == "people are the reference"
    assert versus["difference"] == pytest.approx(judge["effect"]["estimate"] - humans["effect"]["estimate"])
    assert versus["difference"] > 0.5 and versus["ci95"][0] > 0  # the judge is clearly more biased
    assert versus["ci95"][0] < versus["difference"] < versus["ci95"][1] and versus["p_value"] < 0.05
    assert judge["vs_humans_reason"] is None and versus["clusters"] == 12


def test_a_judge_biased_like_people_shows_no_difference():
    answers = human_answers(lambda pair, rater: pair % 4 == 0)
    # Follows the cue on pairs 1, 5, 9, ... where people follow it on 0, 4, 8, ...: the same share.
    alike = with_plain(
        make_judgments(lambda n, pres, s, cue: cue if n % 4 == 1 else "first", condition="bandwagon", n_inst=12)
    )
    _humans, judge = rows_for(alike, answers, responses_for(answers))
    low, high = judge["vs_humans"]["ci95"]
    assert low < 0 < high and judge["vs_humans"]["p_value"] > 0.05


def test_without_human_rows_the_difference_is_null_with_a_reason():
    cued = with_plain(make_judgments(lambda n, pres, s, cue: cue, condition="selective", n_inst=4))
    (row,) = rows_for(cued)
    assert row["vs_humans"] is None and "judge-only" in row["vs_humans_reason"]
    (row,) = rows_for(with_plain(make_judgments(lambda n, pres, s, cue: cue, condition="identity", n_inst=4)))
    assert row["vs_humans"] is None and row["vs_humans_reason"] == "no counted human answers on the identity condition"


def test_the_difference_interval_is_the_cr1_t_interval_over_shared_instructions():
    # Two ratios on 3 shared instructions, by hand: scores (d - E m) / M per unit, summed per cluster.
    d1, m1, c1 = np.array([2.0, 1.0, 3.0]), np.array([4.0, 4.0, 4.0]), np.array([0, 1, 2])
    d2, m2, c2 = np.array([1.0, 0.0, 1.0, 1.0]), np.array([2.0, 2.0, 2.0, 2.0]), np.array([0, 1, 2, 2])
    result = ratio_difference_t((d1, m1, c1), (d2, m2, c2))
    e1, e2 = 6 / 12, 3 / 8
    s = np.concatenate([(d1 - e1 * m1) / 12, -(d2 - e2 * m2) / 8])
    cluster_sums = np.bincount(np.concatenate([c1, c2]), weights=s)
    variance = 3 / 2 * np.sum(cluster_sums**2)
    assert result.effect == pytest.approx(e1 - e2) and result.df == 2
    assert result.se == pytest.approx(np.sqrt(variance))
    assert _cr1(s, np.concatenate([c1, c2]))[0] == pytest.approx(variance)
    assert result.ci95[0] == pytest.approx(e1 - e2 - 4.302652729911275 * np.sqrt(variance))


# --- the section, the schema and the exports ----------------------------------------------------


def test_no_cue_rows_means_an_empty_battery_with_a_reason():
    order_only = make_judgments(lambda *_: "first", n_inst=3)
    assert rows_for(order_only) == []
    reasons = empty_reasons({"bias": [{"bias": "order_first"}], "battery": [], "judge_jobs": [1]})
    assert "cue condition" in reasons["battery"]["reason"]
    assert "battery" not in empty_reasons({"bias": [], "battery": [{"subject": "j"}], "judge_jobs": [1]})


def calm_report() -> dict:
    """A minimal report whose bias and battery rows cover CALM's four biases, a judge and people."""
    frames = []
    for condition in CALM:
        cued = make_judgments(lambda n, pres, s, cue: cue if n % 3 else "first", condition=condition, n_inst=4)
        frames.append(with_plain(cued.assign(pair=cued["pair"] + 1000 * list(CUE_CONDITIONS).index(condition))))
    judge = pd.concat(frames, ignore_index=True).assign(judge=HOSTILE)
    answers = human_answers(lambda pair, rater: pair % 2 == 0, condition="authority", n_inst=4)
    answers["pair"] = answers["pair"] + 1000 * list(CUE_CONDITIONS).index("authority")  # the judge's pairs
    responses = responses_for(answers)
    reviews = pd.DataFrame({"condition": ["authority", "order"], "review": "approved", "counts": True})
    bias_rows = section_from_frames(judge, answers, responses, reviews, profile=DEFAULT)["bias"]
    report = {
        "schema": "cobbler-report/1",
        "study": "calm",
        "profile": "default",
        "profile_choices": DEFAULT.choices(),
        "generated_at": "2026-12-05T00:00:00+00:00",
        "bias": bias_rows,
        "battery": battery.from_frames(bias_rows, judge, answers, responses, profile=DEFAULT),
        "agreement": [],
        "length_control": {},
        "paper": {},
    }
    return json.loads(json.dumps(report))  # as stored: JSON numbers, no numpy scalars


def test_a_report_with_calm_rows_validates_and_the_schema_knows_every_registered_bias():
    report = calm_report()
    assert {r["bias"] for r in report["bias"]} >= set(CALM)
    assert {(r["subject"], r["bias"]) for r in report["battery"]} >= {("humans", "authority")}
    validate(report)
    schema = json.loads(SCHEMA_PATH.read_text())
    assert set(CUE_CONDITIONS) <= set(schema["$defs"]["bias_row"]["properties"]["bias"]["enum"])
    assert set(CUE_CONDITIONS) == set(schema["$defs"]["cue_bias"]["enum"])
    broken = json.loads(json.dumps(report))
    broken["battery"][0]["vs_humans_reason"] = None  # people's row has no difference: it must say why
    with pytest.raises(ValueError, match="battery"):
        validate(broken)


def test_the_judge_row_against_people_on_authority_has_a_difference():
    report = calm_report()
    row = next(r for r in report["battery"] if r["bias"] == "authority" and r["subject"] != "humans")
    people = next(r for r in report["battery"] if r["bias"] == "authority" and r["subject"] == "humans")
    assert row["vs_humans"]["difference"] == pytest.approx(row["effect"]["estimate"] - people["effect"]["estimate"])
    assert row["vs_humans"]["ci95"] is not None


def test_the_csv_bundle_has_a_tidy_battery_table_with_the_json_numbers():
    report = calm_report()
    archive = zipfile.ZipFile(io.BytesIO(export(report, "csv")))
    assert "battery.csv" in archive.namelist()
    rows = list(csv.DictReader(io.StringIO(archive.read("battery.csv").decode())))
    assert len(rows) == len(report["battery"])
    for got, want in zip(rows, report["battery"], strict=True):
        assert got["bias"] == want["bias"] and float(got["robustness"]) == want["robustness"]["rate"]
        assert float(got["effect"]) == want["effect"]["estimate"]
        low = want["robustness"]["ci95"][0]
        assert float(got["robustness_ci95_low"]) == low
    judge = next(r for r in rows if r["subject"] != "humans")
    assert judge["subject"].startswith("'=")  # the CSV safety helper: no formula runs in a spreadsheet


def test_the_html_report_shows_the_battery_table_escaped():
    html = export(calm_report(), "html").decode()
    assert 'data-column="robustness"' in html and "Bias battery" in html
    assert "<b>judge</b>" not in html and "&lt;b&gt;judge&lt;/b&gt;" in html


def test_the_battery_plot_is_laid_out_cleanly_and_says_when_there_is_no_data():
    report = calm_report()
    with house_style():
        plot = battery_plot(report)
        assert layout_problems(plot) == []
        ax = plot.figure.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == list(CALM)
        empty = battery_plot(report | {"battery": []})
        assert not empty.figure.axes[0].axison  # the "no data" panel
    assert "robustness" in plot.caption and "n = " in plot.caption


# --- the demo, end to end (issue 24: "the report has the battery table for the simulated judge
# and for simulated people"; an injected authority bias is measured within its interval) -------


@pytest.mark.slow
@pytest.mark.django_db
def test_the_demo_report_has_the_battery_for_a_cued_judge_and_for_people(demo_study):
    from analysis.report import build_report
    from judging import services
    from judging.models import RegisteredModel
    from judging.simulator.server import SimulatorServer
    from tests.analysis.conftest import run_in_process

    knob = 0.6
    server = SimulatorServer(max_concurrency=64).start_in_thread()
    try:
        judge = services.create_judge(
            name="calm-judge",
            base_url=server.base_url,
            model=f"sim:authority={knob},seed=5",
            max_concurrency=16,
            requests_per_minute=0,
            request_timeout=10.0,
            transport=RegisteredModel.Transport.HTTP,
        )
        job = services.start_judge_job(
            study=demo_study, judge=judge, condition_names=[*CALM, "bandwagon", "order"], seed=3
        )
        run_in_process(job)
    finally:
        server.stop()
    report = build_report(study=demo_study, profile="default")
    validate(json.loads(export(report, "json")))  # authority ... identity rows are in the contract
    rows = {(r["subject"], r["bias"]): r for r in report["battery"]}
    assert {("humans", "bandwagon"), ("humans", "attentional")} <= set(rows)
    assert {("calm-judge", b) for b in CALM} <= set(rows)
    authority = rows[("calm-judge", "authority")]
    low, high = authority["effect"]["ci95"]
    assert authority["effect"]["claim"] == "biased" and low <= knob <= high
    for bias in CALM[1:]:  # no knob: no claim
        assert rows[("calm-judge", bias)]["effect"]["claim"] == "no_evidence"
    # The order run shows each pair in both arrangements: every cued verdict has its reference.
    assert all(rows[("calm-judge", b)]["robustness"]["unmatched"] == 0 for b in CALM)
    assert authority["robustness"]["rate"] < min(rows[("calm-judge", b)]["robustness"]["rate"] for b in CALM[1:])
    versus = rows[("calm-judge", "bandwagon")]["vs_humans"]
    assert versus is not None and versus["ci95"] is not None
    assert versus["difference"] == pytest.approx(
        rows[("calm-judge", "bandwagon")]["effect"]["estimate"] - rows[("humans", "bandwagon")]["effect"]["estimate"]
    )
    # The demo's people answer every CALM condition too: the judge stands beside them on each.
    for bias in CALM:
        assert ("humans", bias) in rows and rows[("calm-judge", bias)]["vs_humans"] is not None
    archive = zipfile.ZipFile(io.BytesIO(export(report, "csv")))
    assert len(list(csv.DictReader(io.StringIO(archive.read("battery.csv").decode())))) == len(report["battery"])
