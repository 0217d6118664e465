"""Which work a report counted, what waits, and why a section is empty (the report's honest states).

``counted_work`` is a few aggregate queries under the same rule every section uses
(``analysis.loaders.counted_work``); ``empty_reasons`` turns it and the report into one
sentence per empty table: why, and what to do. ``link`` names a page ("study": the study
hub, "jobs": the judging page); the report page turns it into a link, the offline HTML
export leaves it as text.
"""

from __future__ import annotations

from django.db.models import Count, Q

from analysis import loaders
from analysis.profiles import Profile
from annotations.biases import CUE_CONDITIONS
from annotations.models import Assignment, Study, Submission
from judging.models import JudgeJob

_ITEM_TASKS = getattr(loaders, "ITEM_TASKS", Q())


def counted_work(*, study: Study, profile: Profile, judge_jobs: list[dict]) -> dict:
    """Counts of human work (assignments and answers) under the profile's rule, and judge jobs."""
    submitted = Q(status=Assignment.Status.SUBMITTED)
    pending = submitted & Q(review=Assignment.Review.PENDING)
    counted = loaders.counted_work(profile, prefix="")
    work = Assignment.objects.filter(batch__study=study).aggregate(
        submitted=Count("id", filter=submitted),
        approved=Count("id", filter=submitted & Q(review=Assignment.Review.APPROVED)),
        pending=Count("id", filter=pending),
        rejected=Count("id", filter=submitted & Q(review=Assignment.Review.REJECTED)),
        in_progress=Count("id", filter=Q(status=Assignment.Status.ACTIVE)),
        counted=Count("id", filter=counted),
    )
    work["waiting_for_review"] = work["pending"]
    answers: dict[str, dict[str, int]] = {}
    for kind in ("pairwise", "ranking"):
        # Study items only: attention checks and gold items are never data (loaders.ITEM_TASKS).
        base = Submission.objects.filter(_ITEM_TASKS, assignment__batch__study=study, task__kind=kind)
        answers[kind] = base.aggregate(
            submitted=Count("id", filter=Q(assignment__status=Assignment.Status.SUBMITTED)),
            counted=Count("id", filter=loaders.counted_work(profile)),
            waiting_for_review=Count(
                "id",
                filter=Q(assignment__status=Assignment.Status.SUBMITTED, assignment__review=Assignment.Review.PENDING),
            ),
        )
    jobs = list(JudgeJob.objects.filter(study=study).order_by("pk").values_list("pk", "judge__name", "status"))
    statuses: dict[str, int] = {}
    for _pk, _name, status in jobs:
        statuses[status] = statuses.get(status, 0) + 1
    used = {r["job"] for r in judge_jobs}
    return {
        "rule": profile.human_work,
        # Whether work with a quality flag counts (profile setting flagged_work; "keep" by default).
        "flagged_work": getattr(profile, "flagged_work", "keep"),
        "assignments": work,
        "answers": answers,
        "judge_jobs": {
            "counted": len(used),
            "by_status": statuses,
            # Jobs whose calls do not count (not completed, or replaced by a later run).
            "not_counted": [
                {"job": pk, "judge": name, "status": status} for pk, name, status in jobs if pk not in used
            ],
        },
    }


def describe_work(counted: dict) -> str:
    """ "Counts approved work only: 12 of 16 submitted assignments (...); 4 wait for review."."""
    a = counted.get("assignments") or {}
    rule = {"approved": "approved work only", "approved+pending": "approved and not-yet-reviewed work"}.get(
        str(counted.get("rule")), str(counted.get("rule"))
    )
    answers = counted.get("answers") or {}
    n_answers = sum(v.get("counted", 0) for v in answers.values())
    text = (
        f"Counts {rule}: {a.get('counted', 0)} of {a.get('submitted', 0)} submitted assignments "
        f"({n_answers} answers); {a.get('waiting_for_review', 0)} wait for review, "
        f"{a.get('rejected', 0)} rejected, {a.get('in_progress', 0)} still in progress"
    )
    if counted.get("flagged_work", "keep") == "exclude":
        text += "; work with a quality flag does not count"
    return text + "."


