"""The estimate before launch (judging.estimates) against what a real run then costs.

Each accuracy test runs jobs in-process against the simulator (the runner's own chunks, as a
worker runs them) and compares the estimate made before the start with the job's own
counters after it. The tolerances are stated with each test; ``-s`` prints the figures.
"""

from __future__ import annotations

import itertools
import time
from decimal import ROUND_UP, Decimal

import pytest
from django.utils import timezone

from annotations.models import Candidate, Instruction, Pair, Response, Study
from judging import estimates, runner, services
from judging.estimates import estimate_generation_job, estimate_judge_job, proposed_budget
from judging.generate.services import start_generation_job
from judging.models import Generation, GenerationJob, JudgeJob, Judgment
from judging.vocabulary import OutputBasis

ALL = ["order", "compassion", "bandwagon", "attentional", "selective", "plain"]
# Tokens in: both sides count ~4 characters a token over the same messages (the estimate rounds
# down plus one, the simulator up): within 1%. Tokens out: a mean of the model's earlier calls
# against this job's own answers: within 15% for verdicts, 20% for answers of random length.
IN_TOLERANCE, VERDICT_OUT_TOLERANCE, ANSWER_OUT_TOLERANCE = 0.01, 0.15, 0.20


@pytest.fixture(autouse=True)
def _fast_backoff(settings):
    settings.JUDGING_BACKOFF_BASE = 0.01
    settings.JUDGING_BACKOFF_CAP = 0.2


def run_to_end(job, rounds: int = 20):
    """What the workers do, in-process: run the job's pending rows in chunks until none is left."""
    kind = runner.kind_of(job)
    for _ in range(rounds):
        pending = list(kind.rows(job).filter(status="pending").values_list("pk", flat=True))
        if not pending:
            break
        due = max(
            filter(None, kind.rows(job).filter(status="pending").values_list("not_before", flat=True)), default=None
        )
        if due is not None:
            time.sleep(max(0.0, (due - timezone.now()).total_seconds()))
        runner.run_chunk(kind.name, job.pk, pending)
    job.refresh_from_db()
    return job


def close(estimated: float, actual: float, tolerance: float) -> bool:
    return abs(estimated - actual) <= tolerance * actual


def figures(label: str, estimate, job) -> str:
    line = (
        f"{label}: calls {estimate.calls} vs {job.calls}; tokens in {estimate.tokens_in} vs {job.tokens_in}; "
        f"tokens out {estimate.tokens_out} vs {job.tokens_out}; cost {estimate.cost_usd} vs {job.cost_usd}"
    )
    print(line)
    return line


def study_with(slug: str, instructions: int, candidates: int, words: int = 12) -> Study:
    """``instructions`` x all pairs of ``candidates``; every text distinct (no cache sharing)."""
    study = Study.objects.create(slug=slug, name=slug)
    cands = [Candidate.objects.create(study=study, key=f"c{i}", position=i) for i in range(candidates)]
    for index in range(instructions):
        ins = Instruction.objects.create(
            study=study, index=index, text=f"{slug} question {index}: explain topic {index * 7 + 3} in plain words."
        )
        responses = [
            Response.objects.create(
                instruction=ins,
                candidate=c,
                text=f"{slug} {c.key} on {index}: " + " ".join(f"w{(i + index + k) % 17}" for k in range(words + i)),
            )
            for i, c in enumerate(cands)
        ]
        for a, b in itertools.combinations(responses, 2):
            Pair.objects.create(instruction=ins, response_a=a, response_b=b)
    return study


# --- accuracy against the simulator ------------------------------------------------------------


def test_a_judge_estimate_matches_what_the_simulated_run_then_costs(study, make_sim_judge):
    judge = make_sim_judge(knobs="seed=3")
    run_to_end(services.start_judge_job(study=study, judge=judge, condition_names=["order"]))  # its history
    options = {"study": study, "judge": judge, "condition_names": ["bandwagon", "attentional", "selective"]}
    estimate = estimate_judge_job(**options)
    assert estimate.tokens_out_basis == OutputBasis.HISTORY and estimate.exact
    job = run_to_end(services.start_judge_job(**options, budget_usd=estimate.proposed_budget_usd))
    figures("judge job, 108 calls", estimate, job)
    # The proposed budget is enough: the job completes instead of stopping at it.
    assert job.status == JudgeJob.Status.COMPLETED and job.failed == 0
    assert estimate.calls == job.calls == 108 and estimate.cached == job.cached == 0
    assert close(estimate.tokens_in, job.tokens_in, IN_TOLERANCE)
    assert close(estimate.tokens_out, job.tokens_out, VERDICT_OUT_TOLERANCE)
    assert close(float(estimate.cost_usd), float(job.cost_usd), VERDICT_OUT_TOLERANCE)


