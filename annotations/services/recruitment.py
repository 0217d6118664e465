"""Copy-ready recruitment links for a study: Prolific's study URL and completion codes, MTurk's ExternalQuestion."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode
from xml.sax.saxutils import escape

from django.http import HttpRequest
from django.urls import reverse

from annotations.models import Study
from annotations.services.capacity import no_work_code

PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete"
# Prolific replaces these in the study URL with each participant's ids.
PROLIFIC_PLACEHOLDERS = (
    ("PROLIFIC_PID", "{{%PROLIFIC_PID%}}"),
    ("STUDY_ID", "{{%STUDY_ID%}}"),
    ("SESSION_ID", "{{%SESSION_ID%}}"),
)
EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
)
MTURK_FRAME_HEIGHT = 800


@dataclass(frozen=True)
class CompletionCode:
    outcome: str
    code: str
    url: str


@dataclass(frozen=True)
class RecruitmentLinks:
    start_url: str
    prolific_url: str
    completion: list[CompletionCode]
    mturk_external_question: str
    code_url_example: str


def prolific_completion_url(code: str) -> str:
    return f"{PROLIFIC_COMPLETE}?{urlencode({'cc': code})}"


def recruitment_links(*, study: Study, request: HttpRequest) -> RecruitmentLinks:
    """The absolute links a researcher pastes into Prolific or MTurk, built from this request's host.

    Behind a TLS proxy set SECURE_PROXY_SSL_HEADER, or the links say http://.
    """
    start = request.build_absolute_uri(reverse("annotations:start", args=[study.slug]))
    # Not urlencoded: Prolific looks for the braces and percent signs literally.
    prolific = start + "?" + "&".join(f"{name}={placeholder}" for name, placeholder in PROLIFIC_PLACEHOLDERS)
    outcomes = (
        ("completed", study.code_completed),
        ("failed qualification", study.code_failed_qualification),
        ("timed out", study.code_timed_out),
        # Given to a worker turned away for lack of work (annotations.services.entry_gate).
        ("no work available", no_work_code(study)),
    )
    xml = (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">\n'
        f"  <ExternalURL>{escape(start)}</ExternalURL>\n"
        f"  <FrameHeight>{MTURK_FRAME_HEIGHT}</FrameHeight>\n"
        "</ExternalQuestion>"
    )
    return RecruitmentLinks(
        start_url=start,
        prolific_url=prolific,
        completion=[CompletionCode(outcome, code, prolific_completion_url(code)) for outcome, code in outcomes],
        mturk_external_question=xml,
        code_url_example=start + "?code=PARTICIPANT-CODE",
    )
