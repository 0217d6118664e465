"""The worker's path through a study: entry, qualification, claiming a batch, answering."""

from __future__ import annotations

import hashlib
import hmac
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotations import surveys
from annotations.models import Assignment, Batch, Participant, QualificationItem, Study, Submission, Task
from annotations.models.qualification import ITEMS_SHOWN
from annotations.pseudonyms import pseudonymise

# Answering lives in its own module; re-exported because callers import it from here.
from annotations.services.answering import (  # noqa: F401
    answered_by_another_page,
    close_if_complete,
    shown_order,
    submit_task,
)
from annotations.services.capacity import free_expired_leases, offered_batches, with_live_places
from annotations.services.lease_caps import ClientNetwork, LeaseCapReached, check_lease_caps, lock_network
from annotations.vocabulary import CrowdChoice

_ID_RE = re.compile(r"^[A-Za-z0-9_.@:-]{1,128}$")
# The platforms' own id formats: a made-up id is refused at the door, before it costs a row.
PROLIFIC_ID_RE = re.compile(r"^[0-9a-fA-F]{24}$")  # Prolific: 24 hex characters
MTURK_WORKER_ID_RE = re.compile(r"^A[A-Z0-9]{12,20}$")  # MTurk: "A" and 12-20 capitals or digits
# MTurk shows a preview of the HIT with this placeholder before the worker accepts it.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


@dataclass(frozen=True)
class Entry:
    platform: str
    external_id: str
    session_id: str
    # MTurk only: the key (annotations.worker_session.MTURK_SUBMIT_HOSTS) of turkSubmitTo.
    mturk_host: str = ""


def is_mturk_preview(params: Mapping[str, str]) -> bool:
    """MTurk shows the HIT with this placeholder (and no workerId) before the worker accepts it."""
    return (params.get("assignmentId") or "").strip() == MTURK_PREVIEW


def mturk_host_key(raw: str) -> str:
    """The MTURK_SUBMIT_HOSTS key of a turkSubmitTo value; ValidationError for any other host.

    Only the two real MTurk hosts are accepted, so the completion form can never be
    pointed at another site (an open redirect carrying the worker's assignment).
    """
    from annotations.worker_session import MTURK_SUBMIT_HOSTS

    value = raw.strip().rstrip("/")
    for key, url in MTURK_SUBMIT_HOSTS.items():
        if value == url:
            return key
    raise ValidationError("The link parameter turkSubmitTo is not an MTurk address.")


def parse_entry(params: Mapping[str, str]) -> Entry:
    """Read the crowd platform's link parameters; ValidationError if none are usable.

    Prolific sends PROLIFIC_PID, STUDY_ID and SESSION_ID; MTurk workerId, assignmentId,
    hitId and turkSubmitTo; a researcher's own link ``code``.
    """

    def clean(name: str) -> str:
        value = (params.get(name) or "").strip()
        if value and not _ID_RE.match(value):
            raise ValidationError(f"The link parameter {name} is malformed.")
        return value

    if clean("PROLIFIC_PID"):
        clean("STUDY_ID")  # not stored (the study is in the URL), but a malformed one is refused
        if not PROLIFIC_ID_RE.match(clean("PROLIFIC_PID")):
            raise ValidationError("This is not a Prolific ID. Open the study from Prolific, which fills it in.")
        return Entry(Participant.Platform.PROLIFIC, clean("PROLIFIC_PID"), clean("SESSION_ID"))
    if clean("workerId"):
        if not MTURK_WORKER_ID_RE.match(clean("workerId")):
            raise ValidationError("This is not an MTurk worker ID. Open the study from the HIT on MTurk.")
        assignment_id = clean("assignmentId")
        if not assignment_id or assignment_id == MTURK_PREVIEW:
            raise ValidationError("Accept the HIT on MTurk first; this is only a preview.")
        host = mturk_host_key(params["turkSubmitTo"]) if (params.get("turkSubmitTo") or "").strip() else ""
        return Entry(Participant.Platform.MTURK, clean("workerId"), assignment_id, host)
    if clean("code"):
        return Entry(Participant.Platform.CODE, clean("code"), "")
    raise ValidationError("This link has no participant id. Open the study from your crowd platform.")


def _entry_code_signature(study: Study, code_id: str) -> str:
    key = f"{settings.SECRET_KEY}:annotations.entry-code:{study.pk}".encode()
    return hmac.new(key, f"{study.slug}:{code_id}".encode(), hashlib.sha256).hexdigest()[:16]


def sign_entry_code(*, study: Study, code_id: str) -> str:
    """A ``?code=`` value this study accepts when ``entry_codes_signed`` is on: ``<id>.<hmac>``."""
    if not _ID_RE.match(code_id) or "." in code_id or len(code_id) > 111:
        raise ValidationError("A code id is 1-111 letters, digits, _ @ : or -.")
    return f"{code_id}.{_entry_code_signature(study, code_id)}"


