"""Crowd-worker pages: entry, consent, instructions, qualification, tasks, completion.

Workers have no account: the signed cookie of annotations.worker_session says who they
are. Every page 404s assignments that are not the worker's own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from annotations import answers, services, surveys
from annotations.biases import cot
from annotations.models import (
    Assignment,
    Condition,
    LeaseLost,
    Participant,
    Response,
    Study,
    Task,
)
from annotations.services import entry_gate
from annotations.services.answering import answered_by_another_page
from annotations.services.capacity import has_free_place
from annotations.services.crowd import is_mturk_preview, sample_task
from annotations.services.lease_caps import client_network
from annotations.services.recruitment import prolific_completion_url
from annotations.shown import answer_letter, shown_pair
from annotations.worker_session import MTURK_SUBMIT_HOSTS, MTurkReturn, remember_worker, signed_in_worker
from cobbler_site.foundation import throttle
from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest

# The completion page's announced, cancellable countdown back to Prolific (no meta refresh).
DONE_REDIRECT_SECONDS = 20


def _go(request: HtmxHttpRequest, url: str) -> HttpResponse:
    # htmx needs HX-Redirect to leave the page; a plain POST gets a 302.
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def no_store(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Every worker response, redirects and error pages too, is ``Cache-Control: no-store``.

    A worker's pages depend on where they stand in the batch. Chrome otherwise replays
    a page or redirect from its cache (or the back-forward cache) on Back, and a stale
    redirect chain loops ("redirected you too many times").
    """

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        add_never_cache_headers(response)
        return response

    return wrapper


def worker_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Load the study and the worker from the signed cookie, or explain how to get in."""

    @no_store
    @functools.wraps(view)
    def wrapper(request: HtmxHttpRequest, slug: str, **kwargs: Any) -> HttpResponse:
        signed_in = signed_in_worker(request, slug=slug)
        if signed_in is None:
            study = get_object_or_404(Study, slug=slug)
            return render(request, "annotations/worker/no_session.html", {"study": study}, status=403)
        identity, participant = signed_in
        study = participant.study  # loaded with the participant
        request.worker_identity = identity  # type: ignore[attr-defined]  # the MTurk return, for done()
        return view(request, study, participant, identity.session_hash, **kwargs)

    wrapper.audience = Audience.WORKER  # type: ignore[attr-defined]  # cobbler_site.foundation.access
    return wrapper


# MTurk shows the HIT's first page in an iframe on its worker site.
MTURK_FRAME_ANCESTORS = ["https://worker.mturk.com", *MTURK_SUBMIT_HOSTS.values()]


def _frameable_by_mturk(response: HttpResponse) -> HttpResponse:
    response.xframe_options_exempt = True  # read by XFrameOptionsMiddleware
    response._csp_replace = {"frame-ancestors": MTURK_FRAME_ANCESTORS}  # type: ignore[attr-defined]  # django-csp
    return response


def _in_cross_site_frame(request: HttpRequest) -> bool:
    # A cross-site iframe gets no SameSite=Lax cookie, so the study can't run there: it opens
    # in its own tab (as psiTurk does), and completion posts back to MTurk from that tab.
    return request.headers.get("Sec-Fetch-Dest") == "iframe" and request.headers.get("Sec-Fetch-Site") == "cross-site"


def _step_url(study: Study, step: services.crowd.Step) -> str:
    if step.name == "consent":
        return reverse("annotations:consent", args=[study.slug])
    if step.name == "qualify":
        return reverse("annotations:qualify", args=[study.slug])
    if step.name == "task":
        assert step.assignment is not None and step.task is not None  # a task step carries both
        return reverse("annotations:task", args=[study.slug, step.assignment.pk, step.task.position])
    if step.name in ("pre_survey", "post_survey"):
        return reverse(f"annotations:{step.name.replace('_', '-')}", args=[study.slug])
    if step.name == "no_work":
        return reverse("annotations:work", args=[study.slug])
    return reverse("annotations:done", args=[study.slug])


@allow(Audience.WORKER)
@no_store
@require_GET
@throttle.limit("start", "THROTTLE_START")
def start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    if is_mturk_preview(request.GET):
        return _frameable_by_mturk(_preview(request, study))
    try:
        entry = services.parse_entry(request.GET)
    except ValidationError as e:
        return render(
            request, "annotations/worker/no_session.html", {"study": study, "error": e.messages[0]}, status=400
        )
    if entry.platform == Participant.Platform.MTURK and _in_cross_site_frame(request):
        context = {"study": study, "url": request.get_full_path()}
        return _frameable_by_mturk(render(request, "annotations/worker/open_in_tab.html", context))
    if not entry_gate.admits(study=study, entry=entry):  # full: say so before consent, create nothing
        return _no_work(
            request, study, entry.platform, entry.mturk_host, retry_url=request.get_full_path(), at_door=True
        )
    try:
        participant, session_hash = services.enter_study(study=study, entry=entry)
    except ValidationError as e:
        return render(
            request, "annotations/worker/no_session.html", {"study": study, "error": e.messages[0]}, status=400
        )
    response = redirect("annotations:work", slug)
    mturk = MTurkReturn(entry.mturk_host, entry.session_id) if entry.mturk_host else None
    remember_worker(response, study=study, participant=participant, session_hash=session_hash, mturk=mturk)
    return response


def _no_work(
    request: HttpRequest, study: Study, platform: str, mturk_host: str, *, retry_url: str, at_door: bool
) -> HttpResponse:
    exit_ = entry_gate.no_work_exit(study=study, platform=platform, mturk_host=mturk_host)
    context = {"study": study, "exit": exit_, "retry_url": retry_url, "at_door": at_door}
    return render(request, "annotations/worker/no_work.html", context)


def _preview(request: HttpRequest, study: Study) -> HttpResponse:
    """MTurk's preview: the consent text and one task, read-only. Nothing is created."""
    sample = sample_task(study)
    # Said before the HIT is accepted, so that nobody accepts work the study cannot give.
    context: dict = {"study": study, "sample": sample, "full": not has_free_place(study)}
    if sample is not None and sample.kind == Task.Kind.PAIRWISE:
        slot_a, slot_b = sample.slot_responses()
        # As the task page shows it: the banner and the perturbed answer, so the preview is honest.
        context["pair"] = shown_pair(study, sample, slot_a.text, slot_b.text)
    elif sample is not None:
        by_id = Response.objects.in_bulk(sample.expected_response_ids())
        context["answers"] = [by_id[pk] for pk in sample.expected_response_ids() if pk in by_id]
    return render(request, "annotations/worker/preview.html", context)


