"""The study settings' surveys and quality rules as form fields, with the raw JSON box as the
advanced option: both reach the same validators and store the same JSON; bad input changes nothing."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from annotations.models import Study
from tests.annotations.conftest import build_study

HTMX = {"HX-Request": "true"}
SURVEYS = {
    "pre": [{"id": "age", "text": "Your age?", "kind": "text", "required": False}],
    "post": [
        {"id": "clear", "text": "Were the tasks clear?", "kind": "choice", "required": True, "choices": ["yes", "no"]},
        {"id": "effort", "text": "How hard was it?", "kind": "scale", "required": False, "min": 1, "max": 5},
    ],
}
RULES = {"min_median_seconds": 6.0, "gold_fail_max": 2, "majority_disagreement_max": 0.4}


class _SettingsForm(HTMLParser):
    """The fields of #settings-form as a browser would post them (no JS needed)."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._inside = False
        self._textarea: str | None = None
        self._select: str | None = None
        self._first_option: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "form":
            self._inside = a.get("id") == "settings-form"
        if not self._inside:
            return
        name = a.get("name")
        if tag == "input" and name and a.get("type") != "submit":
            if a.get("type") == "checkbox":
                if "checked" in a:
                    self.data[name] = "on"
            else:
                self.data[name] = a.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""
        elif tag == "select" and name:
            self._select, self._first_option = name, None
        elif tag == "option" and self._select:
            if self._first_option is None:
                self._first_option = a.get("value", "")
            if "selected" in a:
                self.data[self._select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select" and self._select:
            self.data.setdefault(self._select, self._first_option or "")
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea] += data


def _shown(client, study: Study) -> dict[str, str]:
    page = client.get(reverse("annotations:study", args=[study.slug]))
    assert page.status_code == 200
    parser = _SettingsForm()
    parser.feed(page.content.decode())
    # A textarea's first newline is not part of its value (HTML), as in a browser.
    return {k: v[1:] if v.startswith("\n") else v for k, v in parser.data.items()}


def _post(client, study: Study, data: dict):
    return client.post(reverse("annotations:study-settings", args=[study.slug]), data, headers=HTMX)


@pytest.fixture
def study(db, researcher) -> Study:
    return build_study("fields", instructions=1, created_by=researcher)


def test_the_fields_show_what_is_saved_and_post_back_unchanged(researcher_client, study):
    Study.objects.filter(pk=study.pk).update(surveys=SURVEYS, quality_rules=RULES)
    data = _shown(researcher_client, study)
    assert data["survey-TOTAL_FORMS"] == "4" and data["survey-INITIAL_FORMS"] == "3"  # three questions, one blank row
    assert (data["survey-1-qid"], data["survey-1-kind"], data["survey-1-choices"]) == ("clear", "choice", "yes\nno")
    assert (data["survey-2-low"], data["survey-2-high"], data["survey-1-required"]) == ("1", "5", "on")
    assert data["rule_min_median_seconds"] == "6.0" and data["rule_gold_fail_max"] == "2"
    assert data["rule_straight_line_min_tasks"] == ""  # blank: the default
    assert json.loads(data["surveys"]) == SURVEYS and json.loads(data["quality_rules"]) == RULES
    assert _post(researcher_client, study, data).status_code == 200  # saved (htmx: a client redirect)
    study.refresh_from_db()
    assert (study.surveys, study.quality_rules) == (SURVEYS, RULES)


def test_the_fields_make_the_same_json_as_the_box(researcher_client, study, researcher):
    by_box = build_study("by-box", instructions=1, created_by=researcher)
    box = _shown(researcher_client, by_box)
    box.update(surveys=json.dumps(SURVEYS), quality_rules=json.dumps(RULES))
    assert _post(researcher_client, by_box, box).status_code == 200

    fields = _shown(researcher_client, study)
    assert fields["survey-TOTAL_FORMS"] == "1" and fields["surveys"] == "" and fields["quality_rules"] == ""
    rows = [
        {"phase": "pre", "qid": "age", "text": "Your age?", "kind": "text"},
        {
            "phase": "post",
            "qid": "clear",
            "text": " Were the tasks clear? ",
            "kind": "choice",
            "choices": "yes\r\n\r\nno\r\n",
        },
        {"phase": "post", "qid": "effort", "text": "How hard was it?", "kind": "scale", "low": "1", "high": "5"},
    ]
    fields["survey-TOTAL_FORMS"] = str(len(rows))  # the page's blank row, filled in, and two more
    for i, row in enumerate(rows):
        fields.update({f"survey-{i}-{k}": v for k, v in row.items()})
    fields["survey-1-required"] = "on"
    fields.update(rule_min_median_seconds="6", rule_gold_fail_max="2", rule_majority_disagreement_max="0.4")
    assert _post(researcher_client, study, fields).status_code == 200
    study.refresh_from_db()
    by_box.refresh_from_db()
    assert study.surveys == by_box.surveys == SURVEYS
    assert study.quality_rules == by_box.quality_rules == RULES


