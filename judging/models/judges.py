from __future__ import annotations

from decimal import Decimal

from django.db import models


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
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name