@worker_view
@require_http_methods(["GET", "POST"])
def consent(request: HtmxHttpRequest, study: Study, participant: Participant, session_hash: str) -> HttpResponse:
    error = ""
    if request.method == "POST":
        if request.POST.get("agree") == "yes":
            services.give_consent(participant=participant)
            return _go(request, reverse("annotations:instructions", args=[study.slug]))
        error = "Tick the box to agree, or close this page to leave the study."
    template = "annotations/worker/consent.html" + ("#consent-form" if request.htmx else "")
    return render(request, template, {"study": study, "error": error}, status=422 if error else 200)


@worker_view
@require_GET
def instructions(request: HtmxHttpRequest, study: Study, participant: Participant, session_hash: str) -> HttpResponse:
    if participant.consented_at is None:
        return redirect("annotations:consent", study.slug)
    return render(request, "annotations/worker/instructions.html", {"study": study, "participant": participant})


@worker_view
@require_http_methods(["GET", "POST"])
def qualify(request: HtmxHttpRequest, study: Study, participant: Participant, session_hash: str) -> HttpResponse:
    step = services.next_step(participant=participant, session_hash=session_hash, claim=False)
    if step.name != "qualify":
        return _go(request, _step_url(study, step))
    items = services.qualification_draw(participant=participant)
    reveal = study.qualification_reveal_answers
    error, wrong, chosen = "", [], {}
    if request.method == "POST":
        chosen = {item.pk: request.POST.get(f"q{item.pk}", "") for item in items}
        try:
            wrong = services.grade_qualification(participant=participant, choices=chosen)
        except ValidationError as e:
            error = e.messages[0]
        else:
            if not wrong:
                return _go(request, reverse("annotations:work", args=[study.slug]))
            if participant.qualification_attempts >= study.qualification_attempts_allowed:
                return _go(request, reverse("annotations:done", args=[study.slug]))
            if reveal:
                error = "Some answers were not right. Read the notes below and try again."
            else:
                # Nothing about which items were wrong, and a fresh (reordered) form: feedback
                # would hand the gold answers to the next attempt.
                error = "Not all of your answers were right. Read each question carefully and try again."
                chosen, wrong = {}, []
    layout = services.qualification_layout(participant=participant)  # a failed attempt draws again
    context = {
        "study": study,
        "rows": [
            (item, chosen.get(item.pk, ""), swapped, services.shown_explanation(item, swapped=swapped))
            for item, swapped in layout
        ],
        "wrong_ids": {i.pk for i in wrong} if reveal else set(),
        "reveal": reveal,
        "error": error,
        "chosen": chosen,
        "attempts_left": study.qualification_attempts_allowed - participant.qualification_attempts,
    }
    template = "annotations/worker/qualify.html" + ("#qualify-form" if request.htmx else "")
    return render(request, template, context, status=422 if error else 200)


