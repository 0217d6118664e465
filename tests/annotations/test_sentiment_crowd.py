"""Sentiment as a crowd condition (issue 24): the designer draws only pairs whose two answers both
have a stored rewrite and copies the cued answer's rewrite into each task's cue; the worker page,
review and the MTurk preview show it in the cued slot (annotations.shown, always escaped); a study
without rewrites is refused with nothing written; the simulated crowd follows the rewrite by a
susceptibility drawn on a stream of its own; the other conditions' designs do not move."""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import replace

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotations import services
from annotations.biases import CALM
from annotations.forms import GENERATABLE
from annotations.models import Batch, Pair, ResponseRewrite, Study, Task
from annotations.quality.checks import INSTRUCTED_TEXT
from annotations.shown import shown_pair
from annotations.simulation.behaviour import (
    CALM_SUSCEPTIBILITY,
    REWRITTEN_SUSCEPTIBILITY,
    SimWorker,
    choose_pair,
    make_crowd,
)
from annotations.vocabulary import Condition, RewriteKind
from tests.annotations.conftest import CANDIDATES, build_study, current_task_url, enter, qualify

HOSTILE = "<script>alert(1)</script>"
CHEER = "Great news! "


def _rewrite(study: Study, *, instruction: int, keys: tuple[str, ...] = CANDIDATES, prefix: str = CHEER) -> None:
    """A sentiment rewrite ("Great news! " + the answer) of the named candidates' answers."""
    for response in study.instructions.get(index=instruction).responses.filter(candidate__key__in=keys):
        ResponseRewrite.objects.create(response=response, kind=RewriteKind.SENTIMENT, text=prefix + response.text)


def _rewritten_study(slug: str, **fields: object) -> Study:
    """Three instructions: every answer of #0 rewritten, three of #1 (three pairs), one of #2 (none)."""
    study = build_study(slug, instructions=3, **fields)
    _rewrite(study, instruction=0)
    _rewrite(study, instruction=1, keys=CANDIDATES[:3])
    _rewrite(study, instruction=2, keys=CANDIDATES[:1])
    return study


def _shown(study: Study, task: Task) -> tuple[str, str, str]:
    a, b = task.slot_responses()
    pair = shown_pair(study, task, a.text, b.text)
    return pair.banner, pair.text_a, pair.text_b


def _slot(html: str, slot: str) -> str:
    """The inner HTML of the worker page's answer box of ``slot`` ("a" or "b")."""
    match = re.search(rf'<div class="answer" id="slot-{slot}">(.*?)</div>', html, re.S)
    assert match, html[:2000]
    return match.group(1)


def _signature(study: Study) -> list:
    """A study's design by content, not database ids: the same design in two studies compares equal
    (a rewrite is named by the candidate whose answer it rewrites)."""
    rewritten_by = {
        r.pk: r.response.candidate.key for r in ResponseRewrite.objects.select_related("response__candidate")
    }
    out = []
    for task in (
        Task.objects.filter(batch__study=study)
        .order_by("batch__condition", "batch__index", "position")
        .select_related("batch")
    ):
        cue = dict(task.cue)
        if cue.get("rewrite") is not None:
            cue["rewrite"] = rewritten_by[cue["rewrite"]]
        a, b = task.slot_responses()
        out.append(
            [
                task.batch.condition,
                task.batch.index,
                task.batch.label,
                task.batch.seed,
                task.position,
                task.kind,
                task.role,
                task.pair_index,
                a.candidate.key,
                b.candidate.key,
                task.arrangement,
                cue,
                task.expects,
            ]
        )
    return out


