"""REST API for judge jobs (machine clients; staff tokens only, per REST_FRAMEWORK defaults)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Study
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
    serializer_class = JudgeSerializer
    queryset = Judge.objects.order_by("name")


class JudgeJobViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = JudgeJobSerializer
    queryset = JudgeJob.objects.select_related("study", "judge").order_by("-pk")

    @action(detail=True, methods=["get"])
    def judgments(self, request: Request, pk: str | None = None) -> Response:
        job = self.get_object()
        page = self.paginate_queryset(job.judgments.order_by("pk"))
        return self.get_paginated_response(JudgmentSerializer(page, many=True).data)


class JudgeJobStartApi(APIView):
    @extend_schema(request=JobStartInputSerializer, responses=JudgeJobSerializer)
    def post(self, request: Request) -> Response:
        data = JobStartInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        study = get_object_or_404(Study, slug=d["study"])
        judge = get_object_or_404(Judge, name=d["judge"])
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

    @extend_schema(request=JobResumeInputSerializer, responses=JudgeJobSerializer)
    def post(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(JudgeJob, pk=pk)
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
