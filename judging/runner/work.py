"""What differs between judge jobs and generation jobs: how a row becomes a request, and how
an answer is stored on it. Everything else (claims, retries, cache, budget) is shared."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from annotations.vocabulary import JudgeSlot
from judging import conditions, llm, parsers, verdicts
from judging.models import Generation, GenerationJob, JudgeJob, Judgment
from judging.verdicts import Verdict
from judging.vocabulary import VerdictFormat


@dataclass
class Request:
    """One call to make for one row."""

    row: Any  # a Judgment or a Generation
    messages: list[dict[str, str]]
    body: dict[str, Any]  # extra chat.completions params (model generation settings + job params)
    cache_key: str
    seed_parts: tuple = ()
    labels: tuple[str, str] | None = None  # judge prompts only (baselines answer from these)
    texts: tuple[str, str] | None = None
    prompt_hash: str = ""
    prompt: Any = None  # the RenderedPrompt of a judgment (its echo strings are built lazily)


@dataclass
class Result:
    """What came back for one row."""

    row_id: int
    completion: llm.Completion | None  # None = the call failed
    error: str = ""
    calls: int = 1  # HTTP requests this result cost (already counted in the job's calls)


def llm_cache_key(judge_identity: str, prompt_hash: str) -> str:
    return hashlib.sha256(f"{judge_identity}:{prompt_hash}".encode()).hexdigest()


def generation_cache_key(identity: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    text = json.dumps({"m": messages, "p": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{identity}:gen:{text}".encode()).hexdigest()


class WorkKind:
    name = ""
    # Concrete models (an LLMJob and its WorkRow subclass), typed Any: the runner filters on
    # their own fields (job, the model's foreign key), which the abstract bases do not declare.
    job_model: type[Any] = JudgeJob
    row_model: type[Any] = Judgment
    # The job's foreign key to the model it calls (what LLMJob.called_model returns), for
    # queries: select_related, values_list and filters name the field, not the property.
    model_field = "judge"

    def rows(self, job: Any) -> QuerySet:
        return self.row_model.objects.filter(job_id=job.pk)

    def requests(self, job: Any, rows: list[Any]) -> list[Request]:
        raise NotImplementedError

    def load(self, job: Any, ids: list[int]) -> list[Any]:
        raise NotImplementedError

    def fill(self, job: Any, row: Any, request: Request | None, completion: llm.Completion) -> dict[str, int]:
        """Put an answer on ``row`` (the caller sets cost, tokens, status); extra counter deltas."""
        raise NotImplementedError

    stored_fields: tuple[str, ...] = ()


COMMON_FIELDS = (
    "status",
    "raw_text",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "cost_usd",
    "cached",
    "error",
    "claim_token",
    "claimed_until",
    "completed_at",
    "attempts",
    "in_flight_usd",
    "not_before",
    "batch",
)


class JudgeKind(WorkKind):
    name = "judge"
    job_model = JudgeJob
    row_model = Judgment
    stored_fields = (*COMMON_FIELDS, "choice", "valid", "chosen_response", "prompt_hash", "verdict", "strength")

    def rows(self, job: Any) -> QuerySet:
        return Judgment.objects.filter(job_id=job.pk)

    def requests(self, job: JudgeJob, rows: list[Judgment]) -> list[Request]:
        identity = job.judge.cache_identity()
        body = dict(job.judge.generation or {})
        template = job.template()
        out = []
        for row in rows:
            prompt = conditions.render_for(
                version=job.prompt_version,
                condition=row.condition,
                pair=row.pair,
                slot1_response_id=row.slot1_response_id,
                cue=row.cue,
                template=template,
            )
            a, b = row.pair.response_a, row.pair.response_b
            texts = (a.text, b.text) if row.slot1_response_id == a.pk else (b.text, a.text)
            out.append(
                Request(
                    row,
                    prompt.messages,
                    body,
                    llm_cache_key(identity, prompt.hash),
                    seed_parts=(job.seed, row.pair_id, row.condition, row.presentation),
                    labels=prompt.answer_labels,
                    texts=texts,
                    prompt_hash=prompt.hash,
                    prompt=prompt,
                )
            )
        return out

    def load(self, job: Any, ids: list[int]) -> list[Judgment]:
        return list(
            Judgment.objects.filter(job_id=job.pk, pk__in=ids).select_related(
                "pair__instruction", "pair__response_a__candidate", "pair__response_b__candidate"
            )
        )

    def fill(self, job: JudgeJob, row: Judgment, request: Request | None, completion: llm.Completion) -> dict[str, int]:
        if request is None:  # batch results: render again for the labels and echo strings
            request = self.requests(job, [row])[0]
        row.prompt_hash = request.prompt_hash
        verdict = read_verdict(job, completion.text, request)
        choice = verdict.choice  # a tie chooses no slot: valid stays False (Judgment docstring)
        pair = row.pair
        other = pair.response_b_id if row.slot1_response_id == pair.response_a_id else pair.response_a_id
        row.choice, row.valid = choice or "", choice is not None
        row.chosen_response_id = (row.slot1_response_id if choice == JudgeSlot.FIRST else other) if choice else None
        row.verdict, row.strength = verdict.slot or "", verdict.strength or ""
        return {"invalid": int(not verdict.valid), "ties": int(verdict.is_tie)}


def read_verdict(job: JudgeJob, raw: str, request: Request) -> Verdict:
    """The verdict in a judge's answer: the job's cobbler parser (robust or paper) as always, or
    the job's verdict format (judging.verdicts) for a judge asked with a template."""
    assert request.labels is not None  # a judge prompt always carries its labels
    echo = request.prompt.echo_strings
    if job.verdict_format == VerdictFormat.COBBLER:
        choice = parsers.parse(job.parser, raw, labels=request.labels, echo_strings=echo)
        return Verdict(choice) if choice else verdicts.INVALID
    spec = job.verdict_spec if job.verdict_format == VerdictFormat.REGEX else None
    return verdicts.parse(job.verdict_format, raw, labels=request.labels, echo_strings=echo, spec=spec)


