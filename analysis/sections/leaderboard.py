"""The report's ``leaderboard``: one row per judge, and the length-only null judge and the human
ceiling beside them, on the same pairs (docs/methods.md "Judge leaderboard").

Built last, from the finished sections (agreement with the human majority from ``length_control``,
the alt-test, gold accuracy, position consistency, the verdict cards), plus what only the raw
frames and the jobs know: the share of choices for the first slot and for the longer answer, and
cost and time per 1,000 calls. Every number keeps its interval and n; a missing measure is None,
never a made-up value.
"""

from __future__ import annotations

from django.db.models import Avg, Count, F, Sum

from analysis import loaders
from analysis.length.core import orient
from analysis.loaders.length import load_votes, response_lengths
from analysis.metrics.leaderboard import human_ceiling, human_choice_rates, judge_choice_rates, null_vs_majority
from analysis.profiles import Profile
from annotations.biases import REGISTRY, SWAP_REGISTRY
from annotations.models import Study
from annotations.vocabulary import Condition
from judging.models import JudgeJob
from judging.vocabulary import Parser

NULL_JUDGE = "length-only null judge"
HUMAN_CEILING = "human ceiling"
# Agreement with the majority is read on the first of these a judge has.
CONDITIONS = (Condition.ORDER, Condition.PLAIN)
SHORT = {
    **{row: b.board for row, b in SWAP_REGISTRY.items()},
    **{c: b.short for c, b in REGISTRY.items()},
    Condition.COMPASSION: "names",
}
METHOD = (
    "agreement: the judge's verdict (both presentations merged; inconsistent = tie) against the decisive human "
    "majority of the key, in the first of the order and plain conditions it has (length_control); the null "
    "judge: the longer answer against the same majorities (keys of unequal length); human ceiling: each decisive vote against the majority of the other votes on its key (leave one out); "
    "alt-test at the profile's epsilon; gold accuracy overall; position consistency from the bias table; "
    "P(first slot) and P(longer): shares of decisive choices in the plain and order runs (unequal lengths "
    "for P(longer)); intervals: Wilson at the effective n from a cluster bootstrap over instructions; "
    "cost and latency from the counted calls, seconds per 1,000 from the jobs' wall-clock time (run judges only)"
)


def build(*, report: dict, study: Study, profile: Profile) -> list[dict]:
    judges = sorted({c["subject"] for c in report.get("summary") or [] if c.get("kind") == "judge"})
    if not judges:
        return []
    responses = response_lengths(study=study, profile=profile)
    votes = load_votes(study=study, responses=responses, profile=profile)
    judgments = loaders.judgments_frame(study)
    costs = _costs(study, report)
    rows = [_judge_row(judge, report, judgments) | costs.get(judge, {}) for judge in judges]
    agreements = [r for r in rows if r["agreement_condition"]]
    condition = agreements[0]["agreement_condition"] if agreements else CONDITIONS[0]
    oriented = orient(votes, join=profile.pair_join) if not votes.empty else votes
    rows.append(_null_row(oriented, condition))
    if not votes.empty:
        rows.append(_human_row(votes, oriented, condition, report))
    return [r | {"method": METHOD} for r in rows]


def _blank(subject: str, kind: str) -> dict:
    return {
        "subject": subject,
        "kind": kind,
        "agreement": None,
        "agreement_ci95": None,
        "agreement_n": 0,
        "agreement_condition": None,
        "alt_epsilon": None,
        "alt_winning_rate": None,
        "alt_advantage": None,
        "alt_passed": None,
        "gold_accuracy": None,
        "gold_accuracy_ci95": None,
        "gold_n": 0,
        "position_consistency": None,
        "p_first_slot": None,
        "p_first_slot_ci95": None,
        "p_longer": None,
        "p_longer_ci95": None,
        "biased_toward": [],
        "cost_per_1000": None,
        "latency_ms": None,
        "seconds_per_1000": None,
        "calls": 0,
    }


