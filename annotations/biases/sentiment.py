"""Sentiment (CALM): one answer is rewritten in a more confident, cheerful tone, its content kept.

The only bias whose perturbation a model makes: a rewrite job (``manage.py run_rewrites``, the
versioned prompt ``sentiment-v1`` of ``judging.generate.prompts``) asks a registered model to
rewrite each answer, and stores the usable rewrites (``annotations.ResponseRewrite``). A judge job
or a crowd design then shows a pair under this condition only when both its answers have one; each
showing copies the cued answer's rewrite into its cue (``rewrite``, ``rewritten``), so the prompt
or page is reproducible from the stored cue alone and review shows the same text.

What is measured is the rewrite as the model made it: a rewrite that also changed the content
moves quality with tone. The judge-minus-humans difference on the same pairs separates the two,
since people see the same rewrites (docs/methods.md, "The bias battery").
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotations.biases.base import ANSWER, CueBias, CueContext, Words
from annotations.vocabulary import Condition, RewriteKind


def _draw(rng: random.Random, ctx: CueContext) -> dict[str, Any]:
    # Nothing random: the rewrite was made (and seeded, where the model takes a seed) by the job.
    rewrite = ctx.rewrite
    return {"rewrite": rewrite.id if rewrite else None, "rewritten": rewrite.text if rewrite else ""}


def _perturb(text: str, cue: Mapping[str, Any]) -> str:
    # A showing planned without a rewrite (a check task's pair may have none) shows the original.
    return str(cue.get("rewritten") or text)


SENTIMENT = CueBias(
    condition=Condition.SENTIMENT,
    short=Condition.SENTIMENT.value,
    perturbs=ANSWER,
    knob=Condition.SENTIMENT.value,
    null="the rewrite in a confident, cheerful tone has no effect: choosing the rewritten answer both times is "
    "as likely as choosing the other both times",
    words=Words(
        name="sentiment (a confident, cheerful tone)",
        toward="answers rewritten in a confident, cheerful tone",
        against="answers in their original tone",
        hits="rewritten answer both times",
        mirror="the other both times",
        judge_toward="favours answers rewritten in a confident, cheerful tone",
        judge_against="avoids answers rewritten in a confident, cheerful tone",
        people_toward="chose the answer rewritten in a confident, cheerful tone more often",
        people_against="chose the answer in its original tone more often",
    ),
    draw=_draw,
    perturb=_perturb,
    rewrite_kind=RewriteKind.SENTIMENT,
)
