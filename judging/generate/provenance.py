"""What a model-made text records about how it was made: a generated answer (Response) and a
rewrite (ResponseRewrite) alike, shown with it in review and exported with it."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from judging.models import Generation, GenerationJob


def provenance(job: GenerationJob, row: Generation) -> dict[str, Any]:
    """The model, its endpoint and settings, the exact prompt and the call's tokens."""
    generator = job.generator
    return {
        "model": generator.name,
        "model_id": generator.model,
        "base_url": generator.base_url,
        "params": row.params,
        "prompt_version": job.prompt_version,
        "prompt_hash": row.prompt_hash,
        "messages": row.messages,
        "mode": job.mode,
        "job": job.pk,
        "generated_at": (row.completed_at or timezone.now()).isoformat(),
        "tokens_in": row.tokens_in,
        "tokens_out": row.tokens_out,
        "cached": row.cached,
    }
