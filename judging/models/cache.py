from __future__ import annotations

from django.db import models


class CachedCompletion(models.Model):
    """A judge's answer to exact messages, reused for identical prompts to the same judge.

    ``key`` = sha256(judge endpoint identity + model + generation settings + messages),
    so any change of model, settings or prompt misses the cache.
    """

    key = models.CharField(max_length=64, unique=True)
    raw_text = models.TextField()
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key[:12]
