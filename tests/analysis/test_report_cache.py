"""Within one report a loader reads the database once; callers get their own copy; outside, nothing is kept."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis import loaders
from analysis.loaders.report_cache import report_cache
from annotations.models import Candidate, Study


@pytest.fixture
def study(db):
    study = Study.objects.create(slug="cache", name="Cache")
    Candidate.objects.create(study=study, key="m0", position=0)
    return study


def test_a_loader_reads_once_per_report_and_hands_out_copies(study, django_assert_num_queries):
    with report_cache():
        with django_assert_num_queries(1):
            first = loaders.human_pairwise_frame(study)
            second = loaders.human_pairwise_frame(study)
        first["added"] = 1  # a section adding a column must not change what the next one reads
        assert "added" not in second.columns and "added" not in loaders.human_pairwise_frame(study).columns
        order = loaders.candidate_order(study)
        order.append("m9")
        assert loaders.candidate_order(study) == ["m0"]


def test_named_jobs_are_part_of_the_key(study):
    with report_cache():
        loaders.judgments_frame(study)
        with CaptureQueriesContext(connection) as again:
            loaders.judgments_frame(study)
        with loaders.named_jobs([]), CaptureQueriesContext(connection) as named:
            loaders.judgments_frame(study)  # named jobs: other calls count, so another read
    assert len(again) == 0 and len(named) > 0


def test_without_a_report_every_call_reads_the_database(study, django_assert_num_queries):
    with django_assert_num_queries(2):
        loaders.candidate_order(study)
        loaders.candidate_order(study)
    Candidate.objects.create(study=study, key="m1", position=1)
    with report_cache():
        assert loaders.candidate_order(study) == ["m0", "m1"]