def test_a_generation_estimate_matches_what_the_simulated_run_then_costs(db, make_sim_judge):
    model = make_sim_judge(name="writer", knobs="seed=2,answer_words=60")
    first, second = study_with("gen-one", 40, 2), study_with("gen-two", 40, 2)
    # Without history the request's max_tokens is the guess: an upper bound of the cost.
    blind = estimate_generation_job(study=first, generator=model, params={"max_tokens": 400})
    assert blind.tokens_out_basis == OutputBasis.MAX_TOKENS and blind.tokens_out_per_call == 400
    ran = run_to_end(start_generation_job(study=first, generator=model, params={"max_tokens": 400}))
    figures("generation job without history (upper bound)", blind, ran)
    assert ran.status == GenerationJob.Status.COMPLETED and blind.cost_usd >= ran.cost_usd
    # With this model's 40 answers as its history, the next job is estimated closely.
    options = {"study": second, "generator": model, "params": {"max_tokens": 400}}
    estimate = estimate_generation_job(**options)
    assert estimate.tokens_out_basis == OutputBasis.HISTORY
    job = run_to_end(start_generation_job(**options, budget_usd=estimate.proposed_budget_usd))
    figures("generation job, 40 answers", estimate, job)
    assert job.status == GenerationJob.Status.COMPLETED
    assert estimate.calls == job.calls == 40
    assert close(estimate.tokens_in, job.tokens_in, IN_TOLERANCE)
    assert close(estimate.tokens_out, job.tokens_out, ANSWER_OUT_TOLERANCE)
    assert close(float(estimate.cost_usd), float(job.cost_usd), ANSWER_OUT_TOLERANCE)


# --- the cache ----------------------------------------------------------------------------------


def test_calls_the_cache_answers_are_subtracted(study, make_sim_judge):
    judge = make_sim_judge(knobs="seed=5")
    options = {"study": study, "judge": judge, "condition_names": ["order"]}
    before = estimate_judge_job(**options)
    assert (before.calls, before.cached) == (36, 0)
    run_to_end(services.start_judge_job(**options))
    again = estimate_judge_job(**options)  # the same job once more: every prompt is cached
    assert (again.rows, again.calls, again.cached, again.tokens_in, again.cost_usd) == (36, 0, 36, 0, 0)
    assert again.proposed_budget_usd is None
    rerun = run_to_end(services.start_judge_job(**options))
    assert rerun.calls == 0 and rerun.cached == 36  # and the runner agrees
    part = estimate_judge_job(**{**options, "condition_names": ["order", "bandwagon"]})
    assert (part.rows, part.cached, part.calls) == (72, 36, 36)


def test_a_generation_the_cache_holds_costs_nothing(study, make_sim_judge):
    model = make_sim_judge(name="writer", knobs="seed=2")
    run_to_end(start_generation_job(study=study, generator=model, params={"max_tokens": 100}))
    again = estimate_generation_job(study=study, generator=model, candidate_key="again", params={"max_tokens": 100})
    assert (again.rows, again.calls, again.cached, again.cost_usd) == (3, 0, 3, 0)
    other = estimate_generation_job(study=study, generator=model, candidate_key="again", params={"max_tokens": 99})
    assert other.calls == 3  # other settings, another cache key


def test_identical_prompts_in_one_job_are_one_call(study, make_sim_judge):
    # A plain prompt shows one of the two arrangements the order run shows, with no cue: the
    # same messages, sent once (the runner answers the twin from that call).
    judge = make_sim_judge(knobs="seed=6")
    estimate = estimate_judge_job(study=study, judge=judge, condition_names=["order", "plain"])
    job = run_to_end(services.start_judge_job(study=study, judge=judge, condition_names=["order", "plain"]))
    assert estimate.rows == 54 and estimate.repeats == 18 and estimate.calls == job.calls == 36


# --- sampling ----------------------------------------------------------------------------------


def test_a_large_job_is_estimated_from_a_seeded_sample_close_to_the_exact_count(db, make_sim_judge, monkeypatch):
    study = study_with("large", 20, 5)  # 200 pairs x 11 prompts = 2,200 rows > EXACT_UP_TO
    judge = make_sim_judge(knobs="seed=7")
    options = {"study": study, "judge": judge, "condition_names": ALL, "seed": 4}
    started = time.perf_counter()
    sampled = estimate_judge_job(**options)
    sampled_s = time.perf_counter() - started
    assert not sampled.exact and sampled.rows == 2200
    assert sampled.rendered <= estimates.SAMPLE_ROWS + 11 and "sampled" in sampled.method
    assert estimate_judge_job(**options) == sampled  # seeded: the same numbers every time
    monkeypatch.setattr(estimates, "EXACT_UP_TO", 10**6)
    started = time.perf_counter()
    exact = estimate_judge_job(**options)
    exact_s = time.perf_counter() - started
    print(
        f"2,200 rows: sampled {sampled.rendered} prompts in {sampled_s:.2f} s (calls {sampled.calls}, tokens in "
        f"{sampled.tokens_in}, cost {sampled.cost_usd}); exact in {exact_s:.2f} s (calls {exact.calls}, "
        f"tokens in {exact.tokens_in}, cost {exact.cost_usd})"
    )
    assert exact.exact and exact.rendered == 2200
    assert close(sampled.calls, exact.calls, 0.02) and close(sampled.tokens_in, exact.tokens_in, 0.05)
    assert close(float(sampled.cost_usd), float(exact.cost_usd), 0.05)


