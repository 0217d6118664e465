"""The stored rewrites a model-made perturbation shows (``ResponseRewrite``; the sentiment bias):
which answers have one, for the judge planner and the crowd designer alike."""

from __future__ import annotations

from collections.abc import Iterable

from annotations.biases import Rewritten, cue_bias
from annotations.models import Pair, ResponseRewrite


def rewrites_of(response_ids: Iterable[int], kind: str) -> dict[int, Rewritten]:
    """Per response id, its rewrite of ``kind`` (responses without one are left out)."""
    rows = ResponseRewrite.objects.filter(response_id__in=set(response_ids), kind=kind)
    return {r.response_id: Rewritten(id=r.pk, text=r.text) for r in rows.only("pk", "response_id", "text")}


def rewrites_for(condition: str, pairs: Iterable[Pair]) -> dict[int, Rewritten] | None:
    """The rewrites a condition's showings of ``pairs`` need, or None for a condition that needs none."""
    bias = cue_bias(condition)
    if bias is None or not bias.rewrite_kind:
        return None
    ids = {i for p in pairs for i in (p.response_a_id, p.response_b_id)}
    return rewrites_of(ids, bias.rewrite_kind)


def showable(pair: Pair, rewrites: dict[int, Rewritten] | None) -> bool:
    """Whether a pair can be shown under a condition: always, or with both answers rewritten."""
    return rewrites is None or (pair.response_a_id in rewrites and pair.response_b_id in rewrites)


def missing_rewrites_message(condition: str, study_slug: str) -> str:
    return (
        f"no pair of study {study_slug!r} has a {condition} rewrite of both its answers: run "
        f"`manage.py run_rewrites --study {study_slug} --model MODEL --kind {condition}` first, "
        f"and review the rewrites before using them"
    )
