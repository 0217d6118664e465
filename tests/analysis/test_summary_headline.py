"""Each verdict card's headline (issue 22): one sentence from the card's own claims, saying only
what they support; the humans described as the reference; readable table headers on the page
and in the HTML export, with the CSV keys unchanged."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from analysis.exporters import export, to_html
from analysis.exporters.column_words import column_label, table_label
from analysis.report import build_report
from analysis.summary.cards import _card
from analysis.summary.claims import MIN_PAIRS, MIN_VOTES, bias_claim, percent_claim, rbo_claim
from analysis.summary.headline import headline
from tests.analysis.test_summary_builders import summary_study


def _position(subject: str, *, hits: int, mirror: int, n: int = 120, p: float = 0.001, ci=(0.1, 0.3)) -> dict:
    effect = (hits - mirror) / n
    return bias_claim(
        {
            "subject": subject,
            "bias": "position_preference",
            "n": n,
            "value": effect,
            "hits": hits,
            "mirror": mirror,
            "null_value": 0.0,
            "random": 0.0,
            "effect": effect,
            "effect_ci95": list(ci),
            "clusters": 12,
            "ci95": list(ci),
            "p_value": p,
            "p_adjusted": p,
        },
        correction="holm",
    )


def _percent(subject: str, *, value: float, ci, chance: float, kappa_ci, n: int = 300, instructions: int = 12) -> dict:
    row = {
        "b": subject,
        "a": "humans:order",
        "condition": "order",
        "value": value,
        "ci95": list(ci),
        "chance": chance,
        "kappa": sum(kappa_ci) / 2,
        "kappa_ci95": list(kappa_ci),
        "n": n,
        "n_instructions": instructions,
    }
    baseline = {"value": 0.72, "ci95": [0.66, 0.78], "n": 240}
    return percent_claim(row, baseline)


def test_a_judge_with_a_claimed_position_bias_and_agreement_says_both():
    claims = [
        _position("j", hits=40, mirror=4),
        _percent("j", value=0.68, ci=(0.62, 0.74), chance=0.5, kappa_ci=(0.2, 0.45)),
    ]
    assert claims[0]["verdict"] == "biased" and claims[1]["above_chance"] is True
    card = _card("j", "judge", claims)
    assert card["headline"] == (
        "Agrees with people 68% on order pairs (people agree with each other 72%); prefers the first answer; "
        "use it only where those cues are controlled."
    )


def test_a_judge_at_chance_never_agrees_and_no_bias_is_not_preferred():
    claims = [
        _position("j", hits=12, mirror=12, p=1.0, ci=(-0.08, 0.08)),
        _percent("j", value=0.51, ci=(0.45, 0.57), chance=0.52, kappa_ci=(-0.1, 0.1)),
    ]
    assert claims[0]["verdict"] == "no_evidence" and claims[1]["above_chance"] is False
    text = _card("j", "judge", claims)["headline"]
    assert "agrees" not in text.lower() and "prefers" not in text and "biased" not in text
    assert text == (
        "Matches people no better than chance on order pairs (51% vs chance 52%, people with each other 72%); "
        "no evidence of position bias; do not use its verdicts in place of people's."
    )


def test_an_interval_away_from_zero_is_never_called_no_evidence():
    """Holm p = 0.12 beside an interval of [+0.03, +0.16] (the demo's Humans card once read "no
    evidence of position bias" so): no claim, and words that do not contradict the numbers."""
    unclear = _position("j", hits=17, mirror=6, n=120, p=0.12, ci=(0.03, 0.16))
    assert unclear["verdict"] == "no_evidence"
    assert unclear["text"].startswith(
        "no clear evidence of position bias: its interval excludes 0, but the test does not hold once corrected"
    )
    settled = _position("j", hits=12, mirror=12, p=1.0, ci=(-0.08, 0.08))
    assert settled["text"].startswith("no evidence of position bias (")
    percent = _percent("j", value=0.51, ci=(0.45, 0.57), chance=0.52, kappa_ci=(-0.1, 0.1))
    assert "no evidence of position" not in _card("j", "judge", [unclear, percent])["headline"]
    assert "no evidence of position bias" in _card("j", "judge", [settled, percent])["headline"]


def _rbo_row(value: float, ci95: list[float], chance: dict, *, n: int = 12) -> dict:
    """A judge's human_vs_judge RBO row against the humans' consensus."""
    return {"b": "j", "a": "humans", "metric": "rbo_ext", "value": value, "ci95": ci95, "n": n, "chance": chance}


def test_a_judge_whose_rankings_are_at_chance_never_agrees():
    row = _rbo_row(0.66, [0.62, 0.70], {"value": 0.67, "p_above": 0.69})
    claim = rbo_claim(row, {"value": 0.86, "ci95": [0.81, 0.91], "n": 5})
    text = headline({"kind": "judge", "claims": [claim]})
    assert text == (
        "Ranks answers no better than chance against people (RBO 0.66 vs chance 0.67, people with each other "
        "0.86); do not use its verdicts in place of people's."
    )
    # Without a chance level the RBO is reported, never read as agreement.
    unknown = rbo_claim(row | {"chance": None}, None)
    assert "agrees" not in headline({"kind": "judge", "claims": [unknown]}).lower()


@pytest.mark.parametrize(
    ("ci95", "line", "words"),
    [
        # The demo's simulated judge: the permutation test alone says above, its interval reaches chance.
        (
            [0.66, 0.80],
            "ranks answers not clearly above chance against humans (RBO 0.73 [0.66, 0.80] vs chance 0.67, "
            "permutation p = 0.039, but the interval reaches chance, over 12 instructions)",
            "Ranks answers not clearly above chance against people (RBO 0.73 vs chance 0.67",
        ),
        (
            [0.69, 0.80],
            "agrees with humans RBO 0.73 [0.69, 0.80] over 12 instructions, above chance 0.67 (permutation p = 0.039)",
            "Agrees with people's rankings above chance (RBO 0.73 vs chance 0.67",
        ),
    ],
)
def test_rankings_agree_above_chance_only_when_the_test_and_the_interval_both_say_so(ci95, line, words):
    row = _rbo_row(0.73, ci95, {"value": 0.67, "p_above": 0.039})
    claim = rbo_claim(row, None)
    assert claim["text"].startswith(line) and claim["above_chance"] is ("agrees" in line)
    assert headline({"kind": "judge", "claims": [claim]}).startswith(words)


def test_rankings_that_run_against_peoples_are_below_chance_not_merely_at_it():
    # The CoBBLEr import's alpaca: RBO 0.19 where random orderings give 0.32.
    row = _rbo_row(0.19, [0.17, 0.21], {"value": 0.32, "range95": [0.29, 0.35], "p_above": 1.0}, n=50)
    claim = rbo_claim(row, None)
    assert claim["below_chance"] and not claim["above_chance"]
    assert claim["text"].startswith(
        "ranks answers below chance against humans (RBO 0.19 [0.17, 0.21] vs chance 0.32, below the chance "
        "range [0.29, 0.35], over 50 instructions)"
    )
    assert headline({"kind": "judge", "claims": [claim]}).startswith(
        "Ranks answers against people's order, below chance (RBO 0.19 vs chance 0.32)"
    )
    # Inside the null's range, or an interval reaching chance: at chance, never "below".
    for changed in ({"value": 0.30, "ci95": [0.27, 0.31]}, {"ci95": [0.17, 0.33]}):
        assert "below" not in rbo_claim(row | changed, None)["text"]


def test_a_judge_without_human_votes_is_not_said_to_agree():
    text = _card("j", "judge", [_position("j", hits=40, mirror=4)])["headline"]
    assert text == "Not compared with people (no human votes on its pairs); prefers the first answer."


def test_the_humans_are_described_not_charged():
    claims = [_position("humans", hits=18, mirror=6)]
    assert claims[0]["verdict"] == "biased"  # the claim is the same as a judge's would be
    card = _card("humans", "humans", claims)
    assert card["verdict"] == "biased"
    text = card["headline"]
    assert "biased" not in text and "prefers" not in text
    assert text == (
        "They chose the first answer more often (15% of pairs vs 5% the other way); "
        "they are the reference the judges are read against."
    )


def test_not_enough_data_says_so_with_its_numbers():
    claims = [
        _position("j", hits=2, mirror=0, n=8),
        _percent("j", value=0.6, ci=(0.3, 0.9), chance=0.5, kappa_ci=(-0.2, 0.6), n=12, instructions=3),
    ]
    assert {c["verdict"] for c in claims} == {"not_enough_data"}
    text = _card("j", "judge", claims)["headline"]
    assert text == f"Not enough data yet for a verdict on this judge (largest n = 12 votes; need about {MIN_VOTES})."
    assert "agrees" not in text.lower()
    # Agreement measured but the bias test short of pairs: each part says what it can.
    mixed = [
        _position("j", hits=2, mirror=0, n=8),
        _percent("j", value=0.51, ci=(0.45, 0.57), chance=0.52, kappa_ci=(-0.1, 0.1)),
    ]
    assert f"not enough data yet for bias tests (largest n = 8 pairs; need about {MIN_PAIRS})" in headline(
        {"kind": "judge", "claims": mixed}
    )


def test_a_judge_with_no_completed_job_has_nothing_measured():
    claim = {
        "kind": "bias",
        "subject": "j",
        "statistic": "not measured",
        "verdict": "no_data",
        "n": 0,
        "jobs": [3],
        "text": "nothing measured yet: no completed judge job (job 3 running); only completed jobs count, "
        "watch or resume them on the judging page",
    }
    assert _card("j", "judge", [claim])["headline"] == "Nothing measured yet: no completed judge job (job 3 running)."


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("position_preference", "Position preference"),
        ("p_adjusted", "Holm-adjusted p"),
        ("ci95", "95% interval"),
        ("ci95_low", "95% interval, low"),
        ("effect_ci95_high", "Effect, 95% interval, high"),
        ("vs_humans.kendall_tau", "Vs humans: Kendall tau"),
        ("chance.value", "Chance level: value"),
        ("some_new_column", "Some new column"),
    ],
)
def test_column_keys_read_as_words(key, words):
    assert column_label(key, correction="holm") == words


