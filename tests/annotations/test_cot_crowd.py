"""cot as a crowd condition (issue 24): the order design with the reasoning written first.

The designer builds cot's twins as order's (the positions swapped) from the order run's seeded
stream, so the same seed gives the same pairs and first arrangements; the worker page asks for a
step-by-step reasoning before the choice and the server refuses an answer without one (or with a
token one), whatever the study's own rationale setting, storing nothing; the reasoning is escaped
when shown again; the simulated crowd writes one and reads more carefully for it.
"""

from __future__ import annotations

import random
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotations import services
from annotations.biases import cot
from annotations.forms import GENERATABLE
from annotations.models import Study, Submission, Task
from annotations.simulation.behaviour import SimWorker, choose_pair, reasoning
from annotations.simulation.crowd import simulate_crowd
from annotations.vocabulary import Condition
from tests.annotations.conftest import build_study, current_task_url, enter, qualify

HOSTILE = "<script>alert(1)</script> A is complete and follows the reference; B skips the second step."


def _design(study: Study) -> list[tuple]:
    """A condition's design by content: per batch and position, the pair's candidates and arrangement."""
    return [
        (t.batch.index, t.position, t.pair_index, t.pair.response_a.candidate.key, t.pair.response_b.candidate.key,
         t.arrangement, t.cue)
        for t in Task.objects.filter(batch__study=study).select_related("batch", "pair").order_by(
            "batch__index", "position"
        )
    ]  # fmt: skip


@pytest.mark.django_db
def test_cot_is_the_order_design_the_same_pairs_and_arrangements_for_the_same_seed():
    order, cot_study, other = (build_study(slug, instructions=3) for slug in ("order", "cot", "other"))
    services.generate_batches(study=order, condition=Condition.ORDER, seed=8, pairs_per_batch=4)
    services.generate_batches(study=cot_study, condition=Condition.COT, seed=8, pairs_per_batch=4)
    services.generate_batches(study=other, condition=Condition.COT, seed=9, pairs_per_batch=4)
    assert _design(cot_study) == _design(order)
    assert _design(other) != _design(cot_study)
    for task in Task.objects.filter(batch__study=cot_study):
        assert task.condition == Condition.COT and task.batch.condition == Condition.COT
        twins = Task.objects.filter(batch=task.batch, pair_index=task.pair_index)
        assert sorted(t.arrangement for t in twins) == ["ab", "ba"]  # the positions swapped, as order's


@pytest.mark.django_db
def test_cot_batches_get_checks_like_order_batches():
    study = build_study("checked", instructions=2, attention_check_rate=0.5, gold_rate=0.0)
    services.generate_batches(study=study, condition=Condition.COT, seed=4, pairs_per_batch=4)
    checks = Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM)
    assert checks.exists() and all(t.cue == {"order": "first"} and t.condition == Condition.COT for t in checks)


@pytest.mark.django_db
def test_the_page_offers_cot(researcher_client):
    assert Condition.COT in {value for value, _label in GENERATABLE}
    study = build_study("page-cot", instructions=2)
    url = reverse("annotations:generate", args=[study.slug])
    response = researcher_client.post(url, {"condition": "cot", "seed": 3, "pairs_per_batch": 2})
    assert response.status_code == 302 and study.batches.filter(condition=Condition.COT).count() == 2


def _post(worker: Client, url: str, html: str, **fields: str):
    token = re.search(r'name="token" value="([^"]+)"', html)
    assert token, html[:2000]
    return worker.post(url, {"token": token.group(1), **fields})


