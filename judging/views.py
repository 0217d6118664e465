"""Researcher pages: launch and watch judge jobs, manage judges (staff only)."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from cobbler_site.access import Audience, allow
from judging import services
from judging.forms import JobForm, JudgeForm
from judging.models import Judge, JudgeJob


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def jobs(request: HttpRequest) -> HttpResponse:
    form = JobForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = services.start_judge_job(
                study=data["study"], judge=data["judge"], condition_names=data["conditions"],
                pair_set=data["pair_set"], budget_usd=data["budget_usd"],
                bandwagon_percent=data["bandwagon_percent"], parser=data["parser"],
                prompt_version=data["prompt_version"], seed=data["seed"], created_by=request.user,
            )
        except services.JobError as exc:
            form.add_error(None, str(exc))
        else:
            url = reverse("judging:job", args=[job.pk])
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "judging/jobs.html" + ("#launch-form" if request.htmx else "")
    recent = JudgeJob.objects.manageable_by(request.user).select_related("study", "judge").order_by("-pk")[:50]
    return render(request, template, {"form": form, "jobs": recent}, status=422 if form.errors else 200)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET"])
def job(request: HttpRequest, job_id: int) -> HttpResponse:
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
def job_action(request: HttpRequest, job_id: int, action: str) -> HttpResponse:
    job = get_object_or_404(JudgeJob.objects.manageable_by(request.user), pk=job_id)
    actions = {"pause": services.pause_job, "resume": services.resume_job, "cancel": services.cancel_job}
    if action not in actions:
        raise Http404("unknown action")
    actions[action](job=job)  # idempotent: a double click changes nothing more
    url = reverse("judging:job", args=[job.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET"])
def judges(request: HttpRequest) -> HttpResponse:
    judges = Judge.objects.usable_by(request.user).select_related("owner").order_by("name")
    editable = set(Judge.objects.editable_by(request.user).values_list("pk", flat=True))
    return render(request, "judging/judges.html", {"judges": judges, "editable": editable})


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def judge_edit(request: HttpRequest, judge_id: int | None = None) -> HttpResponse:
    judge = None
    if judge_id:
        # A private judge someone else owns does not exist for this user; a visible one
        # that is not theirs (public, shared) may be used but not edited.
        judge = get_object_or_404(Judge.objects.usable_by(request.user), pk=judge_id)
        if not Judge.objects.editable_by(request.user).filter(pk=judge.pk).exists():
            raise PermissionDenied("only the judge's owner (or a superuser) can edit it")
    form = JudgeForm(request.POST or None, instance=judge, user=request.user)
    if request.method == "POST" and form.is_valid():
        saved = form.save(commit=False)
        if saved.owner_id is None and judge is None:
            saved.owner = request.user  # a new judge is private to its creator until shared
        if form.cleaned_data["clear_api_key"]:
            saved.set_api_key("")
        elif form.cleaned_data["api_key"]:
            saved.set_api_key(form.cleaned_data["api_key"])
        saved.save()  # a new base_url drops the old key (Judge.save)
        form.save_m2m()
        return redirect("judging:judges")
    status = 422 if form.errors else 200
    return render(request, "judging/judge_form.html", {"form": form, "judge": judge}, status=status)
