"""REST API for reports: read the latest JSON, start a run, watch it (staff only, the DRF default)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.models import ReportRun
from analysis.profiles import PROFILES
from analysis.services import start_report_run
from annotations.models import Study
from cobbler_site.foundation.api_input import ClosedInput
from cobbler_site.foundation.api_schema import FIELD_ERRORS, NOT_FOUND, DetailError


class ReportRunOutput(serializers.ModelSerializer):
    study: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = ReportRun
        fields = (
            "id",
            "study",
            "profile",
            "status",
            "progress",
            "stage",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        )


# The report body is large and versioned by its own JSON Schema (analysis/schema/
# cobbler-report-1.schema.json, checked by the tests); the OpenAPI schema names the version only.
REPORT_SCHEMA = {
    "type": "object",
    "description": "A cobbler-report/1 document: see analysis/schema/cobbler-report-1.schema.json.",
    "required": ["schema", "study", "profile", "generated_at", "bias", "agreement", "length_control", "paper"],
    "properties": {
        "schema": {"type": "string", "enum": ["cobbler-report/1"]},
        "study": {"type": "string"},
        "profile": {"type": "string", "enum": list(PROFILES)},
        "generated_at": {"type": "string"},
        "bias": {"type": "array", "items": {"type": "object"}},
        "agreement": {"type": "array", "items": {"type": "object"}},
        "length_control": {"type": "object"},
        "paper": {"type": "object"},
    },
    "additionalProperties": True,
}


class StudyReportApi(APIView):
    """GET the latest finished report (cobbler-report/1) for ?profile=; POST to compute a new one."""

    class QuerySerializer(serializers.Serializer):
        profile = serializers.ChoiceField(choices=list(PROFILES), default="default")

    class InputSerializer(ClosedInput):
        profile = serializers.ChoiceField(choices=list(PROFILES), default="default")

    @extend_schema(
        operation_id="studies_report_retrieve",
        parameters=[QuerySerializer],
        responses={
            200: OpenApiResponse(REPORT_SCHEMA, description="The latest finished report."),
            400: FIELD_ERRORS,
            404: OpenApiResponse(DetailError, description="No such study, or no finished report for this profile."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        study = get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)
        # A plain dict: DRF reads a QueryDict's "?profile=" as not sent (the default profile),
        # where the schema's enum has no "" (refused here, 400).
        params = self.QuerySerializer(data=request.query_params.dict())
        params.is_valid(raise_exception=True)
        run = ReportRun.objects.latest_done(study=study, profile=params.validated_data["profile"])
        if run is None:
            return Response({"detail": "No finished report for this profile; POST to start one."}, status=404)
        return Response(run.result)

    @extend_schema(
        operation_id="studies_report_create",
        request=InputSerializer,
        responses={
            202: OpenApiResponse(ReportRunOutput, description="The run started (or the one already running)."),
            400: FIELD_ERRORS,
            404: NOT_FOUND,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = start_report_run(study=study, profile=data.validated_data["profile"], user=request.user)
        return Response(ReportRunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class ReportRunApi(APIView):
    """GET one run's status and progress."""

    @extend_schema(responses={200: ReportRunOutput, 404: NOT_FOUND})
    def get(self, request: Request, run_id: int) -> Response:
        run = get_object_or_404(
            ReportRun.objects.manageable_by(request.user).select_related("study").defer("result", "figures"), pk=run_id
        )
        return Response(ReportRunOutput(run).data)
