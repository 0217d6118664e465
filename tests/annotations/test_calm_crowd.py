"""CALM's four biases as crowd conditions (issue 24): the designer stores each task's seeded
perturbation, the worker page, review and the MTurk preview show the same perturbed pair
(annotations.shown, always escaped), and the simulated crowd follows each cue by a
susceptibility of its own, drawn without moving anything the earlier conditions drew."""

from __future__ import annotations

import random
import re
from dataclasses import replace

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotations import services
from annotations.biases import CALM
from annotations.biases.authority import PREFIX
from annotations.biases.verbosity import PADDING
from annotations.forms import GENERATABLE
from annotations.models import Study, Task
from annotations.shown import shown_pair
from annotations.simulation.behaviour import CALM_SUSCEPTIBILITY, SimWorker, choose_pair, make_crowd
from tests.annotations.conftest import build_study, current_task_url, enter, qualify

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)> & co'


def _hostile_study(slug: str, condition: str, **fields: object) -> Study:
    """One instruction whose answers all carry markup, one batch of ``condition`` (two twins)."""
    texts = {(0, k): f"{k}: {HOSTILE}" for k in ("alpha", "beta", "gamma", "delta")}
    study = build_study(slug, instructions=1, texts=texts, **fields)
    services.generate_batches(study=study, condition=condition, seed=11, pairs_per_batch=1)
    return study


def _slot(html: str, slot: str) -> str:
    """The inner HTML of the worker page's answer box of ``slot`` ("a" or "b")."""
    match = re.search(rf'<div class="answer" id="slot-{slot}">(.*?)</div>', html, re.S)
    assert match, html[:2000]
    return match.group(1)


def _shown(study: Study, task: Task) -> tuple[str, str, str]:
    a, b = task.slot_responses()
    pair = shown_pair(study, task, a.text, b.text)
    return pair.banner, pair.text_a, pair.text_b


# --- the design ------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("condition", CALM)
def test_the_design_stores_a_seeded_reproducible_perturbation_per_task(condition):
    one = build_study(f"one-{condition}", instructions=3)
    two = build_study(f"two-{condition}", instructions=3)
    cues = []
    for study in (one, two):
        services.generate_batches(study=study, condition=condition, seed=5, pairs_per_batch=4)
        tasks = Task.objects.filter(batch__study=study).order_by("batch__index", "position")
        cues.append([t.cue for t in tasks])
    assert cues[0] == cues[1]  # same seed, same perturbations
    assert len(cues[0]) == 3 * 4 * 2
    assert {c["cue_slot"] for c in cues[0]} == {"A", "B"}
    for study in (one,):
        for task in Task.objects.filter(batch__study=study):
            twins = Task.objects.filter(batch=task.batch, pair_index=task.pair_index)
            assert sorted(t.cue["cue_slot"] for t in twins) == ["A", "B"]  # the cue on each side once
    details = {key for cue in cues[0] for key in cue} - {"cue_slot"}
    expected = {"authority": {"citation"}, "verbosity": {"padding"}, "refinement": set(), "identity": {"persona"}}
    assert details == expected[condition]
    if details:  # drawn per task, not one value for the study
        (key,) = details
        assert len({str(c[key]) for c in cues[0]}) > 3
    other_seed = build_study(f"seed-{condition}", instructions=3)
    services.generate_batches(study=other_seed, condition=condition, seed=6, pairs_per_batch=4)
    if details:
        assert [t.cue for t in Task.objects.filter(batch__study=other_seed)] != cues[0]


@pytest.mark.django_db
def test_checks_carry_the_cue_like_the_items_do():
    study = build_study("checked", instructions=2, attention_check_rate=0.25)
    services.generate_batches(study=study, condition="authority", seed=3, pairs_per_batch=4)
    checks = Task.objects.filter(batch__study=study).exclude(role=Task.Role.ITEM)
    assert checks.exists()
    assert all(t.cue.get("citation") and t.cue["cue_slot"] in "AB" for t in checks)
    for task in checks:  # a catch pair's broken answer carries the citation too: it does not stand out
        _banner, text_a, text_b = _shown(study, task)
        assert PREFIX + task.cue["citation"] in (text_a if task.cue["cue_slot"] == "A" else text_b)


def test_the_researcher_can_pick_every_new_condition():
    assert set(CALM) <= {value for value, _label in GENERATABLE}


@pytest.mark.django_db
def test_generate_from_the_page_for_a_new_condition(researcher_client):
    study = build_study("gen-calm", instructions=2)
    url = reverse("annotations:generate", args=[study.slug])
    response = researcher_client.post(url, {"condition": "refinement", "seed": 3, "pairs_per_batch": 2})
    assert response.status_code == 302 and study.batches.filter(condition="refinement").count() == 2


# --- what is shown -----------------------------------------------------------------------------


def _shown_tasks(slug: str, *conditions: str):
    """Each task of a one-pair design per condition, with its responses and what it shows."""
    study = build_study(slug, instructions=1)
    for condition in conditions:
        services.generate_batches(study=study, condition=condition, seed=2, pairs_per_batch=1)
    for task in Task.objects.filter(batch__study=study):
        yield (task, *task.slot_responses(), *_shown(study, task))


