"""Sentiment in the report (issue 24): the demo's answers rewritten by a registered model in a
rewrite job, a judge with an injected sentiment bias measured within its interval, one without it
given no claim, both beside the demo's people, who answered the sentiment condition too."""

from __future__ import annotations

import json

import pytest

from analysis.exporters import export, validate
from annotations.models import ResponseRewrite
from annotations.vocabulary import Condition, RewriteKind
from judging import services
from judging.generate.rewrites import start_rewrite_job
from judging.models import RegisteredModel
from judging.simulator.server import SimulatorServer
from tests.analysis.conftest import run_in_process


def _model(server: SimulatorServer, name: str, knobs: str) -> RegisteredModel:
    return services.create_judge(
        name=name,
        base_url=server.base_url,
        model=f"sim:{knobs}",
        max_concurrency=16,
        requests_per_minute=0,
        request_timeout=10.0,
        transport=RegisteredModel.Transport.HTTP,
    )


def _rewrite(job) -> None:
    from judging import runner

    for _ in range(10):
        pending = list(job.generations.filter(status="pending").values_list("pk", flat=True))
        if not pending:
            return
        runner.run_chunk("generate", job.pk, pending)


@pytest.mark.slow
@pytest.mark.django_db
def test_an_injected_sentiment_bias_is_measured_within_its_interval(demo_study):
    from analysis.report import build_report

    knob = 0.3
    server = SimulatorServer(max_concurrency=64).start_in_thread()
    try:
        # The demo seeds its own rewrites (seed_demo); a real study's come from a rewrite job, which
        # is what this test runs: the crowd tasks keep the text their cues stored.
        seeded = ResponseRewrite.objects.filter(response__instruction__study=demo_study)
        assert seeded.count() == 60
        seeded.delete()
        writer = _model(server, "cheerful-writer", "seed=9")
        _rewrite(start_rewrite_job(study=demo_study, generator=writer, kind=RewriteKind.SENTIMENT))
        rewritten = ResponseRewrite.objects.filter(response__instruction__study=demo_study).count()
        for name, knobs in (("tone-judge", f"sentiment={knob},seed=5"), ("even-judge", "seed=6")):
            job = services.start_judge_job(
                study=demo_study,
                judge=_model(server, name, knobs),
                condition_names=[Condition.SENTIMENT, Condition.ORDER],
                seed=3,
            )
            run_in_process(job)
    finally:
        server.stop()
    assert rewritten > 0
    report = build_report(study=demo_study, profile="default")
    validate(json.loads(export(report, "json")))
    rows = {(r["subject"], r["bias"]): r for r in report["battery"]}
    tone, even = rows[("tone-judge", "sentiment")], rows[("even-judge", "sentiment")]
    low, high = tone["effect"]["ci95"]
    assert tone["effect"]["claim"] == "biased" and low <= knob <= high
    assert even["effect"]["claim"] == "no_evidence"
    # The order run shows each pair in both arrangements: every cued verdict has its reference.
    assert tone["robustness"]["unmatched"] == 0 and tone["robustness"]["rate"] < even["robustness"]["rate"]
    # The demo's people answered the sentiment condition: the judge stands beside them.
    assert ("humans", "sentiment") in rows and tone["vs_humans"] is not None and even["vs_humans"] is not None
