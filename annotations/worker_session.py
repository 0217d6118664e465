"""The crowd worker's identity between requests: a signed cookie, no Django user account.

The cookie carries the participant's id and the hash of the platform's session id (MTurk
assignmentId, Prolific SESSION_ID), signed with SECRET_KEY and salted per study, so a
worker cannot become another participant by editing it. No worker id is in it. An MTurk
worker's own assignmentId and submit host ride along (they are in the worker's HIT URL
already, and the completion page must post them back to MTurk); the server stores
neither.
"""

from __future__ import annotations

import re
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


def _cookie_name(study_id: int) -> str:
    return f"cw_{study_id}"


_COOKIE_NAME = re.compile(r"cw_([0-9]{1,18})")


def _salt(study_id: int) -> str:
    return f"annotations.worker.{study_id}"


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
        _cookie_name(study.pk),
        value,
        salt=_salt(study.pk),
        max_age=MAX_AGE_S,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,  # https-only wherever the session cookie is
    )


def signed_in_worker(request: HttpRequest, *, slug: str) -> tuple[WorkerIdentity, Participant] | None:
    """Who this browser entered the study ``slug`` as: the identity and the participant, its
    study loaded, in one query (every worker page asks); None without a valid cookie for it.

    The cookie is named and salted by the study's id, which the slug does not give, so every
    study cookie the browser holds is verified (an HMAC each, no query) and the one participant
    of this slug among them is read; its study must be the one that cookie was signed for.
    """
    signed: dict[int, tuple[int, WorkerIdentity]] = {}
    for name in request.COOKIES:
        match = _COOKIE_NAME.fullmatch(name)
        if match is not None and (identity := _read(request, int(match[1]))) is not None:
            signed[identity.participant_id] = (int(match[1]), identity)
    if not signed:
        return None
    participant = Participant.objects.select_related("study").filter(pk__in=signed, study__slug=slug).first()
    if participant is None or participant.study_id != signed[participant.pk][0]:
        return None
    return signed[participant.pk][1], participant


def _read(request: HttpRequest, study_id: int) -> WorkerIdentity | None:
    raw = request.get_signed_cookie(_cookie_name(study_id), default=None, salt=_salt(study_id), max_age=MAX_AGE_S)
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
