"""Worker pages that survive Back, a second tab and a screen reader (issue 12, item 1)."""

from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import URLPattern, get_resolver, reverse

from annotations import services
from annotations.models import Assignment, QualificationItem, Study, Submission
from cobbler_site.foundation.access import Audience, audience_of
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.helpers import form_fields

HX = {"HX-Request": "true"}


def _worker_routes() -> list[URLPattern]:
    resolver = get_resolver()
    found = []
    for p in resolver.url_patterns:
        for q in getattr(p, "url_patterns", [p]):
            if isinstance(q, URLPattern) and audience_of(q.callback) == Audience.WORKER:
                found.append(q)
    return found


def _url(pattern: URLPattern, study: Study, assignment_id: int = 1, position: int = 0) -> str:
    kwargs = {"slug": study.slug, "assignment_id": assignment_id, "position": position}
    names = re.findall(r"<(?:\w+:)?(\w+)>", str(pattern.pattern))
    return reverse(f"annotations:{pattern.name}", kwargs={k: kwargs[k] for k in names})


def _no_store(response) -> bool:
    return "no-store" in response.get("Cache-Control", "")


def test_every_worker_route_and_redirect_is_no_store(worker, pilot):
    routes = _worker_routes()
    assert {p.name for p in routes} >= {"start", "consent", "instructions", "qualify", "work", "task", "done"}
    task_url = current_task_url(worker, pilot)  # leases the batch
    assignment = Assignment.objects.get()
    seen = []
    for pattern in routes:
        url = _url(pattern, pilot, assignment.pk, 0)
        for who, client in (("anonymous", Client()), ("worker", worker)):
            response = client.get(url)
            seen.append((pattern.name, who, response.status_code))
            assert _no_store(response), (pattern.name, who, response.status_code, response.get("Cache-Control"))
    # Redirects are among them (the ones Chrome replayed), and so are plain pages and 403s.
    codes = {code for _n, _w, code in seen}
    assert {200, 302, 403} <= codes
    entry = worker.get(reverse("annotations:start", args=[pilot.slug]) + "?code=worker-1")
    assert entry.status_code == 302 and _no_store(entry)
    token, _ = form_fields(worker, task_url)
    answered = worker.post(task_url, {"token": token, "choice": "A"})
    assert answered.status_code == 302 and _no_store(answered)
    hx = worker.post(current_task_url(worker, pilot), {"token": "forged", "choice": "A"}, headers=HX)
    assert hx.status_code == 422 and _no_store(hx)


def test_worker_pages_link_nowhere_on_the_researcher_side(worker, pilot):
    pages = [reverse(f"annotations:{name}", args=[pilot.slug]) for name in ("consent", "instructions")]
    pages.append(current_task_url(worker, pilot))
    researcher_paths = (reverse("home"), "/crowd/", "/admin/", "/judging/", "/analysis/", "/dashboard")
    for url in pages:
        html = worker.get(url).content.decode()
        hrefs = re.findall(r'href="([^"]+)"', html)
        assert hrefs, url  # the stylesheet at least
        bad = [h for h in hrefs if h == reverse("home") or any(h.startswith(p) for p in researcher_paths[1:])]
        assert not bad, (url, bad)
        assert 'class="brand"' in html and f'<span class="brand">{pilot.name}</span>' in html


def test_the_progress_bar_has_an_accessible_name(worker, pilot):
    html = worker.get(current_task_url(worker, pilot)).content.decode()
    bar = re.search(r'<div class="progress-bar" role="progressbar"[^>]*>', html).group(0)
    label_id = re.search(r'aria-labelledby="([^"]+)"', bar).group(1)
    assert re.search(rf'id="{label_id}"[^>]*>Task <strong id="task-number">1</strong> of 6', html)
    assert 'aria-valuetext="0 of 6 tasks answered"' in bar


def test_the_attempts_counter_counts_down_after_each_try(client, pilot):
    enter(client, pilot)
    client.post(reverse("annotations:consent", args=[pilot.slug]), {"agree": "yes"})
    url = reverse("annotations:qualify", args=[pilot.slug])
    assert '<span id="attempts-left">2</span>' in client.get(url).content.decode()
    items = QualificationItem.for_study(pilot)
    wrong = {f"q{i.pk}": "B" if i.gold == "A" else "A" for i in items}
    response = client.post(url, wrong, headers=HX)
    fragment = response.content.decode()
    # The counter lives in the fragment htmx swaps in, so it is right without a reload.
    assert response.status_code == 422 and "<html" not in fragment
    assert '<span id="attempts-left">1</span>' in fragment
    assert '<span id="attempts-left">1</span>' in client.get(url).content.decode()