def test_the_adjusted_p_names_the_profiles_correction():
    assert column_label("p_adjusted", correction="bh") == "Benjamini-Hochberg-adjusted p"
    assert column_label("p_adjusted") == "Adjusted p"
    assert table_label("bias_reference") == "Length and self-preference against a reference"


# --- on a computed report -----------------------------------------------------------------------


@pytest.fixture
def report(db):
    return build_report(study=summary_study(), profile="default")


def test_every_headline_of_a_report_says_only_what_its_claims_support(report):
    for card in report["summary"]:
        text, claims = card["headline"], card["claims"]
        above = any(c.get("above_chance") or (c.get("chance_p") is not None and c["chance_p"] < 0.05) for c in claims)
        assert ("agrees with people" in text.lower()) <= above, card["subject"]
        biased = any(c["verdict"] == "biased" for c in claims)
        assert ("prefers" in text or "follows" in text) <= (biased and card["kind"] == "judge"), card["subject"]
    heads = {c["subject"]: c["headline"] for c in report["summary"]}
    assert "prefers the first answer" in heads["first-judge"]
    assert "no evidence of position or length bias" in heads["fair-judge"]
    assert heads["tiny-judge"].startswith("Not enough data yet for a verdict")
    assert heads["humans"].endswith("they are the reference the judges are read against.")


