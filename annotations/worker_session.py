"""The crowd worker's identity between requests: a signed cookie, no Django user account.

The cookie carries the participant's id and the hash of the platform's session id (MTurk
assignmentId, Prolific SESSION_ID), signed with SECRET_KEY and salted per study, so a
worker cannot become another participant by editing it. No worker id is in it. An MTurk
worker's own assignmentId and submit host ride along (they are in the worker's HIT URL
already, and the completion page must post them back to MTurk); the server stores
neither.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from annotations.models import Participant, Study

MAX_AGE_S = 14 * 24 * 3600
# The two hosts a HIT's turkSubmitTo can name; the cookie stores the key, never a URL.
MTURK_SUBMIT_HOSTS = {
    "production": "https://www.mturk.com",
    "sandbox": "https://workersandbox.mturk.com",
}


def _cookie_name(study: Study) -> str:
    return f"cw_{study.pk}"


def _salt(study: Study) -> str:
    return f"annotations.worker.{study.pk}"


@dataclass(frozen=True)
class MTurkReturn:
    """Where and as which assignment an MTurk HIT is posted back (``host`` is a MTURK_SUBMIT_HOSTS key)."""

    host: str
    assignment_id: str

    @property
    def submit_url(self) -> str:
        return f"{MTURK_SUBMIT_HOSTS[self.host]}/mturk/externalSubmit"


@dataclass(frozen=True)
class WorkerIdentity:
    participant_id: int
    session_hash: str
    mturk: MTurkReturn | None = None


def remember_worker(
    response: HttpResponse,
    *,
    study: Study,
    participant: Participant,
    session_hash: str,
    mturk: MTurkReturn | None = None,
) -> None:
    value = f"{participant.pk}:{session_hash}"
    if mturk is not None:
        value += f"|{mturk.host}|{mturk.assignment_id}"  # "|" is never in an id (crowd._ID_RE)
    response.set_signed_cookie(
        _cookie_name(study),
        value,
        salt=_salt(study),
        max_age=MAX_AGE_S,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,  # https-only wherever the session cookie is
    )


def read_worker(request: HttpRequest, *, study: Study) -> WorkerIdentity | None:
    raw = request.get_signed_cookie(_cookie_name(study), default=None, salt=_salt(study), max_age=MAX_AGE_S)
    if not raw:
        return None
    ids, _, mturk_part = raw.partition("|")
    participant_id, _, session_hash = ids.partition(":")
    host, _, assignment_id = mturk_part.partition("|")
    mturk = MTurkReturn(host, assignment_id) if host in MTURK_SUBMIT_HOSTS and assignment_id else None
    try:
        return WorkerIdentity(int(participant_id), session_hash, mturk)
    except ValueError:
        return None
