"""The estimate before launch: the calls, tokens and cost a judge or generation job would
spend, computed from the requests the runner would send. Nothing is written.

The forms, the API and the CLI all call ``estimate_judge_job`` / ``estimate_generation_job``
with the keyword arguments they would give ``start_judge_job`` / ``start_generation_job``, so
every surface shows the same numbers:

- **rows**: planned and validated by the job's own service (``plan_judge_job``,
  ``plan_generation_job``: the same JobError as a start), rendered by the runner's adapter
  (``JudgeKind.requests`` / ``GenerateKind.requests``): the prompts the runner sends, no copy.
- **calls**: one per distinct cache key not in the response cache (``CachedCompletion``). A
  cached row costs nothing, and rows with the key of another row of the job are answered by
  that one call (the runner sends identical requests once).
- **tokens in**: ~4 characters a token over the rendered messages (``estimate_tokens_in``).
- **tokens out** a call: the mean of this model's latest finished calls of the same job type,
  capped at the request's ``max_tokens``; without history ``max_tokens``; else a default.
- **cost**: ``RegisteredModel.price`` at the synchronous or the Batch API price.
- **sampling**: up to ``EXACT_UP_TO`` rows every prompt is rendered; above, a seeded sample of
  whole pairs (instructions) holding about ``SAMPLE_ROWS`` rows is, and scaled up.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, ROUND_UP, Decimal
from typing import Any

from judging import services
from judging.generate.rewrites import plan_rewrite_job, rewrite_rows
from judging.generate.services import generation_rows, plan_generation_job
from judging.models import CachedCompletion, RegisteredModel
from judging.runner.work import Request, WorkKind, estimate_tokens_in, kind_of, requested_max_tokens
from judging.vocabulary import JobMode, ModelKind, OutputBasis, RowStatus

EXACT_UP_TO = 2000  # rows whose prompts are all rendered; rendering stays well under a second
SAMPLE_ROWS = 500  # above that, about this many rows are rendered (whole pairs or instructions)
HISTORY_CALLS = 2000  # the model's latest finished calls whose mean output is its typical one
# Without history or max_tokens: a verdict gets what the runner's budget gate assumes for a
# call without max_tokens; an answer gets what the generation form proposes as max_tokens.
DEFAULT_TOKENS_OUT = {"judge": 128, "generate": 512}
BUDGET_FACTOR = Decimal("1.2")  # the proposed budget: room for answers longer than typical
USD = Decimal("0.000001")  # prices are stored with 6 decimal places
BUDGET_USD = Decimal("0.0001")  # budgets are stored with 4


@dataclass(frozen=True)
class Estimate:
    unit: str  # what a row is: "judgments" or "answers"
    rows: int  # rows the job would hold
    calls: int  # requests to send
    cached: int  # rows the response cache answers
    repeats: int  # rows answered by an identical request of the same job
    tokens_in: int
    tokens_out: int
    tokens_out_per_call: int
    tokens_out_basis: str  # an OutputBasis
    tokens_out_note: str
    cost_usd: Decimal
    batch_price: bool
    proposed_budget_usd: Decimal | None  # None when nothing is to pay
    rendered: int  # prompts rendered for this estimate
    exact: bool  # every prompt rendered (else a sample, scaled up)
    method: str


def estimate_judge_job(**options: Any) -> Estimate:
    """The estimate of ``start_judge_job(**options)``; JobError exactly when it would raise."""
    plan = services.plan_judge_job(**options)
    job = plan.job
    if job.judge.kind == ModelKind.BASELINE:
        return _no_calls(job.total, "judgments")
    only = None
    if job.total > EXACT_UP_TO:
        per_pair = job.total // len(plan.pairs)
        only = set(_sample([p.pk for p in plan.pairs], math.ceil(SAMPLE_ROWS / per_pair), job.seed))
    rows = [
        row for pair_rows in services.judgments_per_pair(job, plan.pairs, plan.names, only=only) for row in pair_rows
    ]
    sampled = f"{len(only):,} of the {len(plan.pairs):,} pairs" if only else ""
    return _estimate(kind_of("judge"), job, rows, "judgments", sampled)


def estimate_generation_job(**options: Any) -> Estimate:
    """The estimate of ``start_generation_job(**options)``; JobError exactly when it would raise."""
    plan = plan_generation_job(**options)
    job, instructions = plan.job, plan.instructions
    sampled = ""
    if job.total > EXACT_UP_TO:
        chosen = set(_sample([i.pk for i in instructions], SAMPLE_ROWS, job.seed))
        sampled = f"{len(chosen):,} of the {len(instructions):,} instructions"
        instructions = [i for i in instructions if i.pk in chosen]
    return _estimate(kind_of("generate"), job, generation_rows(job, instructions), "answers", sampled)


def estimate_rewrite_job(**options: Any) -> Estimate:
    """The estimate of ``start_rewrite_job(**options)``; JobError exactly when it would raise.

    Rewrites are few (one per answer in a pair), so every prompt is rendered."""
    plan = plan_rewrite_job(**options)
    return _estimate(kind_of("generate"), plan.job, rewrite_rows(plan.job, plan.responses), "rewrites", "")


def _sample(ids: list[int], size: int, seed: int) -> list[int]:
    # Seeded by the job's seed: the form, the API and the CLI render the same sample.
    return random.Random(f"estimate:{seed}").sample(ids, min(size, len(ids)))


def _estimate(work: WorkKind, job: Any, rows: list[Any], unit: str, sampled: str) -> Estimate:
    requests = work.requests(job, rows)
    first_of: dict[str, Request] = {}
    for request in requests:
        first_of.setdefault(request.cache_key, request)
    in_cache = cached_keys(list(first_of))
    to_send = [r for key, r in first_of.items() if key not in in_cache]
    scale = job.total / len(requests) if requests else 0.0
    calls = round(len(to_send) * scale)
    cached = min(job.total - calls, round(sum(r.cache_key in in_cache for r in requests) * scale))
    model = job.called_model
    per_call, basis, note = typical_tokens_out(work, model, requested_max_tokens(requests[0]) if requests else None)
    tokens_in = round(sum(estimate_tokens_in(r) for r in to_send) * scale)
    batch = job.mode == JobMode.BATCH
    cost = model.price(tokens_in, per_call * calls, batch=batch).quantize(USD, rounding=ROUND_HALF_UP)
    if sampled:
        method = (
            f"sampled: the {len(requests):,} prompts of {sampled} (seeded by the job's seed) rendered, "
            f"scaled up {scale:.1f} times to {job.total:,}"
        )
    else:
        method = f"exact: all {len(requests):,} prompts rendered"
    return Estimate(
        unit=unit,
        rows=job.total,
        calls=calls,
        cached=cached,
        repeats=job.total - calls - cached,
        tokens_in=tokens_in,
        tokens_out=per_call * calls,
        tokens_out_per_call=per_call,
        tokens_out_basis=basis,
        tokens_out_note=note,
        cost_usd=cost,
        batch_price=batch,
        proposed_budget_usd=proposed_budget(cost),
        rendered=len(requests),
        exact=not sampled,
        method=method,
    )


def _no_calls(rows: int, unit: str) -> Estimate:
    return Estimate(
        unit=unit,
        rows=rows,
        calls=0,
        cached=0,
        repeats=0,
        tokens_in=0,
        tokens_out=0,
        tokens_out_per_call=0,
        tokens_out_basis=OutputBasis.NO_CALLS,
        tokens_out_note="a built-in baseline answers locally: no calls, no cost",
        cost_usd=Decimal(0).quantize(USD),
        batch_price=False,
        proposed_budget_usd=None,
        rendered=0,
        exact=True,
        method="exact: a baseline sends no requests",
    )


def cached_keys(keys: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(keys), 500):  # bounded IN lists
        found.update(CachedCompletion.objects.filter(key__in=keys[start : start + 500]).values_list("key", flat=True))
    return found


def typical_tokens_out(work: WorkKind, model: RegisteredModel, max_tokens: int | None) -> tuple[int, str, str]:
    """(tokens out a call, its OutputBasis, a note saying where it comes from)."""
    mine = {f"job__{work.model_field}": model}  # rows of this model's jobs of this kind
    recent = list(
        work.row_model.objects.filter(**mine, status=RowStatus.DONE, cached=False, tokens_out__gt=0)
        .order_by("-pk")
        .values_list("tokens_out", flat=True)[:HISTORY_CALLS]
    )
    if recent:
        mean = round(sum(recent) / len(recent))
        note = f"the mean of this model's last {len(recent):,} finished {work.row_model._meta.verbose_name} calls"
        if max_tokens and max_tokens < mean:
            return max_tokens, OutputBasis.HISTORY, f"{note} ({mean}), capped at max_tokens {max_tokens}"
        return mean, OutputBasis.HISTORY, note
    if max_tokens:
        return max_tokens, OutputBasis.MAX_TOKENS, f"max_tokens {max_tokens} (no finished calls yet): an upper bound"
    default = DEFAULT_TOKENS_OUT[work.name]
    return default, OutputBasis.DEFAULT, f"a default of {default} (no finished calls yet, no max_tokens)"


def proposed_budget(cost: Decimal) -> Decimal | None:
    """About 1.2 times the estimated cost, rounded up to a budget's 4 decimal places; None
    for a free job (a budget of 0 would only get in the way)."""
    if cost <= 0:
        return None
    return (cost * BUDGET_FACTOR).quantize(BUDGET_USD, rounding=ROUND_UP)


def summary_lines(estimate: Estimate) -> list[str]:
    """The estimate in words (the CLI's --dry-run; the forms show the same fields)."""
    e = estimate
    price = "the Batch API price" if e.batch_price else "the synchronous price"
    budget = (
        f"${e.proposed_budget_usd} ({BUDGET_FACTOR} x the estimated cost)" if e.proposed_budget_usd else "none needed"
    )
    return [
        f"estimate ({e.method}):",
        f"  calls to send: {e.calls:,} for {e.rows:,} {e.unit} "
        f"({e.cached:,} answered by the cache, {e.repeats:,} repeats of another call)",
        f"  tokens in: {e.tokens_in:,} (the rendered prompts, ~4 characters a token)",
        f"  tokens out: {e.tokens_out:,} ({e.tokens_out_per_call:,} a call: {e.tokens_out_note})",
        f"  cost: ${e.cost_usd} at {price}",
        f"  proposed budget: {budget}",
    ]