# --- the design ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_design_draws_rewritten_pairs_only_and_stores_the_cued_answers_rewrite():
    study = _rewritten_study("rewritten")
    batches = services.generate_batches(study=study, condition=Condition.SENTIMENT, seed=5, pairs_per_batch=4)
    # Instruction 2 has no pair with both answers rewritten: no batch, and no gap in the indexes.
    assert [(b.index, b.label) for b in batches] == [(0, "instruction 0"), (1, "instruction 1")]
    rewrites = {r.response_id: r for r in ResponseRewrite.objects.all()}
    tasks = list(Task.objects.filter(batch__study=study))
    assert len(tasks) == 4 * 2 + 3 * 2  # instruction 1 has three rewritten pairs
    for task in tasks:
        assert task.pair.response_a_id in rewrites and task.pair.response_b_id in rewrites
        a, b = task.slot_responses()
        cued = a if task.cue["cue_slot"] == "A" else b
        assert task.cue == {
            "cue_slot": task.cue["cue_slot"],
            "rewrite": rewrites[cued.pk].pk,
            "rewritten": CHEER + cued.text,
        }
        twins = Task.objects.filter(batch=task.batch, pair_index=task.pair_index)
        assert sorted(t.cue["cue_slot"] for t in twins) == ["A", "B"]  # the cue on each side once
        assert len({t.cue["rewrite"] for t in twins}) == 2  # each twin rewrites its own cued answer
    assert not any(
        "delta" in {t.pair.response_a.candidate.key, t.pair.response_b.candidate.key}
        for t in tasks
        if t.instruction.index == 1
    )


@pytest.mark.django_db
def test_same_seed_same_design_and_another_seed_another():
    one, two, other = (_rewritten_study(slug) for slug in ("one", "two", "other"))
    for study, seed in ((one, 5), (two, 5), (other, 6)):
        services.generate_batches(study=study, condition=Condition.SENTIMENT, seed=seed, pairs_per_batch=2)
    assert _signature(one) == _signature(two)
    assert _signature(one) != _signature(other)


@pytest.mark.django_db
@pytest.mark.parametrize("rewritten", [(), ("alpha",)])
def test_a_study_without_rewritten_pairs_is_refused_and_nothing_is_written(rewritten):
    study = build_study(f"bare-{len(rewritten)}", instructions=2)
    for index in range(2):
        _rewrite(study, instruction=index, keys=rewritten)  # one answer alone makes no pair
    with pytest.raises(ValidationError) as refused:
        services.generate_batches(study=study, condition=Condition.SENTIMENT, seed=1)
    assert "run_rewrites" in str(refused.value) and study.slug in str(refused.value)
    assert not Batch.objects.exists() and not Task.objects.exists() and not Pair.objects.exists()


@pytest.mark.django_db
def test_the_page_offers_sentiment_and_explains_a_refusal(researcher_client):
    assert Condition.SENTIMENT in {value for value, _label in GENERATABLE}
    study = build_study("page-bare", instructions=2)
    url = reverse("annotations:generate", args=[study.slug])
    response = researcher_client.post(url, {"condition": "sentiment", "seed": 3, "pairs_per_batch": 2})
    assert response.status_code == 422 and "run_rewrites" in response.content.decode()
    assert not study.batches.exists()
    _rewrite(study, instruction=1)
    response = researcher_client.post(url, {"condition": "sentiment", "seed": 3, "pairs_per_batch": 2})
    assert response.status_code == 302 and [b.label for b in study.batches.all()] == ["instruction 1"]


