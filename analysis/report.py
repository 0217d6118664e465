"""The report contract (schema ``cobbler-report/1``, analysis/schema/), assembled from its sections.

Each section module owns one part of the JSON and returns data computed from the
database; a section with no data returns empty lists, never made-up values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import cast

from django.utils import timezone

from analysis import loaders
from analysis.data_version import data_counts, version_of
from analysis.loaders.report_cache import report_cache
from analysis.profiles import Profile, get_profile
from analysis.summary import build_summary, counted_work, empty_reasons
from annotations.models import Study

SCHEMA = "cobbler-report/1"
Progress = Callable[[str, float], None]


def build_report(
    *, study: Study, profile: str, progress: Progress | None = None, jobs: Sequence[int] | None = None
) -> dict:
    """The whole report as a JSON-ready dict. Pure read: safe to call from a task or a command.

    ``jobs`` names the judge jobs whose calls count (docs/methods.md "Re-runs"); without
    it each (judge, condition) counts its latest completed job. ``judge_jobs`` lists the
    jobs used. ``summary`` (the verdict cards) leads, after the metadata; ``data_version``
    is the data the report read, taken before any section reads it (so data arriving during
    the computation makes the report stale, never silently newer). ValueError for an
    unknown profile or a bad job selection.
    """
    with report_cache():  # sections share the frames they load (analysis.loaders.report_cache)
        return _report(study=study, chosen=get_profile(profile), progress=progress, jobs=jobs)


def _report(*, study: Study, chosen: Profile, progress: Progress | None, jobs: Sequence[int] | None) -> dict:
    counts = data_counts(study)
    with loaders.named_jobs(jobs):
        counted = loaders.counted_jobs(study)  # validates named jobs before any computing
        report = _build(study=study, chosen=chosen, progress=progress, counts=counts)
    report["judge_jobs"] = counted
    report["counted_work"] = counted_work(study=study, profile=chosen, judge_jobs=counted)
    report["summary"] = build_summary(report)
    from analysis.sections import leaderboard

    with loaders.named_jobs(jobs):  # the leaderboard reads the verdict cards and the counted calls
        report["leaderboard"] = cast(
            list, _without_non_finite(leaderboard.build(report=report, study=study, profile=chosen))
        )
    report["no_data"] = empty_reasons(report)
    return report


def _build(*, study: Study, chosen: Profile, progress: Progress | None, counts: dict) -> dict:
    from analysis.sections import agreement, alt_test, battery, bias, bt_rankings, cot, gold, length_control, paper

    step = progress or (lambda _label, _fraction: None)
    report: dict = {
        "schema": SCHEMA,
        "study": study.slug,
        "profile": chosen.name,
        "profile_choices": chosen.choices(),
        "generated_at": timezone.now().isoformat(),
        "summary": [],  # filled last, from the sections; first here so it leads the JSON
        "data_version": version_of(counts),
        "data_counts": counts,
    }
    step("bias", 0.0)
    report.update(bias.build_section(study=study, profile=chosen))  # "bias" and "bias_reference"
    # The battery reads the bias rows it stands beside (their effects, tests and claims).
    report["battery"] = battery.build(study=study, profile=chosen, bias_rows=report["bias"])
    report["cot"] = cot.build(study=study, profile=chosen)
    report["gold_accuracy"] = gold.build(study=study, profile=chosen)
    report["alt_test"] = alt_test.build(study=study, profile=chosen)
    step("agreement", 0.3)
    report["agreement"] = agreement.build(study=study, profile=chosen)
    step("length control", 0.6)
    report["length_control"] = length_control.build(study=study, profile=chosen)
    report["bt_rankings"] = bt_rankings.build(study=study, profile=chosen)
    step("paper", 0.8)
    report["paper"] = paper.build(study=study, profile=chosen) if chosen.name == "cobbler-paper" else {}
    step("done", 1.0)
    return cast(dict, _without_non_finite(report))  # a dict stays a dict


def _without_non_finite(value: object) -> object:
    """NaN and infinity become null (an interval with a missing or bad end becomes null as a whole).

    A statistic that is undefined (a bootstrap over one instruction, a share over zero
    above-chance agreement) must read as "no value", and JSON has no NaN: PostgreSQL's
    jsonb and SQLite's JSON_VALID both reject it.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: (None if k == "ci95" and _has_non_finite(v) else _without_non_finite(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_non_finite(v) for v in value]
    return value


def _has_non_finite(value: object) -> bool:
    return isinstance(value, list) and any(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in value)
