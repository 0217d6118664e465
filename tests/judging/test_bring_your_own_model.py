"""Issue 11's whole path for a new evaluator, over real HTTP with a real Celery worker.

Register a simulated model with ``create_judge`` (both roles), let it write answers for the
demo's instructions (``generate_answers --wait``), extend the pairs with them, judge every
pair in every condition through the Batch API, and read its egocentric rates from the report.
No ``--self-candidate`` anywhere: the self key comes from the generation job.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from analysis.report import build_report
from annotations.biases import REWRITTEN
from annotations.importers.demo import seed_demo_study
from annotations.models import Pair, Response
from judging import conditions, services
from judging.models import BatchRun, GenerationJob, RegisteredModel
from judging.simulator import batch as simbatch
from tests.conftest import wait_until

pytestmark = [pytest.mark.worker, pytest.mark.slow]

# The model prefers an answer marked as its own ("(You)", the compassion run) 90% of the time.
KNOBS = "seed=11,self=0.9,answer_words=50,latency_ms=5"


def test_a_new_model_generates_is_paired_judged_by_batch_and_gets_its_egocentric_rates(
    simulator, judge_worker, monkeypatch
):
    monkeypatch.setenv("BATCH_POLL_SECONDS", "0.5")
    simbatch.store_for(simulator).delay_s = 0.5
    study = seed_demo_study()
    others = study.candidates.count()
    instructions = study.instructions.count()
    pairs_before = Pair.objects.filter(instruction__study=study).count()
    call_command(
        "create_judge",
        "newcomer",
        "--base-url",
        simulator.base_url,
        "--model",
        f"sim:{KNOBS}",
        "--rpm",
        "0",
        "--price-in",
        "0.001",
        "--price-out",
        "0.002",
        stdout=StringIO(),
    )
    model = RegisteredModel.objects.get(name="newcomer")
    assert model.use_as_judge and model.use_as_generator and model.self_candidate_key == ""
    judge_worker()

    out = StringIO()
    call_command(
        "generate_answers", "--study", study.slug, "--model", "newcomer", "--max-tokens", "80", "--wait", stdout=out
    )
    generation = GenerationJob.objects.get(study=study, generator=model)
    assert generation.status == "completed", out.getvalue()
    own = Response.objects.filter(instruction__study=study, candidate__key="newcomer")
    assert own.count() == instructions
    assert all(r.provenance["params"]["max_tokens"] == 80 and r.provenance["messages"] for r in own)
    added = Pair.objects.filter(instruction__study=study).count() - pairs_before
    assert added == generation.pairs_created == instructions * others

    # Every condition but the rewritten ones, which need a rewrite job first (test_sentiment_rewrites.py).
    runs = [c for c in conditions.SUPPORTED if c not in REWRITTEN]
    job = services.start_judge_job(study=study, judge=model, condition_names=runs, mode="batch")
    assert job.self_candidate_key == "newcomer"

    def finished() -> bool:
        job.refresh_from_db()
        return job.is_finished

    assert wait_until(finished, timeout=240), job.progress()
    assert job.status == "completed" and job.failed == 0
    assert BatchRun.objects.filter(judge_job=job, state=BatchRun.State.COLLECTED).exists()
    # Every request was priced as a batch request (no synchronous fallback was needed here).
    batch_price = model.price(job.tokens_in, job.tokens_out, batch=True)
    assert batch_price > 0 and abs(job.cost_usd - batch_price) <= Decimal("0.000001") * job.done

    rows = {(r["subject"], r["bias"]): r for r in build_report(study=study, profile="default")["bias"]}
    for bias, condition in (("egocentric", "order"), ("egocentric_comp", "compassion")):
        # Recount from the stored calls: the model chose its own answer in both presentations.
        chose_own: dict[int, list[bool]] = defaultdict(list)
        calls = job.judgments.filter(condition=condition, pair__response_b__candidate__key="newcomer")
        for j in calls.select_related("chosen_response__candidate"):
            chose_own[j.pair_id].append(j.valid and j.chosen_response.candidate.key == "newcomer")
        hits = sum(len(v) == 2 and all(v) for v in chose_own.values())
        row = rows[("newcomer", bias)]
        assert len(chose_own) == added and row["n"] == added
        assert row["hits"] == hits and row["value"] == pytest.approx(hits / added)
    # self=0.9 acts only where the prompt names the judge's own answer: the compassion run.
    assert rows[("newcomer", "egocentric_comp")]["value"] > 0.6