def empty_reasons(report: dict) -> dict[str, dict | None]:
    """``{table name: {"reason", "action", "link"}}`` for every table the report leaves empty."""
    counted = report.get("counted_work") or {}
    lc = report.get("length_control") or {}
    humans_pairwise = _human_reason(counted, "pairwise", "pairwise human answers")
    humans_ranking = _human_reason(counted, "ranking", "human rankings")
    judges = _judge_reason(report, counted)
    reasons: dict[str, dict | None] = {}  # None: empty, and no reason to give

    if not report.get("bias"):
        reasons["bias"] = _join(judges, humans_pairwise)
    if not report.get("gold_accuracy"):
        reasons["gold_accuracy"] = _NO_GOLD
    if "battery" in report and not report["battery"]:
        reasons["battery"] = _NO_CUES if report.get("bias") else _join(judges, humans_pairwise) or _NO_CUES
    if "cot" in report and not report["cot"]:
        reasons["cot"] = _NO_COT
    if not report.get("agreement"):
        reasons["agreement"] = _join(humans_ranking, humans_pairwise, judges)
    if not report.get("leaderboard"):
        reasons["leaderboard"] = judges or _NOTHING
    if not report.get("alt_test"):
        reasons["alt_test"] = judges or _NOTHING  # a judge always gets a row, testable or why not
    if not report.get("bt_rankings"):
        reasons["bt_rankings"] = reasons["bt_rankings_subjects"] = _join(humans_pairwise, judges) or _NOTHING
    no_votes = humans_pairwise
    no_join = judges or {
        "reason": "No judge verdict on the pairs the humans voted on",
        "action": "launch a judge job on exactly the pairs the humans saw",
        "link": "jobs",
    }
    for name in (
        "length_control_judge_vs_human",
        "length_control_null_vs_judge",
        "length_control_strata",
        "length_control_strata_differences",
    ):
        key = name.removeprefix("length_control_")
        if not lc.get(key):
            reasons[name] = no_votes or no_join
    if not lc.get("null_strata"):
        reasons["length_control_null_strata"] = no_votes or _NOTHING
    if not (lc.get("null_vs_human") or {}).get("n"):
        reasons["length_control_null_vs_human"] = no_votes or _NOTHING
    if not report.get("paper"):
        reasons["paper"] = (
            {
                "reason": f"The paper's numbers are computed only under profile cobbler-paper (this is "
                f"{report.get('profile')})",
                "action": "switch the profile above",
                "link": None,
            }
            if report.get("profile") != "cobbler-paper"
            else {
                "reason": "The paper's numbers need the authors' data",
                "action": "import it with manage.py import_cobbler",
                "link": None,
            }
        )
    return {k: v for k, v in reasons.items() if v}


_NOTHING = {"reason": "Nothing to show for this study", "action": None, "link": None}
_NO_CUES = {
    "reason": f"No cue-bias rows: no judge or crowd work on a cue condition ({', '.join(CUE_CONDITIONS)})",
    "action": "launch a judge job with those conditions (run_judges --conditions ...) or crowd batches on them",
    "link": "jobs",
}
_NO_COT = {
    "reason": "No judge has both a cot run (judged after thinking step by step) and an order run on the same pairs, "
    "and people have not answered both the order and the cot crowd conditions",
    "action": "launch a judge job with the conditions order,cot (run_judges --conditions order,cot), or generate "
    "crowd batches of order and cot with the same seed",
    "link": "jobs",
}
_NO_GOLD = {
    "reason": "No gold pair was judged: the study has no gold labels, or no judge's order or plain run and no "
    "un-cued human vote covers its gold pairs",
    "action": "mark the pairs whose correct answer is known with gold.jsonl (docs/study-format.md)",
    "link": "study",
}


def _human_reason(counted: dict, kind: str, what: str) -> dict | None:
    """Why no answers of ``kind`` count (None when some do)."""
    answers = (counted.get("answers") or {}).get(kind) or {}
    if answers.get("counted"):
        return None
    waiting, submitted = answers.get("waiting_for_review", 0), answers.get("submitted", 0)
    rule = counted.get("rule", "approved")
    if waiting and rule == "approved":
        return {
            "reason": f"No approved {what}: {waiting} submitted answers wait for review",
            "action": "review them on the study page",
            "link": "study",
        }
    if submitted:
        return {
            "reason": f"No {what} count: all {submitted} submitted answers were rejected",
            "action": "collect more work on the study page",
            "link": "study",
        }
    return {
        "reason": f"No {what} yet",
        "action": "generate crowd batches and share the link on the study page",
        "link": "study",
    }


def _judge_reason(report: dict, counted: dict) -> dict | None:
    """Why no judge calls count (None when some do)."""
    if report.get("judge_jobs"):
        return None
    statuses = (counted.get("judge_jobs") or {}).get("by_status") or {}
    if statuses:
        listed = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        return {
            "reason": f"No completed judge job ({listed}); only completed jobs count",
            "action": "watch or resume them on the judging page",
            "link": "jobs",
        }
    return {"reason": "No judge job on this study", "action": "launch one on the judging page", "link": "jobs"}


def _join(*reasons: dict | None) -> dict | None:
    found = [r for r in reasons if r]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    return {
        "reason": "; ".join(r["reason"] for r in found),
        "action": "; ".join(r["action"] for r in found if r["action"]),
        "link": next((r["link"] for r in found if r["link"]), None),
        "parts": found,
    }