@pytest.mark.django_db
def test_answer_perturbations_change_the_cued_answer_only():
    for task, a, b, banner, text_a, text_b in _shown_tasks("shown", "authority", "verbosity"):
        cued, plain = (text_a, text_b) if task.cue["cue_slot"] == "A" else (text_b, text_a)
        original = a.text if task.cue["cue_slot"] == "A" else b.text
        assert banner == "" and plain in (a.text, b.text) and cued.startswith(original + "\n\n")
        if task.condition == "authority":
            assert cued == f"{original}\n\n{PREFIX}{task.cue['citation']}"
        else:
            assert cued == f"{original}\n\n{' '.join(task.cue['padding'])}"
            assert all(sentence in PADDING for sentence in task.cue["padding"])


@pytest.mark.django_db
def test_prompt_sentences_name_the_cued_system_and_leave_the_answers():
    for task, a, b, banner, text_a, text_b in _shown_tasks("sentences", "refinement", "identity"):
        slot = task.cue["cue_slot"]
        other = "B" if slot == "A" else "A"
        assert (text_a, text_b) == (a.text, b.text)
        if task.condition == "refinement":
            assert banner == f"System {slot} is a refined version of System {other}: it was revised to improve on it."
        else:
            assert banner == f"System {slot} was written by {task.cue['persona']}."


@pytest.mark.django_db
def test_a_cue_without_its_details_shows_nothing_made_up():
    """Imported votes may carry the cued slot alone: no blank reference, no 'written by .'."""
    study = build_study("bare", instructions=1)
    services.generate_batches(study=study, condition="authority", seed=2, pairs_per_batch=1)
    services.generate_batches(study=study, condition="identity", seed=2, pairs_per_batch=1)
    for task in Task.objects.filter(batch__study=study):
        task.cue = {"cue_slot": "A"}
        a, b = task.slot_responses()
        assert _shown(study, task) == ("", a.text, b.text)


@pytest.mark.django_db
@pytest.mark.parametrize("condition", ["authority", "verbosity"])
def test_the_worker_page_shows_the_perturbed_answer_escaped_and_review_shows_it_again(condition, researcher):
    study = _hostile_study(f"page-{condition}", condition, created_by=researcher)
    worker = Client()
    enter(worker, study, code=f"w-{condition}")
    qualify(worker, study)
    url = current_task_url(worker, study)
    html = worker.get(url).content.decode()
    assert HOSTILE not in html and "<script>alert" not in html and "<img src=x" not in html
    task = Task.objects.get(batch__study=study, position=int(url.rsplit("/", 1)[1]))
    _banner, text_a, text_b = _shown(study, task)
    cued = (text_a, text_b)["AB".index(task.cue["cue_slot"])]
    addition = cued.rsplit("\n\n", 1)[1]  # the citation or the padding, as the worker reads it
    box = _slot(html, task.cue["cue_slot"].lower())
    other = _slot(html, "b" if task.cue["cue_slot"] == "A" else "a")
    assert escape(addition) in box and escape(addition) not in other
    assert escape(HOSTILE) in box and 'id="cue-banner"' not in html
    _answer_the_batch(worker, study)

    # The review page shows the same perturbed text, still escaped.
    [assignment] = study.batches.get().assignments.all()
    review = Client()
    review.force_login(researcher)
    page = review.get(reverse("annotations:review-list", args=[study.slug])).content.decode()
    assert HOSTILE not in page and "<script>alert" not in page
    assert escape(addition) in page and escape(HOSTILE) in page
    assert assignment.submissions.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("condition", ["refinement", "identity"])
def test_the_worker_page_shows_the_sentence_as_a_banner_and_review_shows_it_again(condition, researcher):
    study = _hostile_study(f"banner-{condition}", condition, created_by=researcher)
    if condition == "identity":  # a stored cue is untrusted too (an import, an edit): escaped
        Task.objects.filter(batch__study=study).update(cue={"cue_slot": "B", "persona": "<b>a hacker</b>"})
    worker = Client()
    enter(worker, study, code=f"w-{condition}")
    qualify(worker, study)
    url = current_task_url(worker, study)
    html = worker.get(url).content.decode()
    task = Task.objects.get(batch__study=study, position=int(url.rsplit("/", 1)[1]))
    banner, text_a, text_b = _shown(study, task)
    assert banner and f'<p class="banner" id="cue-banner" role="note">Note: {escape(banner)}</p>' in html
    assert "<b>a hacker</b>" not in html and "<script>alert" not in html
    assert escape(text_a) in _slot(html, "a") and escape(text_b) in _slot(html, "b")
    _answer_the_batch(worker, study)
    review = Client()
    review.force_login(researcher)
    page = review.get(reverse("annotations:review-list", args=[study.slug])).content.decode()
    assert f"Shown with it: {escape(banner)}" in page and "<b>a hacker</b>" not in page