@pytest.mark.django_db
@pytest.mark.parametrize("study_rationale", ["off", "optional"])
def test_the_worker_page_asks_for_the_reasoning_first_and_refuses_an_answer_without_it(study_rationale):
    study = build_study(f"page-{study_rationale}", instructions=1, overlap=1, rationale=study_rationale)
    services.generate_batches(study=study, condition=Condition.COT, seed=2, pairs_per_batch=1)
    worker = Client()
    enter(worker, study, code=f"w-cot-{study_rationale}")
    qualify(worker, study)
    url = current_task_url(worker, study)
    html = worker.get(url).content.decode()
    assert escape(cot.WORKER_INSTRUCTION) in html and cot.REASONING_LABEL in html
    box = re.search(r"<textarea[^>]*>", html, re.S)
    assert box and "required" in box.group(0) and f'minlength="{cot.MIN_REASONING_CHARS}"' in box.group(0)
    assert html.index('id="rationale"') < html.index('id="choose-a"')  # the reasoning comes before the choice
    assert 'data-sequential="1"' in html  # the answers open one by one, as in the order run

    for reason in ("", "   ", "A is better."):
        refused = _post(worker, url, html, choice="A", rationale=reason)
        assert refused.status_code == 422 and "step by step" in refused.content.decode()
        assert not Submission.objects.exists()
    shown_again = _post(worker, url, html, choice="A", rationale="<b>short</b>").content.decode()
    assert "<b>short</b>" not in shown_again and escape("<b>short</b>") in shown_again  # kept, escaped

    assert _post(worker, url, html, choice="B", rationale=HOSTILE).status_code == 302
    stored = Submission.objects.get()
    assert (stored.choice, stored.rationale) == ("B", HOSTILE)


@pytest.mark.django_db
def test_an_order_task_in_the_same_study_asks_for_nothing():
    study = build_study("order-only", instructions=1, overlap=1, rationale="off")
    services.generate_batches(study=study, condition=Condition.ORDER, seed=2, pairs_per_batch=1)
    worker = Client()
    enter(worker, study, code="w-order")
    qualify(worker, study)
    url = current_task_url(worker, study)
    html = worker.get(url).content.decode()
    assert 'id="rationale"' not in html and escape(cot.WORKER_INSTRUCTION) not in html
    assert _post(worker, url, html, choice="A").status_code == 302


CAREFUL = SimWorker(
    label="careful", sensitivity=1.0, first_slot=0.3, bandwagon=0.0, attentional=0.0, median_pair_s=15.0
)


def _first_slot_share(condition: str) -> float:
    rng = random.Random(3)
    picks = [
        choose_pair(CAREFUL, quality_a=0.0, quality_b=0.4, cue={}, rng=rng, condition=condition) for _ in range(4000)
    ]
    return picks.count("A") / 4000


def test_the_simulated_worker_reads_more_carefully_after_writing_the_reasoning():
    # P(A) = first_slot x (1 - focus) + the rest x logistic(-2.5 x sensitivity x (1 + focus) x 0.4).
    def expected(focus: float) -> float:
        habit = CAREFUL.first_slot * (1 - focus)
        return habit + (1 - habit) / (1 + pow(2.718281828, 2.5 * (1 + focus) * 0.4))

    assert _first_slot_share(Condition.ORDER) == pytest.approx(expected(0.0), abs=0.025)
    assert _first_slot_share(Condition.COT) == pytest.approx(expected(cot.SIMULATED_FOCUS), abs=0.025)
    assert _first_slot_share(Condition.COT) < _first_slot_share(Condition.ORDER) - 0.1


def test_the_simulated_reasoning_is_long_enough_and_names_the_better_answer():
    for qa, qb in ((0.8, -0.2), (-1.0, 0.3)):
        text = reasoning(quality_a=qa, quality_b=qb, rng=random.Random(1))
        better = "System A" if qa > qb else "System B"
        assert len(text) >= cot.MIN_REASONING_CHARS and text.startswith(f"Step by step: {better}")


@pytest.mark.django_db
def test_the_simulated_crowd_answers_cot_batches_with_a_reasoning_each():
    study = build_study("sim-cot", instructions=2, overlap=1)
    services.generate_batches(study=study, condition=Condition.COT, seed=5, pairs_per_batch=3)
    summary = simulate_crowd(study=study, seed=5, size=8, careless=1)
    assert summary.submissions == 2 * 3 * 2
    reasons = list(Submission.objects.values_list("rationale", flat=True))
    assert len(reasons) == 12 and all(len(r) >= cot.MIN_REASONING_CHARS for r in reasons)
