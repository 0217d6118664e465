"""Researcher pages: launch and watch judge jobs, manage registered models (staff only)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import ProtectedError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from cobbler_site.foundation import throttle
from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest
from judging import connection_test, estimate_forms, estimates, presets, services
from judging.forms import ConnectionTestForm, JobForm, JudgeForm
from judging.models import JudgeJob, RegisteredModel


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def jobs(request: HtmxHttpRequest) -> HttpResponse:
    form = JobForm(request.POST or None, user=request.user)
    estimate = None
    if request.method == "POST" and form.is_valid():
        try:
            if estimate_forms.wants_preview(request.POST):
                estimate = estimates.estimate_judge_job(**_judge_job_options(form.cleaned_data))
                form = JobForm(estimate_forms.with_proposed_budget(request.POST, estimate), user=request.user)
                form.is_valid()  # the budget shown is the proposal (or the researcher's own)
            else:
                job = services.start_judge_job(**_judge_job_options(form.cleaned_data), created_by=request.user)
        except services.JobError as exc:
            form.add_error(None, str(exc))
        else:
            if estimate is None:
                url = reverse("judging:job", args=[job.pk])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "judging/jobs.html" + ("#launch-form" if request.htmx else "")
    recent = JudgeJob.objects.manageable_by(request.user).select_related("study", "judge").order_by("-pk")[:50]
    context = {"form": form, "jobs": recent, "estimate": estimate}
    return render(request, template, context, status=422 if form.errors else 200)


def _judge_job_options(data: dict) -> dict:
    """The launch form's fields as start_judge_job's (and estimate_judge_job's) arguments."""
    return {
        "study": data["study"],
        "judge": data["judge"],
        "condition_names": data["conditions"],
        "pair_set": data["pair_set"],
        "budget_usd": data["budget_usd"],
        "bandwagon_percent": data["bandwagon_percent"],
        "parser": data["parser"],
        "prompt_version": data["prompt_version"] or None,
        "seed": data["seed"],
        "mode": data["mode"],
    }


@allow(Audience.RESEARCHER)
@require_http_methods(["GET"])
def job(request: HtmxHttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(JudgeJob.objects.manageable_by(request.user).select_related("study", "judge"), pk=job_id)
    context = {"job": job, "progress": job.progress()}
    if request.htmx:
        response = render(request, "judging/job.html#job-progress", context)
        if job.is_finished:
            # 286 tells htmx to stop polling; the fragment still swaps in its final state.
            return HttpResponseStopPolling(response.content)
        return response
    return render(request, "judging/job.html", context)


@allow(Audience.RESEARCHER)
@require_POST
def job_action(request: HtmxHttpRequest, job_id: int, action: str) -> HttpResponse:
    job = get_object_or_404(JudgeJob.objects.manageable_by(request.user), pk=job_id)
    if action not in services.JOB_ACTIONS:
        raise Http404("unknown action")
    services.JOB_ACTIONS[action](job=job)  # idempotent: a double click changes nothing more
    url = reverse("judging:job", args=[job.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET"])
def judges(request: HtmxHttpRequest) -> HttpResponse:
    judges = RegisteredModel.objects.usable_by(request.user).select_related("owner", "own_template").order_by("name")
    editable = set(RegisteredModel.objects.editable_by(request.user).values_list("pk", flat=True))
    return render(request, "judging/judges.html", {"judges": judges, "editable": editable})


def _editable_judge(request: HtmxHttpRequest, judge_id: int) -> RegisteredModel:
    # A private model someone else owns does not exist for this user; a visible one that is
    # not theirs (public, shared) may be used but not edited.
    judge = get_object_or_404(RegisteredModel.objects.usable_by(request.user), pk=judge_id)
    if not RegisteredModel.objects.editable_by(request.user).filter(pk=judge.pk).exists():
        raise PermissionDenied("only the model's owner (or a superuser) can edit it")
    return judge


def _new_model(request: HtmxHttpRequest) -> RegisteredModel:
    """A new model is private to its creator until shared, and owned from the start, so its
    validation checks the creator's key grants (RegisteredModel.clean)."""
    assert request.user.is_authenticated  # @allow(Audience.RESEARCHER)
    return RegisteredModel(owner=request.user)


def _form_context(form: JudgeForm, judge: RegisteredModel | None) -> dict:
    return {
        "form": form,
        "judge": judge,
        "presets": presets.presets(),
        "knobs": presets.simulator_knobs(),
        "sim_example": presets.simulator_example(),
    }


@allow(Audience.RESEARCHER)
@sensitive_post_parameters("api_key")  # a typed key never shows in a 500 page (DEBUG on too) or error mail
@require_http_methods(["GET", "POST"])
def judge_edit(request: HtmxHttpRequest, judge_id: int | None = None) -> HttpResponse:
    judge = _editable_judge(request, judge_id) if judge_id else None
    instance = judge or _new_model(request)
    form = JudgeForm(request.POST or None, instance=instance, user=request.user)
    if request.method == "POST" and form.is_valid():
        saved = form.save(commit=False)
        if form.cleaned_data["clear_api_key"]:
            saved.set_api_key("")
        elif form.cleaned_data["api_key"]:
            saved.set_api_key(form.cleaned_data["api_key"])
        saved.save()  # a new base_url drops the old key (RegisteredModel.save)
        form.save_m2m()
        roles = " and ".join(
            r for r, on in (("judge", saved.use_as_judge), ("answer generator", saved.use_as_generator)) if on
        )
        verb = "saved" if judge else "registered"
        messages.success(request, f"Model {saved.name} {verb} as {roles}.")
        return redirect("judging:judges")
    status = 422 if form.errors else 200
    return render(request, "judging/judge_form.html", _form_context(form, judge), status=status)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def judge_delete(request: HtmxHttpRequest, judge_id: int) -> HttpResponse:
    judge = _editable_judge(request, judge_id)
    if request.method == "POST":
        name = judge.name
        try:
            judge.delete()
        except ProtectedError:
            messages.error(request, f"Model {name} has jobs, so it is kept (their results refer to it).")
        else:
            messages.success(request, f"Model {name} deleted.")
        return redirect("judging:judges")
    return render(request, "judging/judge_confirm_delete.html", {"judge": judge})


def _connection_response(request: HtmxHttpRequest, judge: RegisteredModel, *, title: str) -> HttpResponse:
    """Throttle, call once, and show the result: an htmx fragment or, without JS, a page."""
    wait = throttle.hit("connection-test", f"user-{request.user.pk}", settings.THROTTLE_CONNECTION_TEST)
    if wait is not None:
        context = {"throttled": wait, "title": title}
        status = 429
    else:
        result = connection_test.run(judge)
        if result.outcome == "works":
            messages.success(request, f"Connection to {title} works: answered in {result.latency_ms} ms.")
        elif result.ok:  # reached, but no usable verdict: not a success
            messages.warning(request, f"Connection to {title} {result.summary} (answered in {result.latency_ms} ms).")
        else:
            messages.error(request, f"Connection to {title} failed: {result.error}")
        context = {"result": result, "title": title, "prompt_answers": connection_test.ANSWERS}
        status = 200
    template = "judging/_connection_result.html" if request.htmx else "judging/connection_test.html"
    response = render(request, template, context, status=status)
    if status == 429:
        response["Retry-After"] = str(context["throttled"])
    return response


@allow(Audience.RESEARCHER)
@require_POST
def judge_test(request: HtmxHttpRequest, judge_id: int) -> HttpResponse:
    """Test a saved model: anyone who may use it may check it answers."""
    judge = get_object_or_404(RegisteredModel.objects.usable_by(request.user), pk=judge_id)
    return _connection_response(request, judge, title=judge.name)


@allow(Audience.RESEARCHER)
@sensitive_post_parameters("api_key")
@require_POST
def judge_form_test(request: HtmxHttpRequest, judge_id: int | None = None) -> HttpResponse:
    """Test the model form's current values, saved or not (a stored key only for its owner).

    Unsaved values are tested as the model the user would own: a server key variable is
    sent only if it is granted to them (checked by the form and again when the key is read).
    """
    judge = _editable_judge(request, judge_id) if judge_id else None
    form = ConnectionTestForm(request.POST, instance=judge or _new_model(request))
    if not form.is_valid():
        template = "judging/_connection_result.html" if request.htmx else "judging/connection_test.html"
        return render(request, template, {"form_errors": form, "title": "these settings"}, status=422)
    return _connection_response(request, form.model_to_test(), title=judge.name if judge else "the new model")
