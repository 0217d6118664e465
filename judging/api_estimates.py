"""REST API: the estimate before launch of a judge or generation job (judging.estimates).

``POST /api/judge-jobs/estimate/`` and ``POST /api/generation-jobs/estimate/`` take the very
body their start endpoint takes and answer what that start would send and cost, creating
nothing. Same access as the rest of the API (the default ``ResearcherOnly`` permission of
cobbler_site.foundation.access), and the same 404 / 422 as a start, so a dry run fails where a start would.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cobbler_site.foundation.api_schema import DetailError
from judging import services
from judging.api import (
    _cannot_start,
    _model_refused,
    _unprocessable,
    generation_job_arguments,
    judge_job_arguments,
)
from judging.estimates import Estimate, estimate_generation_job, estimate_judge_job
from judging.serializers import GenerationStartInputSerializer, JobStartInputSerializer
from judging.vocabulary import OutputBasis


class EstimateSerializer(serializers.Serializer):
    """What a job would send and cost (docs/judging-runtime.md, "Estimate before launch")."""

    unit = serializers.CharField(help_text='What a row is: "judgments" or "answers".')
    rows = serializers.IntegerField(help_text="Rows the job would hold.")
    calls = serializers.IntegerField(help_text="Requests to send: rows minus cached rows minus repeats.")
    cached = serializers.IntegerField(help_text="Rows the response cache answers without a call.")
    repeats = serializers.IntegerField(help_text="Rows answered by an identical request of the same job.")
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    tokens_out_per_call = serializers.IntegerField()
    tokens_out_basis = serializers.ChoiceField(choices=OutputBasis.choices)
    tokens_out_note = serializers.CharField()
    cost_usd = serializers.DecimalField(max_digits=18, decimal_places=6)
    batch_price = serializers.BooleanField(help_text="Priced at the Batch API price.")
    proposed_budget_usd = serializers.DecimalField(
        max_digits=16, decimal_places=4, allow_null=True, help_text="About 1.2 x cost_usd; null for a free job."
    )
    rendered = serializers.IntegerField(help_text="Prompts rendered for this estimate.")
    exact = serializers.BooleanField(help_text="Every prompt rendered; false: a seeded sample, scaled up.")
    method = serializers.CharField()


def _answer(estimate: Estimate) -> Response:
    return Response(EstimateSerializer(estimate).data, status=status.HTTP_200_OK)


class JudgeJobEstimateApi(APIView):
    """POST /api/judge-jobs/estimate/ - the body of /api/judge-jobs/start/; creates nothing."""

    @extend_schema(
        request=JobStartInputSerializer,
        description="What starting this judge job would send and cost; nothing is created.",
        responses={
            200: EstimateSerializer,
            404: OpenApiResponse(DetailError, description="No such study you manage, or judge you may use."),
            422: _unprocessable("judge", "the pair set has no pairs or the judge holds imported results"),
        },
    )
    def post(self, request: Request) -> Response:
        try:
            estimate = estimate_judge_job(**judge_job_arguments(request))
        except services.ModelRefused as exc:
            return _model_refused("judge", exc)
        except services.JobError as exc:
            return _cannot_start(exc)
        return _answer(estimate)


class GenerationJobEstimateApi(APIView):
    """POST /api/generation-jobs/estimate/ - the body of POST /api/generation-jobs/; creates nothing."""

    @extend_schema(
        request=GenerationStartInputSerializer,
        description="What starting this generation job would send and cost; nothing is created.",
        responses={
            200: EstimateSerializer,
            404: OpenApiResponse(DetailError, description="No such study you manage, or model you may use."),
            422: _unprocessable(
                "model",
                "the model may not generate, the candidate key is taken, nothing is left to answer, "
                "or pair_policy and pair_sample_size do not go together",
            ),
        },
    )
    def post(self, request: Request) -> Response:
        try:
            estimate = estimate_generation_job(**generation_job_arguments(request))
        except services.ModelRefused as exc:
            return _model_refused("model", exc)
        except services.JobError as exc:
            return _cannot_start(exc)
        return _answer(estimate)