# --- prices, budget, baselines, validation --------------------------------------------------------


def test_the_proposed_budget_is_1_2_times_the_cost_rounded_up_to_a_budgets_places():
    assert proposed_budget(Decimal("0.010000")) == Decimal("0.0120")
    assert proposed_budget(Decimal("0.000001")) == Decimal("0.0001")  # never rounded down to nothing
    assert proposed_budget(Decimal("2.5")) == Decimal("3.0000")
    assert proposed_budget(Decimal(0)) is None


def test_the_estimate_proposes_1_2_times_its_cost(study, make_sim_judge):
    estimate = estimate_judge_job(study=study, judge=make_sim_judge(), condition_names=["order"])
    assert estimate.cost_usd > 0
    assert estimate.proposed_budget_usd == (estimate.cost_usd * Decimal("1.2")).quantize(
        Decimal("0.0001"), rounding=ROUND_UP
    )


def test_batch_mode_is_priced_at_the_batch_price(study, make_sim_judge):
    judge = make_sim_judge(generation={"max_tokens": 50})
    sync = estimate_judge_job(study=study, judge=judge, condition_names=["order"])
    batch = estimate_judge_job(study=study, judge=judge, condition_names=["order"], mode="batch")
    assert batch.batch_price and not sync.batch_price
    assert batch.cost_usd == judge.price(batch.tokens_in, batch.tokens_out, batch=True).quantize(estimates.USD)
    assert abs(batch.cost_usd * 2 - sync.cost_usd) <= Decimal("0.000002")


def test_tokens_out_come_from_history_else_max_tokens_else_the_default(study, make_sim_judge):
    judge = make_sim_judge(knobs="seed=8")
    plain = estimate_judge_job(study=study, judge=judge, condition_names=["order"])
    assert (plain.tokens_out_basis, plain.tokens_out_per_call) == (OutputBasis.DEFAULT, 128)
    judge.generation = {"max_tokens": 60}
    judge.save()
    capped = estimate_judge_job(study=study, judge=judge, condition_names=["order"])
    assert (capped.tokens_out_basis, capped.tokens_out_per_call) == (OutputBasis.MAX_TOKENS, 60)
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    Judgment.objects.filter(job=job).update(status="done", tokens_out=80)  # longer than the cap
    Judgment.objects.filter(job=job, pk=job.judgments.first().pk).update(cached=True, tokens_out=1)  # not a call
    history = estimate_judge_job(study=study, judge=judge, condition_names=["bandwagon"])
    assert (history.tokens_out_basis, history.tokens_out_per_call) == (OutputBasis.HISTORY, 60)
    assert "35 finished" in history.tokens_out_note and "capped at max_tokens 60" in history.tokens_out_note
    judge.generation = {}
    judge.save()
    free = estimate_judge_job(study=study, judge=judge, condition_names=["bandwagon"])
    assert free.tokens_out_per_call == 80 and free.tokens_out == 80 * free.calls


def test_a_baseline_sends_no_calls(study):
    judge = services.ensure_baseline_judge(name="longer")
    estimate = estimate_judge_job(study=study, judge=judge, condition_names=["order", "plain"])
    assert (estimate.rows, estimate.calls, estimate.cost_usd, estimate.proposed_budget_usd) == (54, 0, 0, None)
    assert estimate.tokens_out_basis == OutputBasis.NO_CALLS


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"condition_names": ["nope"]}, "unknown condition"),
        ({"pair_set": "human"}, "has no pairs"),
        ({"budget_usd": Decimal(-1)}, "cannot be negative"),
    ],
)
def test_an_estimate_refuses_what_a_start_refuses_and_writes_nothing(study, make_sim_judge, kwargs, message):
    options = {"study": study, "judge": make_sim_judge(), "condition_names": ["order"], **kwargs}
    with pytest.raises(services.JobError, match=message):
        estimate_judge_job(**options)
    with pytest.raises(services.JobError, match=message):
        services.start_judge_job(**options)
    assert not JudgeJob.objects.exists() and not Judgment.objects.exists()


def test_a_generation_estimate_writes_nothing(study, make_sim_judge):
    estimate_generation_job(study=study, generator=make_sim_judge(name="writer"), params={"max_tokens": 10})
    assert not GenerationJob.objects.exists() and not Generation.objects.exists()
    with pytest.raises(services.JobError, match="unknown generation setting"):
        estimate_generation_job(study=study, generator=make_sim_judge(name="w2"), params={"stream": True})