@pytest.mark.django_db
def test_checks_show_the_original_answers_and_a_catch_keeps_its_broken_text():
    """A check's cue carries no rewrite (annotations.services.design._check_cue): the rewrite
    replaces the whole answer, so on a catch pair it would hide the broken text."""
    study = _rewritten_study("checked", attention_check_rate=0.5, gold_rate=0.25)
    ins = study.instructions.get(index=0)
    alpha, beta = ins.responses.order_by("candidate__position")[:2]
    Pair.objects.create(instruction=ins, response_a=alpha, response_b=beta, gold_response=alpha)
    services.generate_batches(study=study, condition=Condition.SENTIMENT, seed=4, pairs_per_batch=4)
    checks = Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM)
    assert {t.role for t in checks} == {Task.Role.INSTRUCTED, Task.Role.CATCH, Task.Role.GOLD}
    for task in checks:
        assert task.cue == {"cue_slot": task.cue["cue_slot"], "rewrite": None, "rewritten": ""}
        a, b = task.slot_responses()
        _banner, text_a, text_b = _shown(study, task)
        if task.role == Task.Role.CATCH:
            broken = task.expects["broken_slot"]
            assert (text_a if broken == "A" else text_b) == task.expects["broken_text"]
            assert (text_b if broken == "A" else text_a) == (b.text if broken == "A" else a.text)
        else:
            assert (text_a, text_b) == (a.text, b.text)
    assert all(
        INSTRUCTED_TEXT.format(slot=t.expects["slot"]) == t.expects["text"]
        for t in checks.filter(role=Task.Role.INSTRUCTED)
    )


# The other pair conditions' designs (with checks and a gold pair), made by the code before the
# sentiment crowd variant existed (4f891ae; the same on SQLite and PostgreSQL): the new draws must
# not move a single one. Tasks are listed by condition too: batch indexes repeat across conditions.
BEFORE_SENTIMENT = "3ddbaf3124da6e5c29f9ac3e9c9f7b84e62ea8f34c87584c5543f826f1f24064"
EARLIER = ("order", "plain", "bandwagon", "attentional", *CALM)