def entry_code_allowed(*, study: Study, code: str) -> bool:
    """Whether a ``?code=`` may create (or resume) a participant of this study.

    Default (no listed codes, not signed): any well-formed code. Otherwise the code must be
    in ``study.entry_codes`` or carry this study's signature (``sign_entry_code``).
    """
    listed = [str(c) for c in (study.entry_codes or [])]
    if not listed and not study.entry_codes_signed:
        return True
    if any(hmac.compare_digest(code, c) for c in listed):
        return True
    if study.entry_codes_signed:
        code_id, _, signature = code.rpartition(".")
        return bool(code_id) and hmac.compare_digest(signature, _entry_code_signature(study, code_id))
    return False


def enter_study(*, study: Study, entry: Entry) -> tuple[Participant, str]:
    """Find or create the participant behind an entry; returns it and the session hash.

    Only keyed hashes are stored (annotations.pseudonyms). Idempotent: a returning
    worker (reload, second link click) gets the same participant. A ``?code=`` the study
    does not accept (``entry_code_allowed``) is a ValidationError; nothing is created.
    """
    if entry.platform == Participant.Platform.CODE and not entry_code_allowed(study=study, code=entry.external_id):
        raise ValidationError("This participant code is not valid for this study.")
    external_hash = pseudonymise(entry.platform, entry.external_id)
    session_hash = pseudonymise(f"{entry.platform}-session", entry.session_id) if entry.session_id else ""
    try:
        participant, _ = Participant.objects.get_or_create(
            study=study,
            platform=entry.platform,
            external_hash=external_hash,
            defaults={"label": f"p-{external_hash[:10]}"},
        )
    except IntegrityError:  # two first requests at once: the other one created it
        participant = Participant.objects.get(study=study, platform=entry.platform, external_hash=external_hash)
    return participant, session_hash


def give_consent(*, participant: Participant) -> None:
    """Idempotent: the first consent time is kept."""
    Participant.objects.filter(pk=participant.pk, consented_at__isnull=True).update(consented_at=timezone.now())
    participant.refresh_from_db(fields=["consented_at"])


def grade_qualification(*, participant: Participant, choices: Mapping[int, str]) -> list[QualificationItem]:
    """Grade one attempt; returns the items answered wrongly (empty: qualified).

    Raises ValidationError if an item is unanswered (that is not an attempt) or if
    the participant has no attempts left.
    """
    study = participant.study
    items = qualification_draw(participant=participant)
    if participant.qualified:
        return []
    if participant.qualification_attempts >= study.qualification_attempts_allowed:
        raise ValidationError("No qualification attempts left.")
    if any(choices.get(item.pk) not in (CrowdChoice.A, CrowdChoice.B) for item in items):
        raise ValidationError("Answer every question.")
    wrong = [item for item in items if choices[item.pk] != item.gold]
    # F() so two tabs submitting at once count two attempts, not one.
    Participant.objects.filter(pk=participant.pk).update(
        qualification_attempts=F("qualification_attempts") + 1, qualified=not wrong
    )
    participant.refresh_from_db(fields=["qualification_attempts", "qualified"])
    return wrong


def qualification_draw(*, participant: Participant) -> list[QualificationItem]:
    """This attempt's items, in the order shown: ``ITEMS_SHOWN`` drawn from the study's pool.

    Seeded by the study, the participant and the attempt number: a reload shows the same
    items, a retry (and every other participant) a new draw, so the answers of one attempt
    (or one farmed identity) do not hand over the next. A study that reveals the answers
    after a failed attempt (``qualification_reveal_answers``) retries the same, explained items.
    """
    study = participant.study
    pool = sorted(QualificationItem.for_study(study), key=lambda item: item.position)
    attempt = 0 if study.qualification_reveal_answers else participant.qualification_attempts
    rng = random.Random(f"qualification-draw:{study.pk}:{participant.pk}:{attempt}")
    return rng.sample(pool, min(ITEMS_SHOWN, len(pool)))


def qualification_layout(*, participant: Participant) -> list[tuple[QualificationItem, bool]]:
    """This attempt's items (``qualification_draw``), each with whether its two answers are shown swapped.

    Seeded like the draw, so a reload shows the same layout and a retry a new one. The posted
    values stay the canonical slots (A is answer_a wherever it is shown); an explanation
    shown after a failed attempt names the slots as shown (``shown_explanation``).
    """
    rng = random.Random(f"qualification-swap:{participant.pk}:{participant.qualification_attempts}")
    return [(item, rng.random() < 0.5) for item in qualification_draw(participant=participant)]