def test_removing_a_question_and_clearing_a_rule(researcher_client, study):
    Study.objects.filter(pk=study.pk).update(surveys=SURVEYS, quality_rules=RULES)
    data = _shown(researcher_client, study)
    data["survey-0-DELETE"] = "on"
    data["rule_gold_fail_max"] = ""
    assert _post(researcher_client, study, data).status_code == 200
    study.refresh_from_db()
    assert study.surveys == {"post": SURVEYS["post"]}
    assert study.quality_rules == {"min_median_seconds": 6.0, "majority_disagreement_max": 0.4}


def test_the_json_box_still_works_beside_the_fields(researcher_client, study):
    Study.objects.filter(pk=study.pk).update(surveys=SURVEYS, quality_rules=RULES)
    data = _shown(researcher_client, study)
    data["surveys"] = json.dumps({"post": [{"id": "note", "text": "Anything to add?", "kind": "text"}]})
    data["quality_rules"] = '{"attention_fail_max": 1}'
    assert _post(researcher_client, study, data).status_code == 200
    study.refresh_from_db()
    assert study.surveys == {"post": [{"id": "note", "text": "Anything to add?", "kind": "text", "required": False}]}
    assert study.quality_rules == {"attention_fail_max": 1}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"survey-3-qid": "x", "survey-3-text": "Pick", "survey-3-kind": "choice", "survey-3-choices": "only"},
            "a choice question needs a list of 2-20 choices",
        ),
        (
            {
                "survey-3-qid": "x",
                "survey-3-text": "Rate",
                "survey-3-kind": "scale",
                "survey-3-low": "5",
                "survey-3-high": "5",
            },
            "a scale needs whole numbers min &lt; max",
        ),
        (
            {
                "survey-3-qid": "x",
                "survey-3-text": "Rate",
                "survey-3-kind": "scale",
                "survey-3-low": "0",
                "survey-3-high": "20",
            },
            "a scale may have at most 11 points",
        ),
        (
            {"survey-3-phase": "post", "survey-3-qid": "clear", "survey-3-text": "Again?"},
            "repeats the question id(s) clear",
        ),
        ({"survey-3-qid": "Bad Id", "survey-3-text": "Hm?"}, "id must be 1-40 lower-case letters"),
        ({"survey-3-qid": "x", "survey-3-text": "Rate", "survey-3-low": "one"}, "Enter a whole number."),
        ({"survey-0-text": ""}, "This field is required."),
        ({"rule_majority_disagreement_max": "2"}, "is a share between 0 and 1"),
        ({"rule_min_median_seconds": "fast"}, "Enter a number."),
        ({"rule_gold_fail_max": "-1"}, "must be at least 0"),
        ({"rule_majority_min_tasks": "0"}, "must be at least 1"),
        ({"quality_rules": '{"min_median_seconds": 9}', "rule_gold_fail_max": "5"}, "You changed both"),
        ({"surveys": "{not json"}, "Not valid JSON"),
    ],
)
def test_bad_input_is_one_clear_error_and_changes_nothing(researcher_client, study, change, message):
    Study.objects.filter(pk=study.pk).update(surveys=SURVEYS, quality_rules=RULES, allow_ties=False)
    data = {**_shown(researcher_client, study), "allow_ties": "on", **change}
    response = _post(researcher_client, study, data)
    body = response.content.decode()
    assert response.status_code == 422 and message in body, body[:3000]
    assert body.lstrip().startswith('<form id="settings-form"')
    study.refresh_from_db()
    assert (study.surveys, study.quality_rules, study.allow_ties) == (SURVEYS, RULES, False)