def _judge_row(judge: str, report: dict, judgments) -> dict:
    row = _blank(judge, "judge")
    lc = (report.get("length_control") or {}).get("judge_vs_human") or []
    for condition in CONDITIONS:
        found = [
            r for r in lc if r["judge"] == judge and r["condition"] == condition and r.get("agreement") is not None
        ]
        if found:
            row |= {
                "agreement": found[0]["agreement"],
                "agreement_ci95": found[0]["ci95"],
                "agreement_n": found[0]["n"],
                "agreement_condition": condition,
            }
            break
    alt = [r for r in report.get("alt_test") or [] if r["subject"] == judge and r.get("profile_epsilon")]
    if alt and alt[0].get("testable", True):
        row |= {
            "alt_epsilon": alt[0]["epsilon"],
            "alt_winning_rate": alt[0]["winning_rate"],
            "alt_advantage": alt[0]["advantage_prob"],
            "alt_passed": alt[0]["passed"],
        }
    gold = [r for r in report.get("gold_accuracy") or [] if r["subject"] == judge and r.get("category") is None]
    if gold:
        row |= {"gold_accuracy": gold[0]["value"], "gold_accuracy_ci95": gold[0]["ci95"], "gold_n": gold[0]["n"]}
    consistency = [r for r in report.get("bias") or [] if r["subject"] == judge and r["bias"] == "position_consistency"]
    if consistency:
        row["position_consistency"] = consistency[0]["value"]
    first, longer = judge_choice_rates(judgments, judge)
    row |= _rates(first, longer)
    row["biased_toward"] = _verdicts(report, judge)
    return row


def _rates(first: dict, longer: dict) -> dict:
    return {
        "p_first_slot": first["agreement"],
        "p_first_slot_ci95": first["ci95"],
        "p_longer": longer["agreement"],
        "p_longer_ci95": longer["ci95"],
    }


def _verdicts(report: dict, subject: str) -> list[str]:
    """The biases its card claims, in short form ("position", "length", ...)."""
    cards = [c for c in report.get("summary") or [] if c["subject"] == subject]
    claims = [claim for card in cards for claim in card.get("claims") or []]
    found = [SHORT.get(c.get("bias", ""), c.get("bias", "")) for c in claims if c.get("verdict") == "biased"]
    return sorted(set(found))


def _costs(study: Study, report: dict) -> dict[str, dict]:
    """judge name -> its calls, cost and latency over the counted calls, and wall-clock time per
    1,000 calls over its counted run jobs; one grouped query each, for every judge at once."""
    totals = {
        row["judge"]: row
        for row in loaders.counted_judgments(study)
        .values(judge=F("job__judge__name"))
        .annotate(calls=Count("id"), cost=Sum("cost_usd"), latency=Avg("latency_ms"))
    }
    timed: dict[str, list[float]] = {}
    counted_jobs = {r["job"] for r in report.get("judge_jobs") or []}
    # Imported jobs have no wall-clock time of their own.
    for job in JudgeJob.objects.filter(pk__in=counted_jobs).exclude(parser=Parser.IMPORTED).select_related("judge"):
        if job.started_at and job.finished_at and job.done:
            seconds_done = timed.setdefault(job.judge.name, [0.0, 0.0])
            seconds_done[0] += (job.finished_at - job.started_at).total_seconds()
            seconds_done[1] += job.done
    out = {}
    for judge in {*totals, *timed}:
        t = totals.get(judge) or {"calls": 0, "cost": None, "latency": None}
        calls = int(t["calls"] or 0)
        seconds, done = timed.get(judge, (0.0, 0.0))
        out[judge] = {
            "calls": calls,
            "cost_per_1000": float(t["cost"]) / calls * 1000 if calls and t["cost"] is not None else None,
            "latency_ms": float(t["latency"]) if t["latency"] is not None else None,
            "seconds_per_1000": seconds / done * 1000 if done else None,
        }
    return out


def _null_row(oriented, condition: str) -> dict:
    row = _blank(NULL_JUDGE, "null")
    scored = null_vs_majority(oriented[oriented["condition"] == condition]) if not oriented.empty else None
    if scored and scored["n"]:
        row |= {
            "agreement": scored["agreement"],
            "agreement_ci95": scored["ci95"],
            "agreement_n": scored["n"],
            "agreement_condition": condition,
        }
    return row | {"p_longer": 1.0, "p_longer_ci95": None}  # it always chooses the longer answer


def _human_row(votes, oriented, condition: str, report: dict) -> dict:
    row = _blank(HUMAN_CEILING, "humans")
    ceiling = human_ceiling(oriented[oriented["condition"] == condition])
    row |= {
        "agreement": ceiling["agreement"],
        "agreement_ci95": ceiling["ci95"],
        "agreement_n": ceiling["n"],
        "agreement_condition": condition if ceiling["n"] else None,
    }
    gold = [r for r in report.get("gold_accuracy") or [] if r["subject"] == "humans" and r.get("category") is None]
    if gold:
        row |= {"gold_accuracy": gold[0]["value"], "gold_accuracy_ci95": gold[0]["ci95"], "gold_n": gold[0]["n"]}
    consistency = [
        r for r in report.get("bias") or [] if r["subject"] == "humans" and r["bias"] == "position_consistency"
    ]
    if consistency:
        row["position_consistency"] = consistency[0]["value"]
    return row | _rates(*human_choice_rates(votes))
