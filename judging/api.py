"""REST API for judge jobs (machine clients; staff tokens only, per REST_FRAMEWORK defaults)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Study
from cobbler_site.api_schema import FIELD_ERRORS, NOT_FOUND, DetailError
from judging import services
from judging.models import Judge, JudgeJob
from judging.serializers import (
    JobResumeInputSerializer,
    JobStartInputSerializer,
    JudgeJobSerializer,
    JudgeSerializer,
    JudgmentSerializer,
)


class JudgeViewSet(viewsets.ReadOnlyModelViewSet):
    """The judges this user may use (Judge.objects.usable_by); private ones of others are 404."""

    serializer_class = JudgeSerializer
    queryset = Judge.objects.order_by("name")

    def get_queryset(self):  # noqa: ANN201 - DRF's signature
        return Judge.objects.usable_by(self.request.user).select_related("owner").order_by("name")


class JudgeJobViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = JudgeJobSerializer
    queryset = JudgeJob.objects.select_related("study", "judge").order_by("-pk")

    def get_queryset(self):  # noqa: ANN201 - DRF's signature
        return JudgeJob.objects.manageable_by(self.request.user).select_related("study", "judge").order_by("-pk")

    @extend_schema(operation_id="judge_jobs_judgments_list", responses={200: JudgmentSerializer(many=True), 404: NOT_FOUND})
    @action(detail=True, methods=["get"])
    def judgments(self, request: Request, pk: str | None = None) -> Response:
        job = self.get_object()
        page = self.paginate_queryset(job.judgments.order_by("pk"))
        return self.get_paginated_response(JudgmentSerializer(page, many=True).data)


class JudgeJobStartApi(APIView):
    @extend_schema(
        request=JobStartInputSerializer,
        responses={
            201: JudgeJobSerializer,
            400: OpenApiResponse(FIELD_ERRORS.response, description=(
                "Invalid input: the errors per field, or {detail} when the job cannot start "
                "(no pairs in the pair set, a bad bandwagon percent).")),
            404: OpenApiResponse(DetailError, description="No such study you manage, or judge you may use."),
        },
    )
    def post(self, request: Request) -> Response:
        data = JobStartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        study = get_object_or_404(Study.objects.manageable_by(request.user), slug=d["study"])
        judge = get_object_or_404(Judge.objects.usable_by(request.user), name=d["judge"])
        try:
            job = services.start_judge_job(
                study=study, judge=judge, condition_names=d["conditions"], pair_set=d["pair_set"],
                budget_usd=d.get("budget_usd"), bandwagon_percent=d.get("bandwagon_percent"),
                parser=d["parser"], prompt_version=d["prompt_version"], seed=d["seed"],
                created_by=request.user,
            )
        except services.JobError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(JudgeJobSerializer(job).data, status=status.HTTP_201_CREATED)


class JudgeJobActionApi(APIView):
    """POST /api/judge-jobs/<id>/pause|resume|cancel/ - idempotent, returns the job."""

    action_name = ""

    @extend_schema(
        request=JobResumeInputSerializer,
        description="Pause, resume or cancel a job; only resume reads the body (an optional new budget).",
        responses={200: JudgeJobSerializer, 404: NOT_FOUND},
    )
    def post(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(JudgeJob.objects.manageable_by(request.user), pk=pk)
        if self.action_name == "resume":
            data = JobResumeInputSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            services.resume_job(job=job, budget_usd=data.validated_data.get("budget_usd"))
        elif self.action_name == "pause":
            services.pause_job(job=job)
        else:
            services.cancel_job(job=job)
        job.refresh_from_db()
        return Response(JudgeJobSerializer(job).data)
