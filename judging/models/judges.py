from __future__ import annotations

import hashlib
import json
import os
from decimal import Decimal

from django.db import models

from judging import crypto


class Judge(models.Model):
    """An evaluator: an OpenAI-compatible endpoint, a built-in baseline, or imported results."""

    class Kind(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible endpoint"
        BASELINE = "baseline", "Built-in baseline"
        IMPORTED = "imported", "Imported results (no endpoint)"

    class Baseline(models.TextChoices):
        LONGER = "longer"  # the length-only null judge
        FIRST_SLOT = "first-slot"
        LAST_SLOT = "last-slot"
        RANDOM = "random"  # seeded

    name = models.SlugField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=Kind)
    baseline = models.CharField(max_length=16, choices=Baseline, blank=True)
    base_url = models.URLField(max_length=500, blank=True)
    model = models.CharField(max_length=200, blank=True)
    # The key is read from this environment variable, or from the encrypted field;
    # it is never rendered in a page, an API response or a log line.
    api_key_env = models.CharField(max_length=100, blank=True)
    api_key_encrypted = models.TextField(blank=True)
    # Generation settings passed to chat.completions.create (temperature, max_tokens, ...).
    generation = models.JSONField(default=dict, blank=True)
    max_concurrency = models.PositiveIntegerField(default=8)
    requests_per_minute = models.PositiveIntegerField(default=600)
    price_in_per_1k = models.DecimalField(max_digits=10, decimal_places=6, default=Decimal("0"))
    price_out_per_1k = models.DecimalField(max_digits=10, decimal_places=6, default=Decimal("0"))
    seed = models.BigIntegerField(default=0)
    # The candidate key that is this judge's own model (egocentric bias), if any.
    self_candidate_key = models.CharField(max_length=64, blank=True)
    # Seconds the client waits for one call; retries are ours, never the SDK's.
    request_timeout = models.FloatField(default=60.0)

    class Transport(models.TextChoices):
        OPENAI = "openai", "openai SDK"
        # The same POST /chat/completions without the SDK: about a fifth of its CPU per
        # call, for high-throughput local endpoints (vLLM, the simulator).
        HTTP = "http", "Lean HTTP (no SDK)"

    transport = models.CharField(max_length=8, choices=Transport, default=Transport.OPENAI)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted or (self.api_key_env and os.environ.get(self.api_key_env)))

    def set_api_key(self, raw: str) -> None:
        """Store ``raw`` encrypted (empty clears it). Caller saves."""
        self.api_key_encrypted = crypto.encrypt(raw) if raw else ""

    def get_api_key(self) -> str:
        """The key for the endpoint: the named env var wins over the stored one.

        Never log or render the result. Returns "" when the endpoint needs none
        (local servers such as the simulator, vLLM or Ollama).
        """
        if self.api_key_env and os.environ.get(self.api_key_env):
            return os.environ[self.api_key_env]
        if self.api_key_encrypted:
            return crypto.decrypt(self.api_key_encrypted)
        return ""

    def cache_identity(self) -> str:
        """What makes two calls with the same messages interchangeable (Inspect's cache key)."""
        ident = {
            "kind": self.kind,
            "baseline": self.baseline,
            "base_url": self.base_url.rstrip("/"),
            "model": self.model,
            "generation": self.generation,
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def price(self, tokens_in: int, tokens_out: int) -> Decimal:
        return (
            self.price_in_per_1k * tokens_in + self.price_out_per_1k * tokens_out
        ) / Decimal(1000)