class GenerateKind(WorkKind):
    name = "generate"
    job_model = GenerationJob
    row_model = Generation
    model_field = "generator"
    stored_fields = (*COMMON_FIELDS, "prompt_hash")

    def rows(self, job: Any) -> QuerySet:
        return Generation.objects.filter(job_id=job.pk)

    def requests(self, job: GenerationJob, rows: list[Generation]) -> list[Request]:
        identity = job.generator.cache_identity()
        base = dict(job.generator.generation or {})
        out = []
        for row in rows:
            params = dict(row.params or {})
            body = {**base, **params}
            out.append(
                Request(
                    row,
                    list(row.messages),
                    body,
                    generation_cache_key(identity, row.messages, params),
                    seed_parts=(job.seed, row.instruction_id),
                    prompt_hash=row.prompt_hash,
                )
            )
        return out

    def load(self, job: Any, ids: list[int]) -> list[Generation]:
        return list(Generation.objects.filter(job_id=job.pk, pk__in=ids))

    def fill(
        self, job: GenerationJob, row: Generation, request: Request | None, completion: llm.Completion
    ) -> dict[str, int]:
        if not row.prompt_hash:
            from judging.prompts import prompt_hash

            row.prompt_hash = prompt_hash(row.messages)
        return {}


KINDS: dict[str, WorkKind] = {"judge": JudgeKind(), "generate": GenerateKind()}


def kind_of(job: Any) -> WorkKind:
    """The adapter for a JudgeJob or a GenerationJob (or a kind name)."""
    if isinstance(job, str):
        return KINDS[job]
    return KINDS["generate"] if isinstance(job, GenerationJob) else KINDS["judge"]


def estimate_cost(model: Any, request: Request, *, batch: bool = False) -> Decimal:
    """A cautious price of one request before it is sent: ~3 characters a token in, and the
    request's max_tokens (else 128) out, at the Batch API price for a batch line. The budget
    gate counts it until the answer is stored."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    out = requested_max_tokens(request) or 128
    return model.price(chars // 3 + 8, out, batch=batch)


def estimate_tokens(request: Request) -> int:
    return estimate_tokens_in(request) + (requested_max_tokens(request) or 128)


def estimate_tokens_in(request: Request) -> int:
    """~4 characters a token: what tokenizers average on English text (and the simulator counts)."""
    return sum(len(str(m.get("content", ""))) for m in request.messages) // 4 + 1


def requested_max_tokens(request: Request) -> int | None:
    """The request's output cap (max_tokens or max_completion_tokens), None when it sets none."""
    value = request.body.get("max_tokens") or request.body.get("max_completion_tokens")
    return int(value) if value else None
