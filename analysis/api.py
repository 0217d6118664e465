"""REST API for reports: read the latest JSON, start a run, watch it (staff only, the DRF default)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.models import ReportRun
from analysis.profiles import PROFILES
from analysis.services import start_report_run
from annotations.models import Study


class ReportRunOutput(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = ReportRun
        fields = ("id", "study", "profile", "status", "progress", "stage", "error", "created_at", "started_at", "finished_at")


class StudyReportApi(APIView):
    """GET the latest finished report (cobbler-report/1) for ?profile=; POST to compute a new one."""

    class InputSerializer(serializers.Serializer):
        profile = serializers.ChoiceField(choices=list(PROFILES), default="default")

    def get(self, request: Request, slug: str) -> Response:
        study = get_object_or_404(Study, slug=slug)
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        run = ReportRun.objects.latest_done(study=study, profile=params.validated_data["profile"])
        if run is None:
            return Response({"detail": "No finished report for this profile; POST to start one."}, status=404)
        return Response(run.result)

    def post(self, request: Request, slug: str) -> Response:
        study = get_object_or_404(Study, slug=slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = start_report_run(study=study, profile=data.validated_data["profile"], user=request.user)
        return Response(ReportRunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class ReportRunApi(APIView):
    """GET one run's status and progress."""

    def get(self, request: Request, run_id: int) -> Response:
        run = get_object_or_404(ReportRun.objects.select_related("study").defer("result", "figures"), pk=run_id)
        return Response(ReportRunOutput(run).data)