def _earlier_designs_digest(study: Study) -> str:
    ins = study.instructions.get(index=0)
    alpha, beta = ins.responses.order_by("candidate__position")[:2]
    Pair.objects.create(instruction=ins, response_a=alpha, response_b=beta, gold_response=alpha)
    for condition in EARLIER:
        services.generate_batches(study=study, condition=condition, seed=9, pairs_per_batch=3)
    blob = json.dumps(_signature(study), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


@pytest.mark.django_db
def test_the_other_conditions_designs_are_unchanged_rewrites_or_not():
    plain = build_study("earlier", instructions=3, attention_check_rate=0.25, gold_rate=0.2)
    rewritten = _rewritten_study("earlier-rewritten", attention_check_rate=0.25, gold_rate=0.2)
    assert _earlier_designs_digest(plain) == _earlier_designs_digest(rewritten) == BEFORE_SENTIMENT


# --- what is shown -----------------------------------------------------------------------------


def _hostile_study(slug: str, **fields: object) -> Study:
    """One instruction, every answer rewritten with markup in it; one sentiment batch of one pair."""
    study = build_study(slug, instructions=1, **fields)
    _rewrite(study, instruction=0, prefix=HOSTILE + " Great news! ")
    services.generate_batches(study=study, condition=Condition.SENTIMENT, seed=11, pairs_per_batch=1)
    return study


@pytest.mark.django_db
def test_shown_pair_puts_the_rewrite_in_the_cued_slot_only():
    study = _hostile_study("shown")
    for task in Task.objects.filter(batch__study=study):
        a, b = task.slot_responses()
        banner, text_a, text_b = _shown(study, task)
        cued, plain = (text_a, text_b) if task.cue["cue_slot"] == "A" else (text_b, text_a)
        assert banner == "" and cued == task.cue["rewritten"] and cued.startswith(HOSTILE)
        assert plain == (b.text if task.cue["cue_slot"] == "A" else a.text)
    # An imported vote may carry the cued slot alone: the original answers, nothing made up.
    task.cue = {"cue_slot": "A"}
    assert _shown(study, task) == ("", a.text, b.text)


@pytest.mark.django_db
def test_the_worker_page_shows_the_rewrite_escaped_and_review_shows_it_again(researcher):
    study = _hostile_study("page", created_by=researcher)
    worker = Client()
    enter(worker, study, code="w-sentiment")
    qualify(worker, study)
    url = current_task_url(worker, study)
    html = worker.get(url).content.decode()
    assert "<script>alert(1)" not in html and 'id="cue-banner"' not in html
    task = Task.objects.get(batch__study=study, position=int(url.rsplit("/", 1)[1]))
    slot = task.cue["cue_slot"]
    box, other = _slot(html, slot.lower()), _slot(html, "b" if slot == "A" else "a")
    assert escape(task.cue["rewritten"]) in box and escape(HOSTILE) in box
    assert "Great news!" not in other and escape(HOSTILE) not in other
    _answer_the_batch(worker, study)

    review = Client()
    review.force_login(researcher)
    page = review.get(reverse("annotations:review-list", args=[study.slug])).content.decode()
    assert "<script>alert(1)" not in page and escape(task.cue["rewritten"]) in page


@pytest.mark.django_db
def test_the_mturk_preview_shows_the_rewrite_escaped():
    study = _hostile_study("preview")
    url = reverse("annotations:start", args=[study.slug]) + "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"
    html = Client().get(url).content.decode()
    assert "<script>alert(1)" not in html and escape(HOSTILE) + " Great news!" in html


def _answer_the_batch(worker: Client, study: Study) -> None:
    """Answer every task of the worker's batch through the page, so review lists the work."""
    while "/a/" in (url := worker.get(reverse("annotations:work", args=[study.slug]))["Location"]):
        html = worker.get(url).content.decode()
        token = re.search(r'name="token" value="([^"]+)"', html)
        assert token, html[:2000]
        assert worker.post(url, {"choice": "A", "token": token.group(1)}).status_code == 302


# --- the simulated crowd -----------------------------------------------------------------------

DRAWS = 4000
CAREFUL = SimWorker(
    label="careful", sensitivity=1.0, first_slot=0.0, bandwagon=0.0, attentional=0.0, median_pair_s=15.0
)
CUE = {"cue_slot": "B", "rewrite": 1, "rewritten": "Great news! The answer."}


def _follow_share(worker: SimWorker) -> float:
    rng = random.Random(7)
    picks = [
        choose_pair(worker, quality_a=0.5, quality_b=0.5, cue=CUE, rng=rng, condition=Condition.SENTIMENT)
        for _ in range(DRAWS)
    ]
    return picks.count("B") / DRAWS


def test_the_sentiment_susceptibility_moves_its_own_cue_only():
    assert _follow_share(CAREFUL) == pytest.approx(0.5, abs=0.03)
    assert _follow_share(replace(CAREFUL, sentiment=0.3)) == pytest.approx(0.65, abs=0.03)
    others = dict.fromkeys(CALM, 0.3)
    assert _follow_share(replace(CAREFUL, bandwagon=0.4, **others)) == pytest.approx(0.5, abs=0.03)


@pytest.mark.parametrize(("seed", "size"), [(2024, 48), (2024, 96), (7, 20)])
def test_the_sentiment_susceptibility_is_drawn_on_its_own_stream(seed, size):
    crowd = make_crowd(seed=seed, size=size, careless=4)
    assert crowd == make_crowd(seed=seed, size=size, careless=4)
    # CALM's four traits are what their own stream drew before sentiment existed.
    calm_rng = random.Random(f"simulated-crowd:{seed}:calm")
    before = [
        [min(high, max(0.0, calm_rng.gauss(mean, sd))) for mean, sd, high in CALM_SUSCEPTIBILITY.values()]
        for _ in range(size)
    ]
    assert [[getattr(w, c) for c in CALM_SUSCEPTIBILITY] for w in crowd] == before
    mean, _sd, high = REWRITTEN_SUSCEPTIBILITY[Condition.SENTIMENT]
    values = [w.sentiment for w in crowd]
    assert all(0 <= v <= high for v in values) and len(set(values)) > size // 2
    if size >= 96:
        assert abs(sum(values) / len(values) - mean) < 0.03  # clipping at 0 lifts the mean a little