def shown_explanation(item: QualificationItem, *, swapped: bool) -> str:
    """The item's explanation with "System A" and "System B" swapped when its answers are."""
    if not swapped:
        return item.explanation
    other = {CrowdChoice.A: CrowdChoice.B, CrowdChoice.B: CrowdChoice.A}
    return re.sub(r"System ([AB])", lambda m: "System " + other[CrowdChoice(m.group(1))], item.explanation)


def session_assignment(*, participant: Participant, session_hash: str) -> Assignment | None:
    """The assignment of this sitting (the latest one for the same platform session)."""
    return (
        participant.assignments.select_related("batch")
        .filter(external_session_hash=session_hash)
        .order_by("-started_at", "-pk")
        .first()
    )


def resume_open_assignment(*, participant: Participant, session_hash: str) -> Assignment | None:
    """The participant's open lease from another session, moved to this one; None if there is none.

    A worker identity holds at most ``CROWD_MAX_BATCHES_PER_WORKER`` batches whatever the
    session id, so a new Prolific SESSION_ID (or MTurk assignmentId) resumes the batch the
    worker already holds instead of leasing a second one. The lease moves to the new
    session so that its completion code is shown there.
    """
    now = timezone.now()
    assignment = (
        participant.assignments.select_related("batch")
        .filter(status=Assignment.Status.ACTIVE)
        .exclude(leased_until__lt=now)
        .order_by("-started_at", "-pk")
        .first()
    )
    if assignment is not None and assignment.external_session_hash != session_hash:
        Assignment.objects.filter(pk=assignment.pk).update(external_session_hash=session_hash)
        assignment.external_session_hash = session_hash
    return assignment


def max_batches_per_worker() -> int:
    return max(1, int(getattr(settings, "CROWD_MAX_BATCHES_PER_WORKER", 1)))


def held_batches(participant: Participant) -> int:
    """Batches this worker identity holds or has done: open leases and submitted work (any review).

    Expired and returned leases give the place back to the batch and the allowance back
    to the worker, as they do in ``AssignmentQuerySet.live``.
    """
    return Assignment.objects.filter(participant=participant, status__in=_HELD).count()


_HELD = (Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED)


def claim_order(*, study: Study, participant: Participant, round_: int = 0) -> list[int]:
    """Open batch ids in the order this worker should try them: balanced, seeded randomisation.

    Every condition's fill is its live places (open leases and non-rejected submitted work)
    over its capacity (the sum of its offered batches' overlaps, annotations.services.capacity).
    The least-filled condition comes first; equally filled conditions are ordered at random;
    within a condition the least-filled batches come first, equally filled ones at random.
    The random draws are seeded by the study, the worker's keyed hash and the claim round,
    so an arrival is reproducible and nothing depends on condition names or arrival time.
    """
    # Only offered batches: imported human work is data, never handed out (services.capacity).
    rows = list(
        with_live_places(offered_batches(study), study).order_by("pk").values_list("pk", "condition", "live", "target")
    )
    mine = set(Assignment.objects.filter(participant=participant).values_list("batch_id", flat=True))
    filled: dict[str, list[int]] = {}
    for _pk, condition, n_live, target in rows:
        totals = filled.setdefault(condition, [0, 0])
        totals[0] += n_live
        totals[1] += target
    rng = random.Random(f"crowd-claim:{study.slug}:{participant.platform}:{participant.external_hash}:{round_}")
    condition_draw = {c: rng.random() for c in sorted(filled)}
    order = []
    for pk, condition, n_live, target in rows:
        if n_live >= target or pk in mine or target <= 0:
            continue
        n_done, capacity = filled[condition]
        order.append((n_done / capacity, condition_draw[condition], n_live / target, rng.random(), pk))
    order.sort()
    return [pk for *_key, pk in order]


def claim_batch(
    *, participant: Participant, session_hash: str, rounds: int = 5, network: ClientNetwork | None = None
) -> Assignment | None:
    """Lease a batch that still has fewer than K live workers; None when none is left.

    Which batch: ``claim_order`` (seeded, balanced across conditions). At most
    ``CROWD_MAX_BATCHES_PER_WORKER`` (default 1) batches per worker identity and study,
    whatever the session id; None once the worker has them.

    Safe under concurrency: the batch row is locked (SELECT ... FOR UPDATE SKIP LOCKED)
    and its live places recounted under the lock before the assignment is inserted, so
    K is never exceeded on PostgreSQL; the participant row is locked too, so two tabs of
    one worker cannot take two batches past the maximum. SQLite runs writers one at a
    time (IMMEDIATE transactions), which gives the same guarantee there. SKIP LOCKED lets
    concurrent workers spread over batches instead of queueing on one.

    ``network`` (the claiming client's hashed address, annotations.services.lease_caps):
    LeaseCapReached when its address or network already holds the study's cap of live leases.
    """
    study = participant.study
    free_expired_leases(study)
    for round_ in range(rounds):
        if held_batches(participant) >= max_batches_per_worker():
            return None
        candidates = claim_order(study=study, participant=participant, round_=round_)[:20]
        if not candidates:
            return None
        for batch_id in candidates:
            assignment = _claim_one(
                participant=participant, batch_id=batch_id, session_hash=session_hash, network=network
            )
            if assignment is not None:
                return assignment
    return None


