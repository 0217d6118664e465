"""The crowd worker's identity between requests: a signed cookie, no Django user account.

The cookie carries the participant's id and the hash of the platform's session id (MTurk
assignmentId, Prolific SESSION_ID), signed with SECRET_KEY and salted per study, so a
worker cannot become another participant by editing it. Nothing in it is a platform id.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse

from annotations.models import Participant, Study

MAX_AGE_S = 14 * 24 * 3600


def _cookie_name(study: Study) -> str:
    return f"cw_{study.pk}"


def _salt(study: Study) -> str:
    return f"annotations.worker.{study.pk}"


@dataclass(frozen=True)
class WorkerIdentity:
    participant_id: int
    session_hash: str


def remember_worker(response: HttpResponse, *, study: Study, participant: Participant, session_hash: str) -> None:
    response.set_signed_cookie(
        _cookie_name(study),
        f"{participant.pk}:{session_hash}",
        salt=_salt(study),
        max_age=MAX_AGE_S,
        httponly=True,
        samesite="Lax",
    )


def read_worker(request: HttpRequest, *, study: Study) -> WorkerIdentity | None:
    raw = request.get_signed_cookie(_cookie_name(study), default=None, salt=_salt(study), max_age=MAX_AGE_S)
    if not raw:
        return None
    participant_id, _, session_hash = raw.partition(":")
    try:
        return WorkerIdentity(int(participant_id), session_hash)
    except ValueError:
        return None