def test_the_humans_card_wears_no_biased_badge_even_when_people_lean(report):
    # Make people's position row a claimed lean: the humans' card keeps its data, not a red badge.
    people = dict(next(c for c in report["summary"] if c["subject"] == "humans"))
    people["verdict"] = "biased"
    people["lines"] = [
        {
            "text": "biased toward the first position (+0.20 ...)",
            "verdict": "biased",
            "statistic": "position_preference",
        }
    ]
    html = to_html({**report, "summary": [people, *report["summary"][1:]]}, figures=[]).decode()
    start = html.index('data-subject="humans"')
    humans = html[html.rindex("<article", 0, start) : html.index("</article>", start)]
    assert "verdict-biased" not in humans and 'class="badge reference">the reference<' in humans
    assert 'data-verdict="biased"' in humans  # the data stays
    assert "Leaned toward the first position" in humans and "Biased toward" not in humans
    # A judge still wears its verdict; the findings fold under the headline, closed by default.
    assert 'class="badge verdict-biased">biased<' in html
    assert '<details class="summary-findings">' in html and "<details open" not in html
    assert html.index(people["headline"]) < html.index('<details class="summary-findings">', start)


def test_tables_have_readable_headers_and_the_csv_keeps_its_keys(report):
    html = export(report, "html").decode()
    assert '<th scope="col" data-column="p_adjusted">Holm-adjusted p</th>' in html
    assert '<th scope="col" data-column="ci95_low">95% interval, low</th>' in html
    assert "<th>p_adjusted</th>" not in html and "<th>ci95_low</th>" not in html
    assert ">Bias tests <small" in html  # the table's name in words, its CSV file beside it
    with zipfile.ZipFile(io.BytesIO(export(report, "csv"))) as bundle:
        header = next(csv.reader(io.StringIO(bundle.read("bias.csv").decode())))
    assert "p_value" in header and "ci95_low" in header and "Holm-adjusted p" not in header
