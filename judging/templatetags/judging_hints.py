"""``{% load judging_hints %}{{ job.last_error|error_hint }}``: the hint for a call error, for any job page."""

from __future__ import annotations

from django import template

from judging.error_hints import hint_for

register = template.Library()


@register.filter
def error_hint(error_text: str) -> str:
    return hint_for(error_text or "")
