"""The study hub: one page per study linking content, settings, batches, review, recruitment,
and its judge jobs and reports on the studies overview; the settings form; links to the hub from
the overview and the job pages."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from analysis.models import ReportRun
from annotations import services
from annotations.models import Pair, Study
from judging.models import JudgeJob, RegisteredModel
from tests.annotations.conftest import build_study


@pytest.fixture
def hub_study(db, researcher) -> Study:
    study = build_study("hub", instructions=2, created_by=researcher)
    services.generate_batches(study=study, condition="bandwagon", seed=2, pairs_per_batch=2)
    judge = RegisteredModel.objects.create(
        name="hub-longer", kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=researcher
    )
    JudgeJob.objects.create(study=study, judge=judge, conditions=["order"], created_by=researcher)
    ReportRun.objects.create(study=study, profile="default", created_by=researcher)
    return study


def _hub(client, study: Study) -> str:
    response = client.get(reverse("annotations:study", args=[study.slug]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_hub_links_every_part_of_the_study(researcher_client, hub_study):
    html = _hub(researcher_client, hub_study)
    job = JudgeJob.objects.get(study=hub_study)
    for section in ("content", "settings", "batches", "review", "recruitment", "judges-and-reports"):
        assert f'href="#{section}"' in html and f'id="{section}"' in html
    for url in (
        reverse("annotations:review-list", args=[hub_study.slug]),
        reverse("analysis:dashboard") + f"#study-{hub_study.slug}",
        reverse("analysis:report", args=[hub_study.slug]),
        reverse("annotations:export", args=[hub_study.slug, "csv"]),
        reverse("annotations:study_import"),
        reverse("annotations:study-settings", args=[hub_study.slug]),
    ):
        assert f'href="{url}"' in html or f'action="{url}"' in html, url
    assert "{{%PROLIFIC_PID%}}" in html and "http://testserver/s/hub/start" in html  # the recruitment box
    n_pairs = Pair.objects.filter(instruction__study=hub_study).count()
    assert f'<dd id="count-pairs">{n_pairs}</dd>' in html and '<dd id="count-instructions">2</dd>' in html
    # Its judge jobs and reports are on the studies overview, in the study's own card.
    overview = researcher_client.get(reverse("analysis:dashboard")).content.decode()
    card = overview[overview.index(f'id="study-{hub_study.slug}"') :]
    assert f'href="{reverse("judging:job", args=[job.pk])}"' in card
    assert "hub-longer" in card and "default: <span" in card


def test_the_settings_form_saves_and_refuses_bad_json_changing_nothing(researcher_client, hub_study):
    url = reverse("annotations:study-settings", args=[hub_study.slug])
    surveys = {"post": [{"id": "fair", "text": "Was the task clear?", "kind": "choice", "choices": ["yes", "no"]}]}
    good = {
        "allow_ties": "on",
        "rationale": "optional",
        "attention_check_rate": "0.1",
        "gold_rate": "0.05",
        "surveys": json.dumps(surveys),
        "quality_rules": '{"min_median_seconds": 6}',
    }
    assert researcher_client.post(url, good).status_code == 302
    hub_study.refresh_from_db()
    assert (hub_study.allow_ties, hub_study.rationale, hub_study.attention_check_rate, hub_study.gold_rate) == (
        True,
        "optional",
        0.1,
        0.05,
    )
    assert hub_study.quality_rules == {"min_median_seconds": 6.0} and hub_study.surveys["post"][0]["id"] == "fair"
    for field, value, message in (
        ("quality_rules", '{"min_median_seconds": "fast"}', "must be a number"),
        ("quality_rules", '{"nope": 1}', "Unknown quality rule"),
        ("surveys", "{not json", "Not valid JSON"),
        ("surveys", '{"during": []}', "Unknown survey phase"),
        ("attention_check_rate", "0.9", "between 0 and 0.5"),
    ):
        bad = researcher_client.post(url, {**good, "allow_ties": "", field: value}, headers={"HX-Request": "true"})
        body = bad.content.decode()
        assert bad.status_code == 422 and message in body and body.lstrip().startswith('<form id="settings-form"'), (
            field
        )
        hub_study.refresh_from_db()
        assert hub_study.allow_ties is True and hub_study.quality_rules == {"min_median_seconds": 6.0}
    plain = researcher_client.post(url, {**good, "gold_rate": "-1"})
    assert plain.status_code == 422 and b"<html" in plain.content


def test_it_checks_ownership(client, other_researcher, hub_study):
    client.force_login(other_researcher)
    assert client.get(reverse("annotations:study", args=[hub_study.slug])).status_code == 404
    assert (
        client.post(reverse("annotations:study-settings", args=[hub_study.slug]), {"rationale": "required"}).status_code
        == 404
    )
    hub_study.refresh_from_db()
    assert hub_study.rationale == "off"
    overview = client.get(reverse("analysis:dashboard"))
    assert "hub" not in [row.study.slug for row in overview.context["overview"]]
    assert "hub-longer" not in overview.content.decode()


def test_the_overview_and_the_job_pages_link_to_the_hub(researcher_client, hub_study):
    hub = reverse("annotations:study", args=[hub_study.slug])
    job = JudgeJob.objects.get(study=hub_study)
    overview = researcher_client.get(reverse("analysis:dashboard")).content.decode()
    assert f'href="{hub}"' in overview and reverse("annotations:review-list", args=[hub_study.slug]) in overview
    assert f'href="{hub}"' in researcher_client.get(reverse("judging:job", args=[job.pk])).content.decode()
    assert f'href="{hub}"' in researcher_client.get(reverse("judging:jobs")).content.decode()
    # The studies list it replaced still answers, with the overview.
    retired = researcher_client.get(reverse("annotations:studies"))
    assert retired.status_code == 302 and retired["Location"] == reverse("analysis:dashboard")


def test_a_failed_generate_without_htmx_shows_the_whole_hub(researcher_client, hub_study):
    response = researcher_client.post(
        reverse("annotations:generate", args=[hub_study.slug]),
        {"condition": "bandwagon", "seed": 1, "pairs_per_batch": 2},
    )
    assert (
        response.status_code == 422 and b"already has" in response.content and b'id="recruitment"' in response.content
    )
