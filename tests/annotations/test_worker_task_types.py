"""Task types a study can switch on (issue 12 item 3): ties, rationales, surveys, check tasks,
and the untouched-ranking flag, through the worker pages as a worker's browser posts them."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotations import answers, services, surveys
from annotations.models import Assignment, Study, Submission, Task
from annotations.services.crowd import sample_task
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.helpers import form_fields

XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
SURVEYS = {
    "pre": [
        {
            "id": "experience",
            "text": "How often do you use AI chat assistants?",
            "kind": "choice",
            "choices": ["Never", "Sometimes", "Daily"],
            "required": True,
        },
        {"id": "note", "text": "Anything we should know?", "kind": "text"},
    ],
    "post": [
        {"id": "difficulty", "text": "How hard were the tasks?", "kind": "scale", "min": 1, "max": 5, "required": True},
    ],
}


def _pairwise_study(slug: str, **fields: object) -> Study:
    """One batch (one instruction) of four plain tasks, two places."""
    study = build_study(slug, instructions=1, overlap=2, **fields)
    services.generate_batches(study=study, condition="plain", seed=3, pairs_per_batch=2)
    return study


def _worker(study: Study, code: str = "w1") -> Client:
    client = Client()
    enter(client, study, code=code)
    qualify(client, study)
    return client


def _answer_all(client: Client, study: Study) -> str:
    """Answer every task with "A"; returns the URL the last answer led to."""
    url = current_task_url(client, study)
    while "/a/" in url:
        token, _ = form_fields(client, url)
        url = client.post(url, {"token": token, "choice": "A"})["Location"]
    return url


# -- ties ------------------------------------------------------------------------------------------


def test_a_tie_is_stored_as_T_with_no_chosen_response_where_the_study_allows_ties(db):
    study = _pairwise_study("ties", allow_ties=True)
    worker = _worker(study)
    url = current_task_url(worker, study)
    page = worker.get(url).content.decode()
    assert 'id="choose-tie"' in page and 'aria-keyshortcuts="0"' in page and "<kbd>0</kbd>" in page
    token, _ = form_fields(worker, url)
    response = worker.post(url, {"token": token, "choice": "T"})
    assert response.status_code == 302
    sub = Submission.objects.get()
    assert (sub.choice, sub.chosen_response_id) == ("T", None)
    assert sub.display_order == list(sub.task.slot_response_ids())


def test_a_tie_is_refused_with_a_clear_error_where_the_study_allows_none(db):
    study = _pairwise_study("noties")
    worker = _worker(study)
    url = current_task_url(worker, study)
    page = worker.get(url).content.decode()
    assert 'id="choose-tie"' not in page and "no preference" not in page.lower()
    assert 'aria-keyshortcuts="1"' in page and 'aria-keyshortcuts="2"' in page
    token, _ = form_fields(worker, url)
    response = worker.post(url, {"token": token, "choice": "T"}, headers={"HX-Request": "true"})
    assert response.status_code == 422 and b"no &#x27;no preference&#x27; option" in response.content
    assert Submission.objects.count() == 0


# -- rationale -------------------------------------------------------------------------------------


def test_a_required_rationale_refuses_a_blank_answer_and_stores_a_given_one(db):
    study = _pairwise_study("why", rationale="required")
    worker = _worker(study)
    url = current_task_url(worker, study)
    page = worker.get(url).content.decode()
    assert re.search(r'<label for="rationale">Why\?.*\(required\)', page, re.S)
    assert f'maxlength="{answers.RATIONALE_MAX_CHARS}"' in page and "required>" in page
    token, _ = form_fields(worker, url)
    blank = worker.post(url, {"token": token, "choice": "A", "rationale": "   "})
    assert blank.status_code == 422 and b"Write a short reason" in blank.content
    assert Submission.objects.count() == 0
    stored = worker.post(url, {"token": token, "choice": "B", "rationale": "  B follows the reference.  "})
    assert stored.status_code == 302
    assert Submission.objects.get().rationale == "B follows the reference."


def test_an_optional_rationale_may_stay_blank(db):
    study = _pairwise_study("maybe", rationale="optional")
    worker = _worker(study)
    url = current_task_url(worker, study)
    assert b"(optional)" in worker.get(url).content
    token, _ = form_fields(worker, url)
    assert worker.post(url, {"token": token, "choice": "A"}).status_code == 302
    assert Submission.objects.get().rationale == ""


def test_a_too_long_rationale_is_refused_and_kept_escaped_in_the_form(db):
    study = _pairwise_study("long", rationale="optional")
    worker = _worker(study)
    url = current_task_url(worker, study)
    token, _ = form_fields(worker, url)
    text = XSS + "x" * answers.RATIONALE_MAX_CHARS
    response = worker.post(url, {"token": token, "choice": "A", "rationale": text}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 422
    assert f"{len(text):,} characters long; keep it to {answers.RATIONALE_MAX_CHARS:,}" in body
    assert XSS not in body and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body  # kept, escaped
    assert Submission.objects.count() == 0


def test_without_a_rationale_the_box_is_absent_and_a_posted_one_ignored(db):
    study = _pairwise_study("off")
    worker = _worker(study)
    url = current_task_url(worker, study)
    assert b'name="rationale"' not in worker.get(url).content
    token, _ = form_fields(worker, url)
    worker.post(url, {"token": token, "choice": "A", "rationale": "unasked"})
    assert Submission.objects.get().rationale == ""


def test_submit_task_keeps_its_old_keyword_arguments(db):
    """Callers written before rationales (the crowd simulator) still submit."""
    study = _pairwise_study("compat", allow_ties=True)
    worker = _worker(study)
    url = current_task_url(worker, study)
    token, _ = form_fields(worker, url)
    assignment = Assignment.objects.get()
    task = assignment.batch.tasks.get(position=0)
    sub = services.submit_task(assignment=assignment, task=task, values=[], choice="T", token=token, client_ms=None)
    assert sub.choice == "T" and sub.rationale == "" and not sub.untouched


# -- untouched rankings ----------------------------------------------------------------------------


@pytest.mark.parametrize(("move", "untouched"), [("none", True), ("answer", False), ("bar", False)])
def test_a_ranking_posted_in_the_order_shown_is_stored_as_untouched(db, move, untouched):
    study = build_study("rank", overlap=2)
    services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=1)
    worker = _worker(study)
    url = current_task_url(worker, study)
    token, values = form_fields(worker, url)
    assert values[0] == answers.BAR  # the page shows the bar on top
    if move == "answer":
        values[1], values[2] = values[2], values[1]
    elif move == "bar":
        values[0], values[1] = values[1], values[0]
    assert worker.post(url, {"token": token, "answer": values, "bar_placed": "1"}).status_code == 302
    sub = Submission.objects.get()
    assert sub.untouched is untouched
    assert (sub.ranking == sub.display_order) is (move != "answer")


# -- check tasks -----------------------------------------------------------------------------------


def _check_study(slug: str) -> tuple[Study, list[Task]]:
    study = _pairwise_study(slug)
    tasks = list(Task.objects.filter(batch__study=study).order_by("position"))
    return study, tasks


def _normalised(html: str, *texts: str) -> str:
    """The page with what legitimately differs between two tasks taken out."""
    html = re.sub(r'name="token" value="[^"]+"', "", html)
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"|"x-csrftoken": "[^"]+"', "", html)
    html = re.sub(r"/a/\d+/\d+", "/a/N/N", html)
    html = re.sub(
        r"<strong id=\"task-number\">\d+</strong>|aria-valuenow=\"\d+\"|aria-valuetext=\"[^\"]+\"|width: \d+%", "", html
    )
    for text in texts:
        html = html.replace(text, "TEXT")
    return html


def test_a_catch_pair_shows_its_broken_text_instead_of_that_slots_answer(db):
    study, tasks = _check_study("catch")
    first = tasks[0]
    slot_a, slot_b = first.slot_responses()
    broken = "blorzan answers fep question ..." + XSS
    Task.objects.filter(pk=first.pk).update(
        role=Task.Role.CATCH, expects={"slot": "A", "broken_slot": "B", "broken_text": broken}
    )
    worker = _worker(study)
    page = worker.get(current_task_url(worker, study)).content.decode()
    assert slot_a.text in page and slot_b.text not in page
    assert XSS not in page and "blorzan answers fep question ...&lt;script&gt;" in page


def test_an_instructed_response_item_shows_its_instruction_above_the_pair(db):
    study, tasks = _check_study("instructed")
    text = "Attention check: whatever you think of the answers, choose System B."
    Task.objects.filter(pk=tasks[0].pk).update(role=Task.Role.INSTRUCTED, expects={"slot": "B", "text": text})
    worker = _worker(study)
    page = worker.get(current_task_url(worker, study)).content.decode()
    note = page.index('id="task-note"')
    assert text in page and note < page.index('id="slot-a"')


@pytest.mark.parametrize("role", [Task.Role.CATCH, Task.Role.GOLD])
def test_the_markup_does_not_say_which_tasks_are_checks(db, role):
    """A check page equals an item page but for the answer texts: no class, attribute or URL differs."""
    study, tasks = _check_study("leak-a" if role == Task.Role.CATCH else "leak-b")
    check, item = tasks[0], tasks[1]
    expects = {"slot": "A"} | ({"broken_slot": "B", "broken_text": "gno mok ..."} if role == Task.Role.CATCH else {})
    Task.objects.filter(pk=check.pk).update(role=role, expects=expects)
    worker = _worker(study)
    check_page = worker.get(current_task_url(worker, study)).content.decode()
    token, _ = form_fields(worker, current_task_url(worker, study))
    item_url = worker.post(current_task_url(worker, study), {"token": token, "choice": "A"})["Location"]
    assert item_url.endswith(f"/{item.position}")
    item_page = worker.get(item_url).content.decode()
    texts = [r.text for t in (check, item) for r in t.slot_responses()] + [
        "gno mok ...",
        check.instruction.text,
        item.instruction.text,
    ]
    assert _normalised(check_page, *texts) == _normalised(item_page, *texts)
    for word in ("catch", "gold", "instructed", "attention", "check"):
        assert word not in check_page.lower()


def test_an_mturk_preview_never_shows_a_check_task(db):
    study, tasks = _check_study("preview")
    Task.objects.filter(pk=tasks[0].pk).update(role=Task.Role.GOLD, expects={"slot": "A"})
    assert sample_task(study).pk == tasks[1].pk


# -- survey definitions ----------------------------------------------------------------------------


def test_a_survey_definition_is_validated_and_normalised():
    cleaned = surveys.validate_surveys(
        {
            "pre": [{"id": "age", "text": " Your age group? ", "kind": "choice", "choices": [" 18-30", "31+ "]}],
            "post": [],
        }
    )
    assert cleaned == {
        "pre": [
            {"id": "age", "text": "Your age group?", "kind": "choice", "required": False, "choices": ["18-30", "31+"]}
        ]
    }
    assert surveys.validate_surveys({}) == {} and surveys.validate_surveys(SURVEYS)["post"][0]["max"] == 5


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ([], "must be an object"),
        ({"during": []}, "Unknown survey phase(s) during"),
        ({"pre": {}}, "pre survey must be a list"),
        ({"pre": ["why?"]}, "pre question 1 must be an object"),
        ({"pre": [{"id": "a", "text": "?", "kind": "slider"}]}, "kind must be one of text, choice, scale"),
        ({"pre": [{"id": "A B", "text": "?", "kind": "text"}]}, "id must be 1-40 lower-case"),
        ({"pre": [{"id": "a", "text": " ", "kind": "text"}]}, "text must be 1-500 characters"),
        ({"pre": [{"id": "a", "text": "?", "kind": "text", "required": "yes"}]}, "required must be true or false"),
        ({"pre": [{"id": "a", "text": "?", "kind": "text", "choices": ["x"]}]}, "unknown key(s) choices"),
        ({"pre": [{"id": "a", "text": "?", "kind": "choice", "choices": ["only"]}]}, "list of 2-20 choices"),
        ({"pre": [{"id": "a", "text": "?", "kind": "choice", "choices": ["x", " x"]}]}, "must differ"),
        ({"post": [{"id": "a", "text": "?", "kind": "scale", "min": 5, "max": 1}]}, "whole numbers min < max"),
        ({"post": [{"id": "a", "text": "?", "kind": "scale", "min": True, "max": 3}]}, "whole numbers min < max"),
        ({"post": [{"id": "a", "text": "?", "kind": "scale", "min": 0, "max": 20}]}, "at most 11 points (got 21)"),
        (
            {"post": [{"id": "a", "text": "?", "kind": "text"}, {"id": "a", "text": "!", "kind": "text"}]},
            "repeats the question id(s) a",
        ),
    ],
)
def test_a_malformed_survey_definition_is_refused_with_a_clear_message(definition, message):
    with pytest.raises(ValidationError) as raised:
        surveys.validate_surveys(definition)
    assert message in raised.value.messages[0]


def test_survey_answers_are_cleaned_by_kind():
    questions = surveys.validate_surveys(SURVEYS)["pre"] + surveys.validate_surveys(SURVEYS)["post"]
    got = surveys.clean_answers(questions, {"q-experience": "Daily", "q-note": "  hi ", "q-difficulty": "4"})
    assert got == {"experience": "Daily", "note": "hi", "difficulty": 4}
    with pytest.raises(ValidationError, match="How hard were the tasks"):
        surveys.clean_answers(questions, {"q-experience": "Daily", "q-difficulty": "9"})
    with pytest.raises(ValidationError, match="How often"):
        surveys.clean_answers(questions, {"q-difficulty": "2"})


# -- surveys in the worker's path ------------------------------------------------------------------


def test_the_pre_study_survey_comes_before_the_first_task_and_is_stored_once(db):
    study = _pairwise_study("pre", surveys=SURVEYS)
    worker = _worker(study)
    survey_url = reverse("annotations:pre-survey", args=[study.slug])
    assert current_task_url(worker, study) == survey_url
    assignment = Assignment.objects.get()
    task_url = reverse("annotations:task", args=[study.slug, assignment.pk, 0])
    assert worker.get(task_url)["Location"] == reverse("annotations:work", args=[study.slug])  # no task yet
    page = worker.get(survey_url)
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert (
        b'<legend>How often do you use AI chat assistants? <span class="muted">(required)</span></legend>'
        in page.content
    )
    missing = worker.post(survey_url, {"q-note": "x"}, headers={"HX-Request": "true"})
    assert (
        missing.status_code == 422 and b"<html" not in missing.content and b"This field is required" in missing.content
    )
    assignment.refresh_from_db()
    assert assignment.survey == {}
    answered = worker.post(survey_url, {"q-experience": "Sometimes", "q-note": XSS})
    assert answered["Location"] == reverse("annotations:work", args=[study.slug])
    assert current_task_url(worker, study) == task_url
    # Back to the survey and submit again: the first answers stay, the worker goes on.
    again = worker.post(survey_url, {"q-experience": "Never"})
    assert again.status_code == 302 and again["Location"] == task_url and "no-store" in again["Cache-Control"]
    assert worker.get(survey_url)["Location"] == task_url
    assignment.refresh_from_db()
    assert assignment.survey == {"pre": {"experience": "Sometimes", "note": XSS}}


def test_the_completion_code_waits_for_a_required_post_study_survey(db):
    study = _pairwise_study("post", surveys={"post": SURVEYS["post"]})
    worker = _worker(study)
    survey_url = reverse("annotations:post-survey", args=[study.slug])
    assert _answer_all(worker, study) == survey_url
    assert Assignment.objects.get().status == Assignment.Status.SUBMITTED
    done = worker.get(reverse("annotations:done", args=[study.slug]))
    assert done.status_code == 302 and done["Location"] == survey_url
    page = worker.get(survey_url).content.decode()
    assert study.code_completed not in page
    assert page.count('type="radio" name="q-difficulty"') == 5  # 1..5
    assert worker.post(survey_url, {}).status_code == 422
    assert worker.post(survey_url, {"q-difficulty": "2"})["Location"] == reverse("annotations:work", args=[study.slug])
    assert study.code_completed in worker.get(reverse("annotations:done", args=[study.slug])).content.decode()
    worker.post(survey_url, {"q-difficulty": "5"})  # a resubmit after Back changes nothing
    assert Assignment.objects.get().survey == {"post": {"difficulty": 2}}


def test_a_survey_page_needs_the_workers_cookie_and_a_known_phase(db, client):
    study = _pairwise_study("cookie", surveys=SURVEYS)
    assert client.get(reverse("annotations:pre-survey", args=[study.slug])).status_code == 403
    worker = _worker(study)
    assert worker.get(f"/s/{study.slug}/survey/during").status_code == 404
    # A survey that is not the worker's step sends them to where they stand.
    post_url = reverse("annotations:post-survey", args=[study.slug])
    assert worker.get(post_url)["Location"] == reverse("annotations:work", args=[study.slug])  # no batch yet
    current_task_url(worker, study)
    assert worker.get(post_url)["Location"] == reverse("annotations:pre-survey", args=[study.slug])


def test_each_worker_answers_their_own_survey(db):
    study = _pairwise_study("mine", surveys=SURVEYS)
    alice, bob = _worker(study, "alice"), _worker(study, "bob")
    survey_url = reverse("annotations:pre-survey", args=[study.slug])
    current_task_url(alice, study)
    current_task_url(bob, study)
    alice.post(survey_url, {"q-experience": "Daily"})
    assert [a.survey for a in Assignment.objects.order_by("pk")] == [{"pre": {"experience": "Daily"}}, {}]
    assert current_task_url(bob, study) == survey_url


def test_tie_and_rationale_reach_the_stored_rows_of_a_whole_batch(db):
    study = _pairwise_study("batch", allow_ties=True, rationale="required")
    worker = _worker(study)
    url = current_task_url(worker, study)
    while "/a/" in url:
        token, _ = form_fields(worker, url)
        url = worker.post(url, {"token": token, "choice": "T", "rationale": f"same {url[-1]}"})["Location"]
    rows = list(Submission.objects.order_by("task__position").values_list("choice", "chosen_response", "rationale"))
    total = Task.objects.filter(batch=Assignment.objects.get().batch).count()
    assert total == 4 and rows == [("T", None, f"same {i}") for i in range(total)]


def test_an_optional_post_study_survey_may_be_skipped_on_the_way_to_the_code(db):
    optional = {"post": [{"id": "comment", "text": "Any comment?", "kind": "text"}]}
    study = _pairwise_study("skip", surveys=optional)
    worker = _worker(study)
    survey_url = reverse("annotations:post-survey", args=[study.slug])
    assert _answer_all(worker, study) == survey_url
    assert worker.post(survey_url, {"q-comment": "  "}).status_code == 302
    assert Assignment.objects.get().survey == {"post": {}}
    assert study.code_completed in worker.get(reverse("annotations:done", args=[study.slug])).content.decode()