def test_a_second_tab_is_told_its_answer_was_not_saved(worker, pilot):
    url = current_task_url(worker, pilot)
    first_tab, _ = form_fields(worker, url)
    second_tab, _ = form_fields(worker, url)
    assert worker.post(url, {"token": first_tab, "choice": "A"}, headers=HX).status_code == 200
    response = worker.post(url, {"token": second_tab, "choice": "B"}, headers=HX)
    html = response.content.decode()
    # htmx swaps 2xx only (plain POSTs get a 409, test_worker_tasks): a fragment, not a page.
    assert response.status_code == 200 and "<html" not in html and 'id="task-conflict"' in html
    assert "answered in another tab" in html and 'role="alert"' in html
    assert f'href="{current_task_url(worker, pilot)}"' in html
    assert list(Submission.objects.values_list("choice", flat=True)) == ["A"]
    # A double click (the same form twice) is not a conflict.
    again = worker.post(url, {"token": first_tab, "choice": "A"}, headers=HX)
    assert again.status_code == 200 and "HX-Redirect" in again and b"task-conflict" not in again.content


@pytest.fixture
def order_study(db) -> Study:
    study = build_study("order-pilot", overlap=1)
    services.generate_batches(study=study, condition="order", seed=3, pairs_per_batch=2)
    return study


def test_the_order_condition_page_has_a_live_hint_for_out_of_order_opening(client, order_study):
    enter(client, order_study, code="order-worker")
    qualify(client, order_study)
    html = client.get(current_task_url(client, order_study)).content.decode()
    assert 'data-sequential="1"' in html
    assert re.search(r'id="reveal-hint" role="status" aria-live="polite"', html)


def test_the_order_condition_hint_says_what_the_worker_does(client, order_study, pilot):
    """The answers start hidden: open A, then B; the choices unlock once both were opened (rank.js)."""
    enter(client, order_study, code="order-hint")
    qualify(client, order_study)
    html = client.get(current_task_url(client, order_study)).content.decode()
    assert (
        "id=\"order-hint\">Open System A's answer, then System B's: the buttons to choose unlock once you have" in html
    )
    assert "Keyboard: once both answers are open, press" in html
    instructions = render_to_string("annotations/worker/instructions.html", {"study": order_study})
    assert "open System A's answer first, then System B's; you can choose once you have opened both" in instructions
    # A side-by-side pair has no such hint.
    other = Client()
    enter(other, pilot, code="plain-hint")
    qualify(other, pilot)
    plain = other.get(current_task_url(other, pilot)).content.decode()
    assert 'id="order-hint"' not in plain and "Keyboard: press" in plain


def test_the_completion_page_has_no_meta_refresh_but_an_announced_cancellable_countdown(client, pilot):
    enter(client, pilot, PROLIFIC_PID="60a1b2c3d4e5f6a7b8c9d001", STUDY_ID="st", SESSION_ID="se")
    qualify(client, pilot)
    current_task_url(client, pilot)
    Assignment.objects.update(status=Assignment.Status.SUBMITTED)
    html = client.get(reverse("annotations:done", args=[pilot.slug])).content.decode()
    assert "http-equiv" not in html.lower()
    assert (
        f'id="prolific-return" href="https://app.prolific.com/submissions/complete?cc={pilot.code_completed}"' in html
    )
    countdown = re.search(r'<div class="countdown" id="return-countdown"[^>]*>', html).group(0)
    assert 'data-seconds="20"' in countdown and " hidden" in countdown  # shown by worker.js only
    assert 'id="countdown-status" class="sr-only" role="status" aria-live="polite"' in html
    assert 'id="countdown-cancel"' in html
    # Studies that don't send workers back get neither.
    Study.objects.filter(pk=pilot.pk).update(prolific_redirect=False)
    html = client.get(reverse("annotations:done", args=[pilot.slug])).content.decode()
    assert "return-countdown" not in html and "prolific-return" not in html
