"""Plain-language claims, one per statistic, read off the report's computed sections.

Nothing is recomputed: every number comes from a bias row (its sign test and the table's
correction), an agreement row (mean RBO or percent agreement with its interval) or a
length-control row (its verdict and headline share). A statistic makes a claim only when
the report's own test says so after its correction; below the minimum n it says so instead
(docs/methods.md, "Verdict summary").
"""

from __future__ import annotations

from dataclasses import dataclass

from annotations.vocabulary import Condition

ALPHA = 0.05
# Below these sizes the report's intervals are too wide to read (docs/methods.md).
MIN_PAIRS = 30  # bias rows: pairs answered twice
MIN_INSTRUCTIONS = 10  # RBO: instructions both rankings cover (the bootstrap's clusters)
MIN_VOTES = 30  # percent agreement: human votes; length control: keys with a human majority

CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


@dataclass(frozen=True)
class BiasWords:
    name: str  # "no evidence of <name> bias"
    toward: str  # "biased toward <toward>" when hits > mirror
    against: str  # ... and when mirror > hits
    hits: str  # what ``hits`` / n is, in words
    mirror: str


BIAS_WORDS = {
    "position_preference": BiasWords(
        "position", "the first position", "the last position", "first slot twice", "last slot twice"
    ),
    Condition.BANDWAGON: BiasWords(
        "bandwagon",
        "bandwagon cues",
        "going against bandwagon cues",
        "followed the cue both times",
        "against it both times",
    ),
    Condition.ATTENTIONAL: BiasWords(
        "distractor (attentional)",
        "the system a distractor sentence mentions",
        "the system a distractor sentence does not mention",
        "mentioned system both times",
        "the other both times",
    ),
    "egocentric": BiasWords(
        "self-preference (egocentric)", "its own answers", "other models' answers", "own answer", "the other answer"
    ),
    "egocentric_comp": BiasWords(
        "self-preference in the compassion run",
        "its own named answers",
        "other models' named answers",
        "own answer",
        "the other answer",
    ),
    "salience_longer": BiasWords(
        "length (salience)", "longer answers", "shorter answers", "longer chosen", "shorter chosen"
    ),
}
TESTED = list(BIAS_WORDS)


def p_text(p: float | None, correction: str) -> str:
    if p is None:
        return "no test"
    name = CORRECTIONS.get(correction, correction)
    if p < 0.001:
        return f"{name} p < 0.001"
    return f"{name} p = {p:.3f}" if p < 0.1 else f"{name} p = {p:.2f}"


def bias_claim(row: dict, *, correction: str) -> dict | None:
    """The claim of one tested bias row (None for a descriptive row: it has no test of its own)."""
    words = BIAS_WORDS.get(row["bias"])
    if words is None:
        return None
    n, value, p = row["n"], row["value"], row.get("p_adjusted")
    hits, mirror = row.get("hits"), row.get("mirror")
    claim = {
        "kind": "bias",
        "subject": row["subject"],
        "bias": row["bias"],
        "rate": value,
        "baseline": row.get("null_value"),
        "random": row.get("random"),
        "hits_rate": hits / n if n and hits is not None else None,
        "mirror_rate": mirror / n if n and mirror is not None else None,
        "ci95": row.get("ci95"),
        "p": row.get("p_value"),
        "p_adjusted": p,
        "correction": correction,
        "n": n,
        "min_n": MIN_PAIRS,
    }
    if n < MIN_PAIRS or value is None:
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for {words.name} bias (n = {n}; need about {MIN_PAIRS})",
        }
    numbers = _bias_numbers(claim, words)
    if p is not None and p < ALPHA:
        toward = (hits or 0) >= (mirror or 0)
        claim["direction"] = "toward" if toward else "against"
        target = words.toward if toward else words.against
        return claim | {
            "verdict": "biased",
            "target": target,
            "text": f"biased toward {target} ({numbers}, {p_text(p, correction)})",
        }
    return claim | {
        "verdict": "no_evidence",
        "text": f"no evidence of {words.name} bias ({numbers}, {p_text(p, correction)})",
    }


def _bias_numbers(claim: dict, words: BiasWords) -> str:
    value = claim["rate"]
    shown = f"{value:+.2f}" if claim["bias"] == "position_preference" else f"{value:.2f}"
    if claim["hits_rate"] is None or claim["mirror_rate"] is None:
        return f"{shown}, n = {claim['n']}"
    return (
        f"{shown}: {words.hits} {claim['hits_rate']:.2f} vs {words.mirror} {claim['mirror_rate']:.2f}, n = {claim['n']}"
    )


def _baseline_fields(baseline: dict | None) -> dict:
    """The human-human (or rater-rater) row a judge's agreement is read against."""
    if not baseline:
        return {"baseline": None, "baseline_ci95": None, "baseline_n": None}
    return {"baseline": baseline["value"], "baseline_ci95": baseline.get("ci95"), "baseline_n": baseline["n"]}


