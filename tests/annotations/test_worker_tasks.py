from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotations import services
from annotations.models import Assignment, Study, Submission, Task
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.helpers import form_fields

XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'


def test_a_pairwise_answer_is_stored_with_its_display_order(worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    response = worker.post(url, {"token": token, "choice": "B", "client_ms": "1500"})
    assert response.status_code == 302
    sub = Submission.objects.get()
    task = sub.task
    assert sub.choice == "B" and sub.chosen_response_id == task.slot_response_ids()[1]
    assert sub.display_order == list(task.slot_response_ids())
    assert sub.server_time_ms is not None and sub.time_on_task_ms <= max(sub.server_time_ms, 1500)
    assert response["Location"].endswith("/1")  # the next task


def test_the_client_clock_cannot_inflate_time_on_task(worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    worker.post(url, {"token": token, "choice": "A", "client_ms": str(10**8)})
    sub = Submission.objects.get()
    assert sub.time_on_task_ms == sub.server_time_ms < 60_000


def test_htmx_gets_a_fragment_and_plain_gets_the_page(worker, pilot):
    url = current_task_url(worker, pilot)
    page = worker.get(url)
    assert b"<html" in page.content and b'id="task-form"' in page.content
    fragment = worker.get(url, headers={"HX-Request": "true"})
    assert b"<html" not in fragment.content and fragment.content.lstrip().startswith(b"<form")
    token, _ = form_fields(worker, url)
    response = worker.post(url, {"token": token, "choice": "A"}, headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Redirect"].endswith("/1")


def test_it_checks_ownership(worker, other_worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    assert other_worker.get(url).status_code == 404
    assert other_worker.post(url, {"token": token, "choice": "A"}).status_code == 404
    assert Submission.objects.count() == 0


def test_invalid_choice_is_422_and_stores_nothing(worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    response = worker.post(url, {"token": token, "choice": "C"}, headers={"HX-Request": "true"})
    assert response.status_code == 422 and b"Choose System A or System B" in response.content
    assert b"<html" not in response.content
    forged = worker.post(url, {"token": token[:-3] + "abc", "choice": "A"})
    assert forged.status_code == 422 and b"expired" in forged.content
    assert Submission.objects.count() == 0


def test_double_submit_and_a_second_tab_store_one_row(worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    second_tab_token, _ = form_fields(worker, url)
    first = worker.post(url, {"token": token, "choice": "A"})
    again = worker.post(url, {"token": token, "choice": "A"})
    other_tab = worker.post(url, {"token": second_tab_token, "choice": "B"})
    assert first.status_code == again.status_code == 302 and first["Location"] == again["Location"]
    # The second tab's answer is not stored (first answer wins), and the worker is told so.
    assert other_tab.status_code == 409 and b"answered in another tab" in other_tab.content
    assert f'href="{first["Location"]}"'.encode() in other_tab.content
    assert list(Submission.objects.values_list("choice", flat=True)) == ["A"]


def test_a_reload_resumes_at_the_first_unanswered_task(worker, pilot):
    for _ in range(3):
        url = current_task_url(worker, pilot)
        token, _ = form_fields(worker, url)
        worker.post(url, {"token": token, "choice": "A"})
    # Reload (or come back through the start link): the same sitting continues at task 4.
    enter(worker, pilot, code="worker-1")
    assert current_task_url(worker, pilot).endswith("/3")
    assert Assignment.objects.count() == 1
    # An answered task can't be re-answered: its page sends the worker on.
    assert worker.get(url).status_code == 302


def test_finishing_the_batch_shows_the_completion_code(worker, pilot):
    while True:
        url = current_task_url(worker, pilot)
        if url.endswith("/done"):
            break
        token, _ = form_fields(worker, url)
        worker.post(url, {"token": token, "choice": "B"})
    assignment = Assignment.objects.get()
    assert assignment.status == "submitted" and assignment.submissions.count() == 6
    page = worker.get(url).content.decode()
    assert pilot.code_completed in page and "prolific.com" not in page


def test_prolific_workers_are_sent_back_with_the_code(client, pilot):
    enter(client, pilot, PROLIFIC_PID="abc000000000000000000abc", STUDY_ID="s", SESSION_ID="x")
    qualify(client, pilot)
    assignment_url = current_task_url(client, pilot)
    Assignment.objects.update(status=Assignment.Status.SUBMITTED)
    page = client.get(reverse("annotations:done", args=[pilot.slug])).content.decode()
    assert f"https://app.prolific.com/submissions/complete?cc={pilot.code_completed}" in page
    assert "/a/" in assignment_url


def test_an_expired_lease_gives_the_timed_out_code(worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    Assignment.objects.update(leased_until=timezone.now() - timedelta(minutes=1))
    response = worker.post(url, {"token": token, "choice": "A"})
    assert response["Location"].endswith("/done")
    assert Submission.objects.count() == 0
    assert pilot.code_timed_out in worker.get(response["Location"]).content.decode()
    assert Assignment.objects.get().status == "expired"


@pytest.fixture
def ranking_study(db) -> Study:
    study = build_study("ranks", instructions=2, overlap=3, texts={(0, "beta"): XSS})
    services.generate_batches(study=study, condition="ranking", seed=1)
    return study


def _ranking_worker(client, study, code="r1"):
    enter(client, study, code=code)
    qualify(client, study)
    return current_task_url(client, study)


def test_a_ranking_is_stored_best_first_with_the_bar(client, ranking_study):
    url = _ranking_worker(client, ranking_study)
    token, shown = form_fields(client, url)
    assert shown[0] == "bar" and len(shown) == 5
    order = shown[1:][::-1]
    values = [order[0], order[1], "bar", order[2], order[3]]
    response = client.post(url, {"token": token, "answer": values, "bar_placed": "1"})
    assert response.status_code == 302
    sub = Submission.objects.get()
    assert sub.ranking == [int(x) for x in order] and sub.bar_position == 2
    assert sub.display_order == [int(x) for x in shown[1:]]


@pytest.mark.parametrize("htmx", [False, True])
def test_the_page_refuses_a_ranking_whose_bar_was_neither_placed_nor_confirmed(client, ranking_study, htmx):
    """An untouched bar sits on top ("nothing is acceptable"): the worker page must say the
    worker placed or confirmed it (answers.BAR_PLACED), or nothing is stored."""
    url = _ranking_worker(client, ranking_study)
    token, shown = form_fields(client, url)
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.post(url, {"token": token, "answer": shown}, headers=headers)
    assert response.status_code == 422
    assert "Place the black &#x27;acceptable&#x27; bar" in response.content.decode()
    assert Submission.objects.count() == 0
    # Confirmed where it is (on top): stored, with nothing above the bar.
    response = client.post(url, {"token": token, "answer": shown, "bar_placed": "1"}, headers=headers)
    assert response.status_code in (200, 302) and Submission.objects.get().bar_position == 0


def test_the_display_order_is_random_per_participant_but_stable_on_reload(client, ranking_study):
    url = _ranking_worker(client, ranking_study)
    _, first = form_fields(client, url)
    _, again = form_fields(client, url)
    assert first == again
    task = Task.objects.get(batch__assignments__isnull=False, position=0)
    orders = {
        tuple(
            services.shown_order(
                assignment=Assignment(participant_id=p), task=task, expected=task.expected_response_ids()
            )
        )
        for p in range(1, 30)
    }
    assert len(orders) > 5  # 29 participants, 24 possible orders: far from one fixed order


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda ids: ids[:-1] + ["bar"], "Rank all 4 answers"),
        (lambda ids: ids[:-1] + [ids[0], "bar"], "more than once"),
        (lambda ids: ids[:-1] + ["999999", "bar"], "not part of this task"),
        (lambda ids: ids + ["bar", "bar"], "bar appears twice"),
        (lambda ids: ids, "Place the"),
        (lambda ids: ids + ["bar", "x"], "unknown answer"),
    ],
)
def test_malformed_rankings_are_rejected_and_nothing_is_stored(client, ranking_study, mangle, message):
    url = _ranking_worker(client, ranking_study)
    token, shown = form_fields(client, url)
    response = client.post(url, {"token": token, "answer": mangle(shown[1:])}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert message in response.content.decode()
    assert Submission.objects.count() == 0


def test_answer_texts_are_escaped(client, ranking_study):
    html = ""
    url = _ranking_worker(client, ranking_study)
    html = client.get(url).content.decode()
    if "__xss" not in html:  # the XSS answer is in the other instruction's task
        token, shown = form_fields(client, url)
        client.post(url, {"token": token, "answer": shown, "bar_placed": "1"})
        html = client.get(current_task_url(client, ranking_study)).content.decode()
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert "<script>window.__xss" not in html and "<img src=x" not in html


def test_a_task_page_and_its_submit_cost_a_fixed_number_of_queries(worker, pilot, django_assert_max_num_queries):
    # The crowd's p95 budget (benchmarks/annotation_load.py) is spent mostly on round trips to the
    # database: the progress bar and the "answered already?" check are one query, the pair's answers
    # come with the task, a submit inserts without looking first, and the study comes with the worker.
    url = current_task_url(worker, pilot)  # the first task page also opens the lease: not counted
    token, _ = form_fields(worker, url)
    worker.post(url, {"token": token, "choice": "A", "client_ms": "1500"})
    url = current_task_url(worker, pilot)
    with django_assert_max_num_queries(4):
        token, _ = form_fields(worker, url)
    with django_assert_max_num_queries(9):  # 7, and a savepoint inside the test's transaction
        response = worker.post(url, {"token": token, "choice": "B", "client_ms": "1500"})
    assert response.status_code == 302
    assignment = Assignment.objects.get()
    assert assignment.progress() == (2, Task.objects.filter(batch=assignment.batch).count())