@worker_view
@require_GET
def work(request: HtmxHttpRequest, study: Study, participant: Participant, session_hash: str) -> HttpResponse:
    """The router: leases a batch if needed and sends the worker to their next screen."""
    network = client_network(throttle.client_ip(request))  # hashed: counts leases per address and network
    step = services.next_step(participant=participant, session_hash=session_hash, network=network)
    if step.name == "no_work":
        identity = request.worker_identity  # type: ignore[attr-defined]  # set by worker_view
        mturk_host = identity.mturk.host if identity.mturk else ""
        retry = reverse("annotations:work", args=[study.slug])
        return _no_work(request, study, participant.platform, mturk_host, retry_url=retry, at_door=False)
    if step.name == "lease_cap":  # no lease was granted; 429: this address may come back later
        return render(request, "annotations/worker/lease_cap.html", {"study": study}, status=429)
    return redirect(_step_url(study, step))


def _task_context(
    study: Study,
    assignment: Assignment,
    task: Task,
    *,
    progress: tuple[int, int] | None = None,
    error: str = "",
    posted: dict | None = None,
) -> dict:
    if task.kind == Task.Kind.PAIRWISE:
        shown = list(task.slot_responses())  # loaded with the task (select_related)
    else:
        order = services.shown_order(assignment=assignment, task=task, expected=task.expected_response_ids())
        by_id = Response.objects.in_bulk(order)
        shown = [by_id[pk] for pk in order]
    answered, total = progress or assignment.progress()
    context = {
        "study": study,
        "assignment": assignment,
        "task": task,
        "error": error,
        "token": answers.issue_token(assignment_id=assignment.pk, task_id=task.pk),
        "answered": answered,
        "total": total,
        "percent": int(100 * answered / total) if total else 0,
        "number": answered + 1,
        "action": reverse("annotations:task", args=[study.slug, assignment.pk, task.position]),
        "rationale_rule": answers.rationale_rule(study_mode=study.rationale, condition=task.condition),
        "rationale_max": answers.RATIONALE_MAX_CHARS,
        "rationale": (posted or {}).get("rationale", ""),
        "allow_ties": study.allow_ties,
    }
    if task.kind == Task.Kind.RANKING:
        context["answers"] = [(answer_letter(i), r) for i, r in enumerate(shown)]
        return context
    slot_a, slot_b = shown
    pair = shown_pair(study, task, slot_a.text, slot_b.text)  # the cue's perturbation included
    context.update(check_note=pair.note, text_a=pair.text_a, text_b=pair.text_b, banner=pair.banner)
    # cot is the order design with the reasoning written first: its answers open one by one too.
    context["sequential"] = task.condition in (Condition.ORDER, Condition.COT)
    context.update(cot_instruction=cot.WORKER_INSTRUCTION, reasoning_label=cot.REASONING_LABEL)
    return context