def _claim_one(
    *, participant: Participant, batch_id: int, session_hash: str, network: ClientNetwork | None
) -> Assignment | None:
    study = participant.study
    with transaction.atomic():
        # The worker first (one claim per worker at a time), then the network, then the batch.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        if held_batches(participant) >= max_batches_per_worker():
            return None
        if network is not None:
            lock_network(network)
            check_lease_caps(study=study, network=network)
        batch = Batch.objects.select_for_update(skip_locked=True).filter(pk=batch_id).first()
        if batch is None:
            return None  # another worker is claiming it right now; try the next one
        if Assignment.objects.live().filter(batch=batch).count() >= (batch.overlap or study.overlap):
            return None
        try:
            with transaction.atomic():
                return Assignment.objects.create(
                    batch=batch,
                    participant=participant,
                    external_session_hash=session_hash,
                    client_ip_hash=network.address_hash if network else "",
                    client_net_hash=network.network_hash if network else "",
                    leased_until=timezone.now() + timedelta(minutes=study.lease_minutes),
                )
        except IntegrityError:
            return None  # this participant already holds (or held) it


def first_open_task(assignment: Assignment) -> Task | None:
    answered = Submission.objects.filter(assignment=assignment).values("task_id")
    return assignment.batch.tasks.exclude(pk__in=answered).order_by("position").first()


def sample_task(study: Study) -> Task | None:
    """The task an MTurk preview shows read-only: the first study item of the study's first batch.

    Never an attention check or gold item: a preview must not show what a check looks like.
    """
    return (
        Task.objects.filter(batch__study=study, role=Task.Role.ITEM)
        .select_related("instruction", "pair")
        .order_by("batch_id", "position")
        .first()
    )


@dataclass(frozen=True)
class Step:
    """Where a worker stands: consent, qualify, failed_qualification, pre_survey, task, post_survey,
    no_work, lease_cap (the client's address or network holds its cap of leases), completed, timed_out."""

    name: str
    assignment: Assignment | None = None
    task: Task | None = None


def next_step(
    *, participant: Participant, session_hash: str, claim: bool = True, network: ClientNetwork | None = None
) -> Step:
    """Decide the worker's next screen, leasing a batch when they are ready for one.

    Resuming is this function: a reload lands on the first unanswered task of the
    sitting's assignment, and a new session of the same worker identity resumes its open
    lease (``resume_open_assignment``) rather than leasing another batch. A study's
    pre-study survey comes before the first task, its post-study survey before "completed"
    (annotations.surveys.awaiting), so no completion code is shown before it is answered.
    A new lease is refused (``lease_cap``) when ``network`` holds its cap (claim_batch).
    """
    if participant.consented_at is None:
        return Step("consent")
    if not participant.qualified:
        if participant.qualification_attempts >= participant.study.qualification_attempts_allowed:
            return Step("failed_qualification")
        return Step("qualify")
    assignment = session_assignment(participant=participant, session_hash=session_hash)
    if assignment is None:  # a new session of a worker who holds an open lease resumes it
        assignment = resume_open_assignment(participant=participant, session_hash=session_hash)
    if assignment is None:
        try:
            assignment = (
                claim_batch(participant=participant, session_hash=session_hash, network=network) if claim else None
            )
        except LeaseCapReached:
            return Step("lease_cap")
        if assignment is None:
            return Step("no_work")
    assignment.expire_if_stale()
    if assignment.status in (Assignment.Status.EXPIRED, Assignment.Status.RETURNED):
        return Step("timed_out", assignment)
    if assignment.status == Assignment.Status.ACTIVE:
        if surveys.awaiting(participant.study, assignment) == "pre":
            return Step("pre_survey", assignment)
        task = first_open_task(assignment)
        if task is not None:
            return Step("task", assignment, task)
        close_if_complete(assignment=assignment)
    if assignment.status != Assignment.Status.SUBMITTED:
        return Step("timed_out", assignment)
    if surveys.awaiting(participant.study, assignment) == "post":
        return Step("post_survey", assignment)
    return Step("completed", assignment)
