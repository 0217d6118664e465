"""REST API for judge jobs (machine clients; staff tokens only, per REST_FRAMEWORK defaults)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.models import Study
from cobbler_site.foundation.api_schema import FIELD_ERRORS, NOT_FOUND, DetailError
from judging import services
from judging.generate.services import start_generation_job
from judging.models import GenerationJob, JudgeJob, LLMJob, PromptTemplate, RegisteredModel
from judging.prompts.templates import TemplateError
from judging.serializers import (
    GenerationJobSerializer,
    GenerationSerializer,
    GenerationStartInputSerializer,
    JobResumeInputSerializer,
    JobStartInputSerializer,
    JudgeJobSerializer,
    JudgeSerializer,
    JudgmentSerializer,
    PromptTemplateInputSerializer,
    PromptTemplateSerializer,
)
from judging.template_services import save_template


class JudgeViewSet(viewsets.ReadOnlyModelViewSet):
    """The judges this user may use (RegisteredModel.objects.usable_by); private ones of others are 404."""

    serializer_class = JudgeSerializer
    queryset = RegisteredModel.objects.order_by("name")

    def get_queryset(self):  # DRF's signature
        return RegisteredModel.objects.usable_by(self.request.user).select_related("owner").order_by("name")


class PromptTemplateViewSet(viewsets.ReadOnlyModelViewSet):
    """Researchers' own prompt templates this user may use (PromptTemplate.objects.usable_by:
    their own and public ones; another researcher's is a 404); POST saves a version."""

    serializer_class = PromptTemplateSerializer
    queryset = PromptTemplate.objects.order_by("name", "-created_at")

    def get_queryset(self):  # DRF's signature
        return PromptTemplate.objects.usable_by(self.request.user).select_related("owner").order_by("name", "-pk")

    @extend_schema(
        request=PromptTemplateInputSerializer,
        responses={
            201: PromptTemplateSerializer,
            200: OpenApiResponse(PromptTemplateSerializer, description="This content is already saved: that version."),
            422: OpenApiResponse(
                FIELD_ERRORS.response,
                description="The template cannot be used: a placeholder unknown or missing, a size bound, a "
                'verdict spec that does not compile or could backtrack ({"template": ["..."]}).',
            ),
        },
    )
    def create(self, request: Request) -> Response:
        data = PromptTemplateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        try:
            template, created = save_template(
                owner=request.user,
                name=d["name"],
                system=d["system"],
                user=d["user"],
                reference_block=d["reference_block"],
                labels=d.get("labels") or ("Assistant A", "Assistant B"),
                verdict_format=d["verdict_format"],
                verdict_spec=d.get("verdict_spec"),
            )
        except TemplateError as exc:
            return Response({"template": [str(exc)]}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return Response(
            PromptTemplateSerializer(template).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class JudgeJobViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = JudgeJobSerializer
    queryset = JudgeJob.objects.select_related("study", "judge").order_by("-pk")

    def get_queryset(self):  # DRF's signature
        return JudgeJob.objects.manageable_by(self.request.user).select_related("study", "judge").order_by("-pk")

    @extend_schema(
        operation_id="judge_jobs_judgments_list", responses={200: JudgmentSerializer(many=True), 404: NOT_FOUND}
    )
    @action(detail=True, methods=["get"])
    def judgments(self, request: Request, pk: str | None = None) -> Response:
        job = self.get_object()
        page = self.paginate_queryset(job.judgments.order_by("pk"))
        return self.get_paginated_response(JudgmentSerializer(page, many=True).data)


# A well-formed request the job cannot start from (the study's state, a rule across fields,
# the model's settings) is a 422, as in the annotations API; 400 is for what the schema refuses.
def _cannot_start(exc: services.JobError) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def _model_refused(field: str, exc: services.ModelRefused) -> Response:
    # Naming the request field that chose the model, as the model form names its field.
    return Response({field: [str(exc)]}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def _unprocessable(field: str, reasons: str) -> OpenApiResponse:
    return OpenApiResponse(
        FIELD_ERRORS.response,
        description=(
            f"The job cannot start: {{detail}} when {reasons}; or "
            f'{{"{field}": ["..."]}} when the model may not send requests (its server key variable '
            "is not granted to its owner, or its generation settings are outside the allowlist)."
        ),
    )


class JudgeJobStartApi(APIView):
    @extend_schema(
        request=JobStartInputSerializer,
        responses={
            201: JudgeJobSerializer,
            404: OpenApiResponse(DetailError, description="No such study you manage, or judge you may use."),
            422: _unprocessable("judge", "the pair set has no pairs or the judge holds imported results"),
        },
    )
    def post(self, request: Request) -> Response:
        arguments = judge_job_arguments(request)
        try:
            job = services.start_judge_job(**arguments, created_by=request.user)
        except services.ModelRefused as exc:
            return _model_refused("judge", exc)
        except services.JobError as exc:
            return _cannot_start(exc)
        return Response(JudgeJobSerializer(job).data, status=status.HTTP_201_CREATED)


def _apply_action(action_name: str, job: LLMJob, request: Request) -> None:
    """Pause, resume (with an optional new budget from the body) or cancel any job."""
    if action_name == "resume":
        data = JobResumeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.resume_job(job=job, budget_usd=data.validated_data.get("budget_usd"))
    elif action_name == "pause":
        services.pause_job(job=job)
    else:
        services.cancel_job(job=job)
    job.refresh_from_db()


class JudgeJobActionApi(APIView):
    """POST /api/judge-jobs/<id>/pause|cancel/ - idempotent, returns the job."""

    action_name = ""

    # No body: pause and cancel take none (the schema says so; resume has its own view).
    @extend_schema(
        request=None, description="Pause or cancel a job.", responses={200: JudgeJobSerializer, 404: NOT_FOUND}
    )
    def post(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(JudgeJob.objects.manageable_by(request.user), pk=pk)
        _apply_action(self.action_name, job, request)
        return Response(JudgeJobSerializer(job).data)


class JudgeJobResumeApi(JudgeJobActionApi):
    """POST /api/judge-jobs/<id>/resume/ - idempotent, with an optional new budget; returns the job."""

    action_name = "resume"

    @extend_schema(
        request=JobResumeInputSerializer,
        description="Resume a job, optionally with a new budget.",
        responses={200: JudgeJobSerializer, 404: NOT_FOUND},
    )
    def post(self, request: Request, pk: int) -> Response:
        return super().post(request, pk)


# --- generation jobs ----------------------------------------------------------------------


class GenerationJobViewSet(viewsets.ReadOnlyModelViewSet):
    """Generation jobs this user manages (GenerationJob.objects.manageable_by); POST starts one."""

    serializer_class = GenerationJobSerializer
    queryset = GenerationJob.objects.select_related("study", "generator", "candidate").order_by("-pk")

    def get_queryset(self):  # DRF's signature
        return (
            GenerationJob.objects.manageable_by(self.request.user)
            .select_related("study", "generator", "candidate")
            .order_by("-pk")
        )

    @extend_schema(
        request=GenerationStartInputSerializer,
        responses={
            201: GenerationJobSerializer,
            404: OpenApiResponse(DetailError, description="No such study you manage, or model you may use."),
            422: _unprocessable(
                "model",
                "the model may not generate, the candidate key is taken, nothing is left to answer, "
                "or pair_policy and pair_sample_size do not go together",
            ),
        },
    )
    def create(self, request: Request) -> Response:
        arguments = generation_job_arguments(request)
        try:
            job = start_generation_job(**arguments, created_by=request.user)
        except services.ModelRefused as exc:
            return _model_refused("model", exc)
        except services.JobError as exc:
            return _cannot_start(exc)
        return Response(GenerationJobSerializer(job).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="generation_jobs_generations_list",
        responses={200: GenerationSerializer(many=True), 404: NOT_FOUND},
    )
    @action(detail=True, methods=["get"])
    def generations(self, request: Request, pk: str | None = None) -> Response:
        job = self.get_object()
        page = self.paginate_queryset(job.generations.select_related("instruction").order_by("pk"))
        return self.get_paginated_response(GenerationSerializer(page, many=True).data)


class GenerationJobActionApi(APIView):
    """POST /api/generation-jobs/<id>/pause|cancel/ - idempotent, returns the job."""

    action_name = ""

    @extend_schema(
        request=None,
        description="Pause or cancel a generation job.",
        responses={200: GenerationJobSerializer, 404: NOT_FOUND},
    )
    def post(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(GenerationJob.objects.manageable_by(request.user), pk=pk)
        _apply_action(self.action_name, job, request)
        return Response(GenerationJobSerializer(job).data)


class GenerationJobResumeApi(GenerationJobActionApi):
    """POST /api/generation-jobs/<id>/resume/ - idempotent, with an optional new budget; returns the job."""

    action_name = "resume"

    @extend_schema(
        request=JobResumeInputSerializer,
        description="Resume a generation job, optionally with a new budget.",
        responses={200: GenerationJobSerializer, 404: NOT_FOUND},
    )
    def post(self, request: Request, pk: int) -> Response:
        return super().post(request, pk)


def judge_job_arguments(request: Request) -> dict[str, Any]:
    """``start_judge_job``'s arguments from a start (or estimate) body: the study and judge the
    user may use (404 otherwise), the rest as validated."""
    data = JobStartInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    d = data.validated_data
    return {
        "study": get_object_or_404(Study.objects.manageable_by(request.user), slug=d["study"]),
        "judge": get_object_or_404(RegisteredModel.objects.usable_by(request.user), name=d["judge"]),
        "condition_names": d["conditions"],
        "pair_set": d["pair_set"],
        "budget_usd": d.get("budget_usd"),
        "bandwagon_percent": d.get("bandwagon_percent"),
        "parser": d["parser"],
        "prompt_version": d.get("prompt_version"),
        "seed": d["seed"],
        "mode": d["mode"],
    }


def generation_job_arguments(request: Request) -> dict[str, Any]:
    """``start_generation_job``'s arguments from a start (or estimate) body, as above."""
    data = GenerationStartInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    d = data.validated_data
    return {
        "study": get_object_or_404(Study.objects.manageable_by(request.user), slug=d["study"]),
        "generator": get_object_or_404(RegisteredModel.objects.usable_by(request.user), name=d["model"]),
        "candidate_key": d["candidate_key"],
        "params": {"max_tokens": d["max_tokens"]} if d.get("max_tokens") else {},
        "budget_usd": d.get("budget_usd"),
        "pair_policy": d["pair_policy"],
        "pair_sample_size": d.get("pair_sample_size"),
        "seed": d["seed"],
        "mode": d["mode"],
    }