def rbo_claim(row: dict, baseline: dict | None) -> dict:
    """A judge's mean RBO with the humans' consensus ranking, beside the human-human mean."""
    claim = {
        "kind": "agreement",
        "metric": row["metric"],
        "subject": row["b"],
        "with": row["a"],
        "source": row.get("source"),
        "value": row["value"],
        "ci95": row.get("ci95"),
        "n": row["n"],
        "unit": "instructions",
        "min_n": MIN_INSTRUCTIONS,
        **_baseline_fields(baseline),
    }
    if row["n"] < MIN_INSTRUCTIONS or row["value"] is None:
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for agreement with humans (RBO over n = {row['n']} "
            f"instructions; need about {MIN_INSTRUCTIONS})",
        }
    text = f"agrees with humans RBO {_estimate(row)} over {row['n']} instructions"
    chance = row.get("chance")
    if chance and chance.get("value") is not None:
        # A mean RBO is never 0 by chance (about 0.67 for five answers at p = 0.8): say how far above.
        claim |= {"chance": chance["value"], "chance_p": chance.get("p_above")}
        p_words = _permutation_p(chance.get("p_above"))
        if chance.get("p_above") is not None and chance["p_above"] >= ALPHA:
            text = (
                f"ranks answers no better than chance against humans (RBO {_estimate(row)} vs chance "
                f"{chance['value']:.2f}, {p_words}, over {row['n']} instructions)"
            )
        elif chance.get("p_above") is None:
            text += f", chance {chance['value']:.2f}"
        else:
            text += f", above chance {chance['value']:.2f} ({p_words})"
    if baseline is None:
        text += "; no human-human baseline (fewer than two raters' rankings count)"
    else:
        claim["comparison"] = _compare(row.get("ci95"), baseline.get("ci95"))
        text += f", human-human {_estimate(baseline)}"
        if claim["comparison"] in ("below", "above"):
            text += f" (intervals apart: {claim['comparison']} people's agreement with each other)"
    return claim | {"verdict": "measured", "text": text}


def _permutation_p(p: float | None) -> str:
    if p is None:
        return "no permutation test"
    return f"permutation p = {p:.3f}" if p >= 0.01 else "permutation p < 0.01"


def percent_claim(row: dict, baseline: dict | None) -> dict:
    """A judge's agreement with every human vote on the same screens, beside rater-rater agreement."""
    condition = row.get("condition", "")
    claim = {
        "kind": "agreement",
        "metric": "percent",
        "subject": row["b"],
        "with": row["a"],
        "condition": condition,
        "value": row["value"],
        "ci95": row.get("ci95"),
        "n": row["n"],
        "unit": "votes",
        "min_n": MIN_VOTES,
        **_baseline_fields(baseline),
    }
    if row["n"] < MIN_VOTES or row["value"] is None:
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for agreement with human votes on {condition} pairs "
            f"(n = {row['n']}; need about {MIN_VOTES})",
        }
    text = f"agrees with human votes {_estimate(row)} on {condition} pairs (n = {row['n']})"
    if baseline is not None and baseline["value"] is not None:
        text += f", rater-rater {_estimate(baseline)}"
    return claim | {"verdict": "measured", "text": text}


def length_claim(row: dict) -> dict:
    """The length-control verdict of one judge and condition (its share of above-chance agreement)."""
    share = row.get("headline_share")
    claim = {
        "kind": "length",
        "subject": row["judge"],
        "condition": row.get("condition"),
        "agreement": row.get("agreement"),
        "ci95": row.get("ci95"),
        "n": row["n"],
        "matched_agreement": row.get("matched_agreement"),
        "matched_n": row.get("matched_n"),
        "null_agreement": row.get("null_agreement"),
        "share": share,
        "length_verdict": row.get("verdict"),
        "min_n": MIN_VOTES,
    }
    if row["n"] < MIN_VOTES:
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for length control (n = {row['n']} pairs with a human "
            f"majority; need about {MIN_VOTES})",
        }
    where = f" on {row['condition']} pairs" if row.get("condition") else ""
    numbers = f"agreement {row['agreement']:.2f}, n = {row['n']}; verdict: {row.get('verdict')}"
    ci = row.get("ci95") or [None, None]
    if share is None or (ci[0] is not None and ci[0] <= 0.5):
        # (null - 0.5) / (judge - 0.5) has no value, or no meaning, when the judge's own agreement
        # is not above chance: a share of a near-zero excess reads as -642% or 900%.
        interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if None not in ci else ""
        text = (
            f"agrees with the human majority no better than chance{where}, so there is no agreement "
            f"for length to explain (agreement {row['agreement']:.2f}{interval}, n = {row['n']})"
        )
        claim["share_meaningful"] = False
    elif share < 0:
        text = (
            f"length explains none of its agreement with the human majority{where}: length alone "
            f"agrees below chance ({numbers})"
        )
    elif share > 1:
        text = f"length alone agrees with the human majority more than it does{where} ({share:.0%}; {numbers})"
    else:
        text = f"length explains {share:.0%} of its agreement with the human majority{where} ({numbers})"
    return claim | {"verdict": "measured", "text": text}


def missing_claim(subject: str, biases: list[str], *, imported: bool) -> dict:
    """The tested biases some subject was measured on and this one was not (one claim for all)."""
    names = [BIAS_WORDS[b].name for b in biases]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    why = (
        "its results are imported win counts, with no single calls to measure biases on"
        if imported
        else "no counted judge calls on those conditions: launch a judge job with them"
    )
    return {
        "kind": "bias",
        "subject": subject,
        "statistic": "not measured",
        "biases": biases,
        "verdict": "no_data",
        "n": 0,
        "text": f"{listed} {'bias' if len(names) == 1 else 'biases'} not measured ({why})",
    }


def _estimate(row: dict) -> str:
    ci = row.get("ci95")
    if not ci or None in ci:
        return f"{row['value']:.2f}"
    return f"{row['value']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def _compare(judge: list | None, people: list | None) -> str | None:
    """Whether two 95% intervals are apart (a conservative reading, not a test)."""
    if not judge or not people or None in judge or None in people:
        return None
    if judge[1] < people[0]:
        return "below"
    if judge[0] > people[1]:
        return "above"
    return "overlapping"