@pytest.mark.django_db
def test_the_mturk_preview_shows_the_pair_as_the_task_page_does():
    study = _hostile_study("preview-authority", "authority")
    task = Task.objects.filter(batch__study=study, role=Task.Role.ITEM).order_by("batch_id", "position").first()
    _banner, text_a, text_b = _shown(study, task)
    url = reverse("annotations:start", args=[study.slug]) + "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"
    html = Client().get(url).content.decode()
    assert escape(text_a).replace("\n", "<br>") in html and escape(text_b).replace("\n", "<br>") in html
    assert PREFIX in html and "<script>alert" not in html
    refinement = _hostile_study("preview-refinement", "refinement")
    url = reverse("annotations:start", args=[refinement.slug]) + "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"
    assert "is a refined version of" in Client().get(url).content.decode()


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
CUES = {
    "authority": {"cue_slot": "B", "citation": "Chen, A. (2019). Measuring answers. https://doi.org/10.1/2"},
    "verbosity": {"cue_slot": "B", "padding": list(PADDING[:3])},
    "refinement": {"cue_slot": "B"},
    "identity": {"cue_slot": "B", "persona": "a woman"},
}


def _follow_share(worker: SimWorker, condition: str) -> float:
    rng = random.Random(7)
    picks = [
        choose_pair(worker, quality_a=0.5, quality_b=0.5, cue=CUES[condition], rng=rng, condition=condition)
        for _ in range(DRAWS)
    ]
    return picks.count("B") / DRAWS


@pytest.mark.parametrize("condition", CALM)
def test_each_new_susceptibility_moves_its_own_cue_follow_rate(condition):
    assert _follow_share(CAREFUL, condition) == pytest.approx(0.5, abs=0.03)
    assert _follow_share(replace(CAREFUL, **{condition: 0.3}), condition) == pytest.approx(0.65, abs=0.03)
    # Another bias's susceptibility, bandwagon's included, does not pull this cue.
    others = {c: 0.3 for c in CALM if c != condition}
    assert _follow_share(replace(CAREFUL, bandwagon=0.4, **others), condition) == pytest.approx(0.5, abs=0.03)


def test_the_crowd_draws_each_new_susceptibility_within_its_bounds():
    crowd = make_crowd(seed=2024, size=96, careless=4)
    assert crowd == make_crowd(seed=2024, size=96, careless=4)
    for condition, (mean, _sd, high) in CALM_SUSCEPTIBILITY.items():
        values = [getattr(w, condition) for w in crowd]
        assert all(0 <= v <= high for v in values) and len(set(values)) > 40
        assert abs(sum(values) / len(values) - mean) < 0.03  # clipping at 0 lifts the mean a little
    assert CALM_SUSCEPTIBILITY["refinement"][0] > CALM_SUSCEPTIBILITY["identity"][0]


def _traits_before_calm(seed: int, size: int, careless: int, failing: int = 1) -> list[tuple]:
    """make_crowd as it was before CALM's susceptibilities: the earlier traits must not move."""

    def clip(value: float, low: float, high: float) -> float:
        return min(high, max(low, value))

    rng = random.Random(f"simulated-crowd:{seed}")
    out = []
    for i in range(size):
        is_careless = i >= size - careless
        out.append(
            (
                f"sim-worker-{i + 1:02d}",
                rng.uniform(0.6, 1.4),
                clip(rng.gauss(0.08, 0.06), 0.0, 0.3),
                clip(rng.gauss(0.15, 0.1), 0.0, 0.45),
                clip(rng.gauss(0.03, 0.03), 0.0, 0.1),
                rng.uniform(10.0, 22.0),
                ("always_a", "random")[i % 2] if is_careless else "",
                not is_careless and i >= size - careless - failing,
                not is_careless and rng.random() < 0.15,
            )
        )
    return out


@pytest.mark.parametrize(("seed", "size"), [(2024, 48), (2024, 96), (7, 20)])
def test_the_new_susceptibilities_are_on_their_own_stream(seed, size):
    crowd = make_crowd(seed=seed, size=size, careless=4)
    assert [
        (
            w.label,
            w.sensitivity,
            w.first_slot,
            w.bandwagon,
            w.attentional,
            w.median_pair_s,
            w.careless,
            w.fails_qualification,
            w.first_attempt_slip,
        )
        for w in crowd
    ] == _traits_before_calm(seed, size, 4)


def test_the_earlier_conditions_answer_as_before():
    """Same worker, same rng: a CoBBLEr cue's answers do not depend on the CALM traits or the new argument."""
    worker = make_crowd(seed=2024, size=48, careless=4)[0]
    without = replace(worker, authority=0.0, verbosity=0.0, refinement=0.0, identity=0.0)
    cues = {
        "bandwagon": {"cue_slot": "A", "percent": 85},
        "attentional": {"cue_slot": "B", "distractor": "System B likes to eat apples and oranges."},
        "order": {"order": "first"},
    }
    for condition, cue in cues.items():
        runs = []
        for who, named in ((worker, condition), (without, condition), (worker, "")):
            rng = random.Random(3)
            runs.append(
                [choose_pair(who, quality_a=0.2, quality_b=0.9, cue=cue, rng=rng, condition=named) for _ in range(300)]
            )
        assert runs[0] == runs[1] == runs[2], condition
