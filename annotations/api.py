"""REST API for machine clients (staff only): study setup, batch generation, progress, review, export.

Thin views: InputSerializer -> the same service the researcher pages call -> OutputSerializer.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotations import serializers as s
from annotations import services
from annotations.models import Assignment, DecisionChangeNeedsReason, ReviewDecision, Study
from annotations.services.rounds import describe_round, round_of
from cobbler_site.foundation.api_input import StrictPageNumberPagination
from cobbler_site.foundation.api_schema import NOT_FOUND, DetailError


def _study(request: Request, slug: str) -> Study:
    return get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)


def _invalid(error: ValidationError) -> ApiResponse:
    return ApiResponse({"detail": error.messages[0]}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def _unprocessable(description: str) -> OpenApiResponse:
    return OpenApiResponse(DetailError, description=description)


class StudyListCreateApi(APIView):
    # For the schema: the lists below are paginated like the DRF default (?page=).
    pagination_class = StrictPageNumberPagination

    @extend_schema(operation_id="studies_list", responses=s.StudySerializer(many=True))
    def get(self, request: Request) -> ApiResponse:
        paginator = StrictPageNumberPagination()
        page = paginator.paginate_queryset(
            Study.objects.manageable_by(request.user).order_by("slug"), request, view=self
        )
        return paginator.get_paginated_response(s.StudySerializer(page, many=True).data)

    @extend_schema(
        operation_id="studies_create",
        request=s.StudyCreateInput,
        responses={
            201: s.StudySerializer,
            404: OpenApiResponse(DetailError, description="from_study is not a study you manage."),
            422: _unprocessable("The slug is taken, or a number is out of range."),
        },
    )
    def post(self, request: Request) -> ApiResponse:
        data = s.StudyCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        kwargs = dict(data.validated_data)
        source_slug = kwargs.pop("from_study", "")
        source = _study(request, source_slug) if source_slug else None
        try:
            study = services.create_study(created_by=request.user, from_study=source, **kwargs)
        except ValidationError as e:
            return _invalid(e)
        return ApiResponse(s.StudySerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetailApi(APIView):
    @extend_schema(operation_id="studies_retrieve", responses={200: s.StudySerializer, 404: NOT_FOUND})
    def get(self, request: Request, slug: str) -> ApiResponse:
        return ApiResponse(s.StudySerializer(_study(request, slug)).data)


class StudyGenerateBatchesApi(APIView):
    @extend_schema(
        request=s.GenerateInput,
        responses={
            201: s.GenerateOutput,
            404: NOT_FOUND,
            422: _unprocessable(
                "The design cannot be made: the condition already has a generated design "
                "(add one with new_round), content is missing, or cobbler_design_dir is refused."
            ),
        },
    )
    def post(self, request: Request, slug: str) -> ApiResponse:
        study = _study(request, slug)
        data = s.GenerateInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        try:
            batches = services.generate_design(
                study=study,
                condition=d["condition"],
                seed=d.get("seed"),
                pairs_per_batch=d.get("pairs_per_batch") or 15,
                cobbler_design_dir=d.get("cobbler_design_dir") or "",
                new_round=d.get("new_round", False),
            )
        except ValidationError as e:
            return _invalid(e)
        body = {
            "condition": d["condition"],
            "batches": len(batches),
            "tasks": sum(b.tasks.count() for b in batches),
            "round": round_of(batches[0].label) if batches else 0,
            "message": describe_round(study=study, batches=batches),
        }
        return ApiResponse(body, status=status.HTTP_201_CREATED)


class StudyProgressApi(APIView):
    @extend_schema(responses={200: s.StudyProgressOutput, 404: NOT_FOUND})
    def get(self, request: Request, slug: str) -> ApiResponse:
        progress = services.batch_progress(study=_study(request, slug))
        return ApiResponse({"batches": s.BatchProgressSerializer(progress, many=True).data})


class StudySubmissionsApi(APIView):
    """Raw submissions (pseudonymous ids only): paginated JSON, or the whole CSV with ?export=csv."""

    pagination_class = StrictPageNumberPagination

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "export",
                str,
                enum=["csv"],
                required=False,
                description="csv: the whole export as one CSV file (no pagination).",
            )
        ],
        responses={
            (200, "application/json"): s.SubmissionRowSerializer(many=True),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="With ?export=csv: every row, as CSV."),
            400: OpenApiResponse(DetailError, description="An export format other than csv."),
            404: NOT_FOUND,
        },
    )
    def get(self, request: Request, slug: str) -> ApiResponse | HttpResponse:
        study = _study(request, slug)
        paginator = StrictPageNumberPagination()
        export = request.query_params.get("export")
        if export is not None and export != "csv":  # not ignored: the caller expects another format
            return ApiResponse({"detail": "export must be csv."}, status=status.HTTP_400_BAD_REQUEST)
        if export == "csv":
            paginator.check_page_param(request)  # ignored with the CSV, but refused when malformed
            return HttpResponse(services.submissions_csv(study=study), content_type="text/csv; charset=utf-8")
        rows = list(services.submission_rows(study=study))
        # DRF pages any list; the stubs accept only a QuerySet.
        page: list[dict] | None = paginator.paginate_queryset(rows, request, view=self)  # type: ignore[arg-type]
        return paginator.get_paginated_response(page)


class StudyAssignmentsApi(APIView):
    pagination_class = StrictPageNumberPagination

    @extend_schema(responses={200: s.AssignmentSerializer(many=True), 404: NOT_FOUND})
    def get(self, request: Request, slug: str) -> ApiResponse:
        qs = Assignment.objects.filter(batch__study=_study(request, slug)).select_related("participant").order_by("pk")
        paginator = StrictPageNumberPagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(s.AssignmentSerializer(page, many=True).data)


class AssignmentReviewApi(APIView):
    @extend_schema(
        request=s.ReviewInput,
        responses={
            200: s.AssignmentSerializer,
            404: NOT_FOUND,
            409: OpenApiResponse(
                DetailError, description="Already decided otherwise: changing it needs change_reason; nothing changed."
            ),
            422: _unprocessable("Only submitted work can be reviewed."),
        },
    )
    def post(self, request: Request, pk: int) -> ApiResponse:
        assignment = get_object_or_404(
            Assignment.objects.select_related("participant", "batch__study"),
            pk=pk,
            batch__study__in=Study.objects.manageable_by(request.user),
        )
        data = s.ReviewInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.review_assignment(assignment=assignment, reviewer=request.user, **data.validated_data)
        except DecisionChangeNeedsReason as e:
            return ApiResponse({"detail": e.messages[0]}, status=status.HTTP_409_CONFLICT)
        except ValidationError as e:
            return _invalid(e)
        return ApiResponse(s.AssignmentSerializer(assignment).data)


class StudyReviewHistoryApi(APIView):
    """Every review decision on the study's work: who, when, from, to, why (oldest first)."""

    pagination_class = StrictPageNumberPagination

    @extend_schema(responses={200: s.ReviewDecisionSerializer(many=True), 404: NOT_FOUND})
    def get(self, request: Request, slug: str) -> ApiResponse:
        qs = (
            ReviewDecision.objects.filter(assignment__batch__study=_study(request, slug))
            .select_related("assignment__participant")
            .order_by("decided_at", "assignment_id", "sequence")
        )
        paginator = StrictPageNumberPagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(s.ReviewDecisionSerializer(page, many=True).data)