@worker_view
@require_http_methods(["GET", "POST"])
def task(
    request: HtmxHttpRequest,
    study: Study,
    participant: Participant,
    session_hash: str,
    assignment_id: int,
    position: int,
) -> HttpResponse:
    # Another worker's assignment is a 404, not a 403: don't reveal that it exists.
    assignment = get_object_or_404(
        Assignment.objects.select_related("batch"), pk=assignment_id, participant=participant, batch__study=study
    )
    assignment.batch.study = study  # the filter above proved it: saves the service a query
    # A page shows the pair's two answers: loaded with the task. A submit needs only their ids.
    shows = ("pair__response_a", "pair__response_b") if request.method == "GET" else ("pair",)
    task = get_object_or_404(
        Task.objects.select_related("instruction", *shows), batch_id=assignment.batch_id, position=position
    )
    error = ""
    if request.method == "POST":
        token = request.POST.get("token", "")
        try:
            stored = services.submit_task(
                assignment=assignment,
                task=task,
                values=request.POST.getlist("answer"),
                choice=request.POST.get("choice", ""),
                token=token,
                client_ms=request.POST.get("client_ms"),
                rationale=request.POST.get("rationale"),
                # The page's rule (rank.js, task.html): the bar was moved or confirmed where it is.
                bar_placed=bool(request.POST.get(answers.BAR_PLACED)),
            )
        except LeaseLost:
            return _go(request, reverse("annotations:done", args=[study.slug]))
        except ValidationError as e:
            error = e.messages[0]
        else:
            step = services.next_step(participant=participant, session_hash=session_hash, claim=False)
            if answered_by_another_page(submission=stored, token=token):
                # Say so instead of moving on as if this answer counted. 409 for a plain POST;
                # htmx swaps only 2xx/422 (_base.html), so it gets a 200 fragment.
                template = "annotations/worker/task_conflict.html" + ("#conflict" if request.htmx else "")
                context = {"study": study, "next_url": _step_url(study, step), "number": task.position + 1}
                return render(request, template, context, status=200 if request.htmx else 409)
            return _go(request, _step_url(study, step))
    progress = None
    if request.method == "GET":
        if assignment.expire_if_stale() or assignment.status != Assignment.Status.ACTIVE:
            return redirect("annotations:work", study.slug)
        answered, total, answered_here = assignment.progress_at(task)
        if answered_here or surveys.awaiting(study, assignment) == "pre":
            return redirect("annotations:work", study.slug)
        assignment.mark_opened()  # from now on the study's lease applies, not the short one
        progress = (answered, total)
    template = "annotations/worker/task.html" + ("#task-form" if request.htmx else "")
    context = _task_context(
        study, assignment, task, progress=progress, error=error, posted=request.POST if error else None
    )
    return render(request, template, context, status=422 if error else 200)


@worker_view
@require_http_methods(["GET", "POST"])
def survey(
    request: HtmxHttpRequest, study: Study, participant: Participant, session_hash: str, phase: str
) -> HttpResponse:
    """The pre-study (after a batch is claimed) or post-study (after the last task) questions.

    Shown only while the worker's step is this survey: Back to it after answering, a
    reload or a second submit lands on the current step instead, and the answers stored
    first stay (surveys.record_survey).
    """
    step = services.next_step(participant=participant, session_hash=session_hash, claim=False)
    if step.name != f"{phase}_survey":
        return _go(request, _step_url(study, step))
    questions = surveys.questions_for(study, phase)
    form = surveys.SurveyForm(request.POST if request.method == "POST" else None, questions=questions)
    assert step.assignment is not None  # a survey step carries the worker's assignment
    if form.is_valid():
        surveys.record_survey(assignment=step.assignment, phase=phase, answers=form.answers())
        return _go(request, reverse("annotations:work", args=[study.slug]))
    if phase == "pre":
        step.assignment.mark_opened()  # the worker is at work: the study's lease applies
    context = {
        "study": study,
        "phase": phase,
        "form": form,
        "action": reverse(f"annotations:{phase}-survey", args=[study.slug]),
    }
    template = "annotations/worker/survey.html" + ("#survey-form" if request.htmx else "")
    return render(request, template, context, status=422 if form.errors else 200)


@worker_view
@require_GET
def done(request: HtmxHttpRequest, study: Study, participant: Participant, session_hash: str) -> HttpResponse:
    step = services.next_step(participant=participant, session_hash=session_hash, claim=False)
    codes = {
        "completed": study.code_completed,
        "failed_qualification": study.code_failed_qualification,
        "timed_out": study.code_timed_out,
    }
    if step.name not in codes:
        return redirect(_step_url(study, step))
    code = codes[step.name]
    redirect_url = ""
    if participant.platform == Participant.Platform.PROLIFIC and study.prolific_redirect:
        redirect_url = prolific_completion_url(code)
    identity = request.worker_identity  # type: ignore[attr-defined]  # set by worker_view
    mturk = identity.mturk if participant.platform == Participant.Platform.MTURK else None
    context = {
        "study": study,
        "outcome": step.name,
        "code": code,
        "redirect_url": redirect_url,
        "redirect_seconds": DONE_REDIRECT_SECONDS,
        "mturk": mturk,
    }
    response = render(request, "annotations/worker/done.html", context)
    if mturk is not None:
        # form-action is 'self' site-wide; this page alone may post to the HIT's MTurk host.
        response._csp_update = {"form-action": [MTURK_SUBMIT_HOSTS[mturk.host]]}  # type: ignore[attr-defined]
    return response
