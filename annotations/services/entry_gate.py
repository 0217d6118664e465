"""The door before consent: a worker the study cannot give a batch is told so before any work.

Without it a worker read the consent, passed the qualification and only then met "no task
is free", with nothing to show for it: on Prolific an unpaid participant. The gate runs on
the entry link, creates nothing, and sends the worker back with their platform's return
link or the study's "no work available" code (``annotations.services.capacity.no_work_code``).
A place can still be taken between the door and the claim; the claim's own refusal
(``next_step`` -> ``no_work``) shows the same page.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotations.models import Participant, Study
from annotations.pseudonyms import pseudonymise
from annotations.services.capacity import has_free_place, no_work_code
from annotations.services.crowd import Entry, entry_code_allowed
from annotations.services.recruitment import prolific_completion_url

# Where an MTurk worker returns an accepted HIT (the HIT queue of the worker site), by the
# key of the HIT's own submit host (annotations.worker_session.MTURK_SUBMIT_HOSTS).
MTURK_RETURN_PAGES = {
    "production": "https://worker.mturk.com/tasks",
    "sandbox": "https://workersandbox.mturk.com/tasks",
}


def admits(*, study: Study, entry: Entry) -> bool:
    """Whether this arrival may go on to consent.

    Yes when a place is free (stale leases freed first), and always for a worker who already
    has work or an outcome here (an open lease to resume, submitted work, a used-up
    qualification): they must reach their own batch or code whatever the capacity. A
    ``?code=`` the study refuses is let through to ``enter_study``, which answers it (400).
    """
    if entry.platform == Participant.Platform.CODE and not entry_code_allowed(study=study, code=entry.external_id):
        return True
    known = Participant.objects.filter(
        study=study, platform=entry.platform, external_hash=pseudonymise(entry.platform, entry.external_id)
    ).first()
    if known is not None and (
        known.assignments.exists() or known.qualification_attempts >= study.qualification_attempts_allowed
    ):
        return True
    return has_free_place(study)


@dataclass(frozen=True)
class NoWorkExit:
    """How a worker with no batch leaves, per platform: a code, and the platform's way back."""

    platform: str
    code: str
    prolific_url: str = ""  # the completion URL carrying the no-work code
    mturk_return_url: str = ""  # the worker site's HIT queue, where the HIT is returned


def no_work_exit(*, study: Study, platform: str, mturk_host: str = "") -> NoWorkExit:
    code = no_work_code(study)
    if platform == Participant.Platform.PROLIFIC:
        return NoWorkExit(platform, code, prolific_url=prolific_completion_url(code) if study.prolific_redirect else "")
    if platform == Participant.Platform.MTURK:
        return NoWorkExit(
            platform, code, mturk_return_url=MTURK_RETURN_PAGES.get(mturk_host, MTURK_RETURN_PAGES["production"])
        )
    return NoWorkExit(platform, code)
