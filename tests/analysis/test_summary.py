"""The verdict summary (docs/methods.md "Verdict summary"): claims only where the report's own test,
after its correction, supports them; "not enough data" below the minimum n; the same cards at the
top of the JSON, in the HTML export and on the page."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from django.utils.html import escape

from analysis.exporters import export, validate
from analysis.models import ReportRun
from analysis.report import build_report
from analysis.summary import MIN_INSTRUCTIONS, MIN_PAIRS, build_summary
from analysis.summary.claims import length_claim
from analysis.tasks import build_report_run
from annotations.models import Study
from tests.analysis.test_summary_builders import summary_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def report():
    return build_report(study=summary_study(), profile="default")


def _card(report: dict, subject: str) -> dict:
    [card] = [c for c in report["summary"] if c["subject"] == subject]
    return card


def _claim(card: dict, statistic: str) -> dict:
    [claim] = [c for c in card["claims"] if c["statistic"] == statistic]
    return claim


def _row(report: dict, subject: str, bias: str) -> dict:
    [row] = [r for r in report["bias"] if r["subject"] == subject and r["bias"] == bias]
    return row


def test_summary_leads_the_json_after_the_metadata(report):
    assert list(report)[:6] == ["schema", "study", "profile", "profile_choices", "generated_at", "summary"]
    assert [c["subject"] for c in report["summary"]] == ["humans", "fair-judge", "first-judge", "tiny-judge"]
    validate(json.loads(export(report, "json")))


def test_a_strong_position_bias_on_enough_pairs_is_claimed_with_the_rows_numbers(report):
    row = _row(report, "first-judge", "position_preference")
    claim = _claim(_card(report, "first-judge"), "position_preference")
    assert row["n"] >= MIN_PAIRS and row["p_adjusted"] < 0.05
    assert claim["verdict"] == "biased" and claim["direction"] == "toward"
    # Every number is the bias row's, not a recomputation.
    assert (claim["rate"], claim["n"], claim["p"], claim["p_adjusted"], claim["ci95"], claim["baseline"]) == (
        row["value"],
        row["n"],
        row["p_value"],
        row["p_adjusted"],
        row["ci95"],
        row["null_value"],
    )
    assert claim["hits_rate"] == row["hits"] / row["n"] and claim["correction"] == "holm"
    card = _card(report, "first-judge")
    assert card["verdict"] == "biased"
    lo, hi = row["effect_ci95"]
    assert lo > 0 and row["effect"] == row["value"]  # the test and the effect's interval agree
    assert card["text"].startswith(
        f"Biased toward the first position ({row['value']:+.2f} [{lo:+.2f}, {hi:+.2f}]: first slot twice "
    )
    assert "Holm p < 0.001" in claim["text"]


def test_a_judge_with_no_significant_bias_says_no_evidence(report):
    row = _row(report, "fair-judge", "position_preference")
    claim = _claim(_card(report, "fair-judge"), "position_preference")
    assert row["n"] >= MIN_PAIRS and row["hits"] == row["mirror"] == 12 and row["p_adjusted"] == 1.0
    assert claim["verdict"] == "no_evidence"
    assert claim["text"] == (
        "no evidence of position bias (+0.00 [-0.08, +0.08]: first slot twice 0.10 vs last slot twice 0.10, "
        "n = 120 pairs over 12 instructions, Holm p = 1.00)"
    )


def test_two_pairs_are_not_enough_data(report):
    claim = _claim(_card(report, "tiny-judge"), "position_preference")
    assert claim["verdict"] == "not_enough_data" and claim["n"] == 2
    assert claim["text"] == f"not enough data for position bias (n = 2 pairs; need about {MIN_PAIRS})"
    assert _card(report, "tiny-judge")["verdict"] == "not_enough_data"
    # Its rankings cover one instruction: the RBO makes no claim either.
    rbo = _claim(_card(report, "tiny-judge"), "rbo_ext")
    assert rbo["verdict"] == "not_enough_data" and rbo["n"] < MIN_INSTRUCTIONS


def test_agreement_claims_carry_the_rbo_row_and_the_human_human_baseline(report):
    [row] = [
        r
        for r in report["agreement"]
        if r["kind"] == "human_vs_judge" and r["a"] == "humans" and r["b"] == "first-judge" and r["metric"] == "rbo_ext"
    ]
    [people] = [
        r
        for r in report["agreement"]
        if r["kind"] == "inter_annotator" and r["metric"] == "rbo_ext" and r["a"] == r["b"] == "all"
    ]
    claim = _claim(_card(report, "first-judge"), "rbo_ext")
    assert (claim["value"], claim["ci95"], claim["n"]) == (row["value"], row["ci95"], row["n"])
    assert (claim["baseline"], claim["baseline_ci95"]) == (people["value"], people["ci95"])
    assert claim["verdict"] == "measured"
    assert f"RBO {row['value']:.2f} [{row['ci95'][0]:.2f}, {row['ci95'][1]:.2f}]" in claim["text"]
    # The chance level comes with it, and decides the wording (docs/methods.md "Chance RBO").
    assert (claim["chance"], claim["chance_p"]) == (row["chance"]["value"], row["chance"]["p_above"])
    at_chance = row["chance"]["p_above"] >= 0.05
    assert ("no better than chance" in claim["text"]) == at_chance
    assert f"chance {row['chance']['value']:.2f}" in claim["text"]
    assert f"human-human {people['value']:.2f}" in claim["text"]


def test_the_humans_get_their_own_card(report):
    card = _card(report, "humans")
    assert card["kind"] == "humans"
    claim = _claim(card, "position_preference")
    assert claim["n"] == _row(report, "humans", "position_preference")["n"] and claim["verdict"] == "no_evidence"


def test_a_study_without_human_work_has_judge_cards_only():
    report = build_report(study=summary_study(humans=False), profile="default")
    assert [c["subject"] for c in report["summary"]] == ["fair-judge", "first-judge", "tiny-judge"]


def test_a_bias_measured_for_one_judge_and_not_another_is_named_as_missing():
    rows = [
        {
            "subject": "j1",
            "bias": "bandwagon",
            "value": 0.4,
            "n": 40,
            "hits": 16,
            "mirror": 2,
            "p_value": 0.001,
            "p_adjusted": 0.002,
            "null_value": 0.225,
            "random": 0.25,
            "ci95": [0.3, 0.5],
            "effect": 0.35,
            "effect_ci95": [0.2, 0.5],
            "clusters": 10,
        },
        {
            "subject": "j2",
            "bias": "position_preference",
            "value": 0.0,
            "n": 40,
            "hits": 0,
            "mirror": 0,
            "p_value": 1.0,
            "p_adjusted": 1.0,
            "null_value": 0.0,
            "random": 0.0,
            "ci95": [0.0, 0.0],
        },
    ]
    cards = {c["subject"]: c for c in build_summary({"bias": rows, "profile_choices": {"correction": "bh"}})}
    assert "Benjamini-Hochberg p = 0.002" in cards["j1"]["text"]
    assert cards["j1"]["text"].startswith(
        "Biased toward bandwagon cues (+0.35 [+0.20, +0.50]: followed the cue both times 0.40 vs against it "
        "both times 0.05, n = 40 pairs over 10 instructions"
    )
    [missing] = [c for c in cards["j2"]["claims"] if c["verdict"] == "no_data"]
    assert missing["biases"] == ["bandwagon"] and missing["text"] == (
        "bandwagon bias not measured (no counted judge calls on those conditions: launch a judge job with them)"
    )


def test_the_cards_are_in_the_html_export_and_on_the_page(report, researcher_client):
    html = export(report, "html").decode()
    for card in report["summary"]:
        assert f'data-subject="{card["subject"]}"' in html
    assert html.index('id="summary"') < html.index("<h2>Plots</h2>")
    study = Study.objects.get(slug=report["study"])
    run = ReportRun.objects.create(study=study, profile="default")
    build_report_run(run.pk)
    page = researcher_client.get(reverse("analysis:report", args=[study.slug])).content.decode()
    # Three judges wear their verdict; the humans are the neutral reference (issue 22).
    assert page.count('class="summary-card verdict-') == 3 and page.count('class="summary-card reference"') == 1
    first = _card(ReportRun.objects.get(pk=run.pk).result, "first-judge")
    assert escape(first["headline"]) in page and escape(first["headline"]) in html
    for claim in first["claims"]:  # one line per claim, the claim's own words, folded under the headline
        assert escape(claim["text"][0].upper() + claim["text"][1:]) in page


def test_judge_names_in_cards_are_escaped(report):
    hostile = "<img src=x onerror=alert(1)>"
    rows = [{**r, "subject": hostile} for r in report["bias"] if r["subject"] == "first-judge"]
    bad = {**report, "bias": report["bias"] + rows}
    bad["summary"] = build_summary(bad)
    html = export(bad, "html").decode()
    assert hostile not in html and escape(hostile) in html


@pytest.mark.parametrize(
    ("share", "agreement", "ci95", "words"),
    [
        (
            0.12,
            0.70,
            [0.6, 0.8],
            "length alone recovers 12% of its above-chance agreement with the human majority on order pairs (agreement 0.70",
        ),
        (
            None,
            0.50,
            [0.4, 0.6],
            "agrees with the human majority no better than chance on order pairs, so there is no "
            "agreement for length to explain (agreement 0.50 [0.40, 0.60]",
        ),
        # The demo's attentional run: a share of a near-zero excess (-642%) is no finding.
        (-6.42, 0.49, [0.33, 0.64], "agrees with the human majority no better than chance on order pairs"),
        (
            -0.40,
            0.70,
            [0.6, 0.8],
            # A share outside [0, 1] is not interpretable: never a percentage (issue 19 item 6).
            "length alone agrees with the human majority below chance on order pairs, so the share of agreement "
            "it explains is not interpretable (share -0.40)",
        ),
        (
            3.09,
            0.55,
            [0.51, 0.6],
            "length alone agrees with the human majority more than the judge does on order pairs, so the share "
            "of agreement it explains is not interpretable (share 3.09)",
        ),
    ],
)
def test_length_claims_read_the_length_control_row(share, agreement, ci95, words):
    row = {
        "judge": "j",
        "condition": "order",
        "agreement": agreement,
        "n": 40,
        "ci95": ci95,
        "headline_share": share,
        "verdict": "semantic",
    }
    claim = length_claim(row)
    assert claim["verdict"] == "measured" and claim["share"] == share and claim["text"].startswith(words)
    assert length_claim(row | {"n": 29})["verdict"] == "not_enough_data"
