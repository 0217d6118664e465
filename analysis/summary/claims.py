"""Plain-language claims, one per statistic, read off the report's computed sections.

Nothing is recomputed: every number comes from a bias row (its sign test and the table's
correction), an agreement row (mean RBO or percent agreement with its interval) or a
length-control row (its verdict and headline share). A statistic makes a claim only when
the report's own test says so after its correction; below the minimum n it says so instead
(docs/methods.md, "Verdict summary").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.metrics.stats import holm
from annotations.biases import CUE_CONDITIONS, REGISTRY, SWAP_CLAIMED, SWAP_CONFOUNDED, SWAP_REGISTRY

ALPHA = 0.05
# Below these sizes the report's intervals are too wide to read (docs/methods.md).
MIN_PAIRS = 30  # bias rows: pairs answered twice
MIN_INSTRUCTIONS = 10  # RBO: instructions both rankings cover (the bootstrap's clusters)
MIN_VOTES = 30  # percent agreement: human votes; length control: keys with a human majority
# Percent agreement: instructions behind the votes. They are the clusters of its interval (votes
# on one instruction meet one judge verdict), so 30 votes on one instruction are one observation.
MIN_AGREEMENT_INSTRUCTIONS = 10

CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


@dataclass(frozen=True)
class BiasWords:
    name: str  # "no evidence of <name> bias"
    toward: str  # "biased toward <toward>" when hits > mirror
    against: str  # ... and when mirror > hits
    hits: str  # what ``hits`` / n is, in words
    mirror: str


def _words(plugin) -> BiasWords:  # a CueBias or a SwapBias (annotations.biases)
    w = plugin.words
    return BiasWords(w.name, w.toward, w.against, w.hits, w.mirror)


# Every bias says it in its own plugin (annotations.biases): position first, then the cue biases,
# then the rows whose raw rate mixes in quality.
BIAS_WORDS = {
    **{row: _words(SWAP_REGISTRY[row]) for row in SWAP_CLAIMED},
    **{condition: _words(b) for condition, b in REGISTRY.items()},
    **{row: _words(SWAP_REGISTRY[row]) for row in SWAP_CONFOUNDED},
}
TESTED = list(BIAS_WORDS)
# Claims on their own test (analysis.metrics.bias_rows.CLAIMED); the other tested rows claim
# only against a reference (reference_claim) and are otherwise described (descriptive_claim).
CLAIMED = (*SWAP_CLAIMED, *CUE_CONDITIONS)
HUMANS = "humans"


def p_text(p: float | None, correction: str) -> str:
    if p is None:
        return "no test"
    name = CORRECTIONS.get(correction, correction)
    if p < 0.001:
        return f"{name} p < 0.001"
    return f"{name} p = {p:.3f}" if p < 0.1 else f"{name} p = {p:.2f}"


def bias_claim(row: dict, *, correction: str) -> dict | None:
    """The claim of one claimed bias row (position, bandwagon, attentional); None for any other row.

    ``biased`` needs both the cluster-level test (adjusted p < ALPHA) and the effect's own
    interval (excluding 0): when they disagree the claim says so and claims nothing.
    """
    words = BIAS_WORDS.get(row["bias"])
    if words is None or row["bias"] not in CLAIMED:
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
        "effect": row.get("effect"),
        "effect_ci95": row.get("effect_ci95"),
        "clusters": row.get("clusters"),
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
            "text": f"not enough data for {words.name} bias (n = {n} pairs; need about {MIN_PAIRS})",
        }
    numbers = _bias_numbers(claim, words)
    significant = p is not None and p < ALPHA
    if significant and excludes_zero(claim["effect_ci95"]):
        toward = (hits or 0) >= (mirror or 0)
        claim["direction"] = "toward" if toward else "against"
        target = words.toward if toward else words.against
        return claim | {
            "verdict": "biased",
            "target": target,
            "text": f"biased toward {target} ({numbers}, {p_text(p, correction)})",
        }
    if significant or excludes_zero(claim["effect_ci95"]):
        # Either disagreement claims nothing, and neither may read as "no evidence": an interval
        # away from 0 beside those words contradicts them (the interval is not corrected for the
        # family; the test is).
        why = "the test and the effect's interval disagree" if significant else _uncorrected(p)
        return claim | {
            "verdict": "no_evidence",
            "text": f"no clear evidence of {words.name} bias: {why} ({numbers}, {p_text(p, correction)})",
        }
    return claim | {
        "verdict": "no_evidence",
        "text": f"no evidence of {words.name} bias ({numbers}, {p_text(p, correction)})",
    }


def _uncorrected(p: float | None) -> str:
    """Why an interval away from 0 is no claim: the family's correction (or no test at all)."""
    if p is None:
        return "its interval excludes 0, but it has no test"
    return "its interval excludes 0, but the test does not hold once corrected for the family's other tests"


def settled_no_evidence(claim: dict) -> bool:
    """A no-evidence bias claim whose test and interval both say so (neither "no clear evidence" case)."""
    p = claim.get("p_adjusted")
    return (
        claim["verdict"] == "no_evidence"
        and not (p is not None and p < ALPHA)
        and not excludes_zero(claim.get("effect_ci95"))
    )


def excludes_zero(ci: list | None) -> bool:
    return bool(ci) and None not in ci and (ci[0] > 0 or ci[1] < 0)  # type: ignore[index, operator]


def _bias_numbers(claim: dict, words: BiasWords) -> str:
    effect, ci = claim.get("effect"), claim.get("effect_ci95")
    shown = f"{effect:+.2f}" if effect is not None else f"{claim['rate']:.2f}"
    if ci and None not in ci:
        shown += f" [{ci[0]:+.2f}, {ci[1]:+.2f}]"
    clusters = claim.get("clusters")
    unit = "clusters (raters x instructions)" if claim["subject"] == HUMANS else "instructions"
    where = f"n = {claim['n']} pairs" + (f" over {clusters} {unit}" if clusters else "")
    if claim["hits_rate"] is None or claim["mirror_rate"] is None:
        return f"{shown}, {where}"
    return f"{shown}: {words.hits} {claim['hits_rate']:.2f} vs {words.mirror} {claim['mirror_rate']:.2f}, {where}"


REFERENCE_WORDS = {"humans": "people", "gold": "the gold labels"}
# What a raw rate of a confounded row counts, for its descriptive line.
DESCRIBED = {row: SWAP_REGISTRY[row].described for row in SWAP_CONFOUNDED}


def reference_claim(row: dict, *, correction: str) -> dict:
    """Length or self-preference against a reference on the same pairs (a ``bias_reference`` row)."""
    words = BIAS_WORDS[row["bias"]]
    who = REFERENCE_WORDS.get(row["reference"], row["reference"])
    p, ci = row.get("p_adjusted"), row.get("ci95")
    claim = {
        "kind": "bias",
        "statistic": f"{row['bias']} vs {row['reference']}",
        "subject": row["subject"],
        "bias": row["bias"],
        "reference": row["reference"],
        "rate": row["judge_rate"],
        "reference_rate": row["reference_rate"],
        "effect": row["value"],
        "even_rate": row.get("even_rate"),
        "sharpness": row.get("sharpness"),
        "effect_ci95": ci,
        "ci95": ci,
        "clusters": row.get("clusters"),
        "p": row.get("p_value"),
        "p_adjusted": p,
        "correction": correction,
        "n": row["n"],
        "min_n": MIN_PAIRS,
    }
    if row["reference"] == "gold":
        # No model of people: the mean of its shares when the gold answer is and is not the target.
        at_equal = "whether or not they are the correct answer (gold labels)"
        shown = f"{row['value']:+.2f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci and None not in ci else "")
        numbers = (
            f"{row['share_when_gold_is_target']:.2f} when they are correct and "
            f"{row['share_when_gold_is_other']:.2f} when they are not, {shown} from an unbiased judge's "
            f"average of 1/2; n = {row['n']} gold pairs over {row.get('clusters')} instructions, {p_text(p, correction)}"
        )
    else:
        at_equal = f"at equal quality as {who} judge it"
        even, ci_even = row.get("even_rate"), [x + 0.5 for x in ci] if ci and None not in ci else None
        shown = f"{even:.2f}" + (f" [{ci_even[0]:.2f}, {ci_even[1]:.2f}]" if ci_even else "")
        numbers = (
            f"{shown} on pairs {who} split evenly; all pairs: {row['judge_rate']:.2f} vs {who} "
            f"{row['reference_rate']:.2f}; n = {row['n']} pairs over {row.get('clusters')} instructions, "
            f"{p_text(p, correction)}"
        )
    if p is not None and p < ALPHA and excludes_zero(ci) and row["value"] > 0:
        return claim | {
            "verdict": "biased",
            "direction": "toward",
            "target": words.toward,
            "text": f"biased toward {words.toward} {at_equal}: it chose them {numbers}",
        }
    if p is not None and p < ALPHA and excludes_zero(ci):
        # Fewer longer (own) choices at equal quality is not a bias this row is built to claim: a
        # judge that favours another system shows it here, and no condition targets shortness.
        return claim | {
            "verdict": "no_evidence",
            "text": f"no evidence of a {words.name} preference: {at_equal} it chose {words.toward} "
            f"less often than an unbiased judge would ({numbers})",
        }
    if excludes_zero(ci):
        return claim | {
            "verdict": "no_evidence",
            "text": f"no clear evidence of a {words.name} preference {at_equal}: {_uncorrected(p)} ({numbers})",
        }
    return claim | {
        "verdict": "no_evidence",
        "text": f"no evidence of a {words.name} preference {at_equal} ({numbers})",
    }


def descriptive_claim(row: dict) -> dict:
    """A confounded raw rate with no reference: the number, and why it is not a bias claim."""
    if row["n"] < MIN_PAIRS or row["value"] is None:
        name = BIAS_WORDS[row["bias"]].name
        return {
            "kind": "bias",
            "subject": row["subject"],
            "bias": row["bias"],
            "rate": row["value"],
            "n": row["n"],
            "min_n": MIN_PAIRS,
            "verdict": "not_enough_data",
            "text": f"not enough data for {name} bias (n = {row['n']} pairs; need about {MIN_PAIRS})",
        }
    ci = row.get("ci95")
    shown = f"{row['value']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci and None not in ci else "")
    target = SWAP_REGISTRY[row["bias"]].targets
    why = (
        "people's choices are the reference for quality, so this describes the answers as much as the raters"
        if row["subject"] == HUMANS
        else f"with no human votes on the same pairs this cannot separate a preference for "
        f"{target} from {target} being better"
    )
    return {
        "kind": "bias",
        "subject": row["subject"],
        "bias": row["bias"],
        "rate": row["value"],
        "ci95": ci,
        "n": row["n"],
        "min_n": MIN_PAIRS,
        "descriptive": True,
        "verdict": "measured",
        "text": f"{DESCRIBED[row['bias']]} in {shown} of {row['n']} pairs; {why}",
    }


def _baseline_fields(baseline: dict | None) -> dict:
    """The human-human (or rater-rater) row a judge's agreement is read against."""
    if not baseline:
        return {"baseline": None, "baseline_ci95": None, "baseline_n": None}
    return {"baseline": baseline["value"], "baseline_ci95": baseline.get("ci95"), "baseline_n": baseline["n"]}


def rbo_claim(row: dict, baseline: dict | None) -> dict:
    """A judge's mean RBO with the humans' consensus ranking, beside the human-human mean.

    ``above_chance`` only when the permutation test (p < 0.05) and the row's bootstrap interval
    (its lower end above the chance level) both say so, as for the percent claims.
    """
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
        "above_chance": False,
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
        if _below_chance(row, chance):
            claim["below_chance"] = True
            low, high = chance["range95"]
            text = (
                f"ranks answers below chance against humans (RBO {_estimate(row)} vs chance {chance['value']:.2f}, "
                f"below the chance range [{low:.2f}, {high:.2f}], over {row['n']} instructions)"
            )
        elif chance.get("p_above") is not None and chance["p_above"] >= ALPHA:
            text = (
                f"ranks answers no better than chance against humans (RBO {_estimate(row)} vs chance "
                f"{chance['value']:.2f}, {p_words}, over {row['n']} instructions)"
            )
        elif chance.get("p_above") is None:
            text += f", chance {chance['value']:.2f}"
        elif _interval_clears(row.get("ci95"), chance["value"]):
            claim["above_chance"] = True
            text += f", above chance {chance['value']:.2f} ({p_words})"
        else:
            # The permutation test alone would say "above"; a claim needs the row's own interval too.
            text = (
                f"ranks answers not clearly above chance against humans (RBO {_estimate(row)} vs chance "
                f"{chance['value']:.2f}, {p_words}, but the interval reaches chance, over {row['n']} instructions)"
            )
    if baseline is None:
        text += "; no human-human baseline (fewer than two raters' rankings count)"
    else:
        claim["comparison"] = _compare(row.get("ci95"), baseline.get("ci95"))
        text += f", human-human {_estimate(baseline)}"
        if claim["comparison"] in ("below", "above"):
            text += f" (intervals apart: {claim['comparison']} people's agreement with each other)"
    return claim | {"verdict": "measured", "text": text}


def _below_chance(row: dict, chance: dict) -> bool:
    """The judge's rankings run against people's: the mean RBO below the permutation null's 95%
    range (a 2.5% lower tail) and the row's whole interval below the chance level, as for the
    percent claims' "below chance" (the whole kappa interval below 0)."""
    ci, null_range = row.get("ci95"), chance.get("range95")
    if not ci or ci[1] is None or not null_range or row["value"] is None:
        return False
    return bool(row["value"] < null_range[0] and ci[1] < chance["value"])


def _interval_clears(ci: list | None, chance: float) -> bool:
    low = ci[0] if ci else None
    return low is not None and low > chance


def _permutation_p(p: float | None) -> str:
    if p is None:
        return "no permutation test"
    return f"permutation p = {p:.3f}" if p >= 0.01 else "permutation p < 0.01"


def agreement_testable(row: dict) -> bool:
    """Enough votes from enough instructions for a percent-agreement row to say anything."""
    clusters = row.get("n_instructions") or 0
    return row["n"] >= MIN_VOTES and clusters >= MIN_AGREEMENT_INSTRUCTIONS and row["value"] is not None


def adjust_agreement(rows: list[dict]) -> list[dict]:
    """One judge's testable percent rows, each with ``kappa_p_adjusted``: Holm across its conditions.

    A judge is compared with people once per condition (order, bandwagon, ...); each comparison
    alone says "above chance" wrongly in at most 2.5% of reports, but a coin judged on three
    conditions was said to agree in some condition in 8.7% of 150 simulated reports at 5,250
    pairs. Holm's step-down over the judge's conditions keeps that family-wise, whatever other
    judges share the report. Rows without a kappa p (older reports) are left as they are.
    """
    testable = [i for i, row in enumerate(rows) if agreement_testable(row) and row.get("kappa_p") is not None]
    adjusted = holm(np.array([rows[i]["kappa_p"] for i in testable], dtype=float))
    out = list(rows)
    for i, p in zip(testable, adjusted, strict=True):
        out[i] = rows[i] | {"kappa_p_adjusted": float(p)}
    return out


def percent_claim(row: dict, baseline: dict | None) -> dict:
    """A judge's agreement with every human vote on the same screens, against chance and rater-rater agreement.

    "Agrees above chance" only when kappa's one-sided test, Holm-adjusted across the judge's
    conditions (``adjust_agreement``), is below 0.025 (the level at which the 95% interval's
    lower end clears 0) and the percent interval is above the chance level; "not clearly above
    chance" when only some of these hold; otherwise "no better than chance" (or "below chance"
    when the kappa interval is below 0), never a bare "agrees".
    """
    condition = row.get("condition", "")
    n, n_instructions = row["n"], row.get("n_instructions")
    claim = {
        "kind": "agreement",
        "metric": "percent",
        "subject": row["b"],
        "with": row["a"],
        "condition": condition,
        "value": row["value"],
        "ci95": row.get("ci95"),
        "chance": row.get("chance"),
        "kappa": row.get("kappa"),
        "kappa_ci95": row.get("kappa_ci95"),
        "kappa_p_adjusted": row.get("kappa_p_adjusted"),
        "n": n,
        "n_instructions": n_instructions,
        "unit": "votes",
        "min_n": MIN_VOTES,
        "min_instructions": MIN_AGREEMENT_INSTRUCTIONS,
        "above_chance": False,
        **_baseline_fields(baseline),
    }
    clusters: int = n_instructions or 0  # the instructions are the interval's clusters
    if not agreement_testable(row):
        where = "an unknown number of instructions" if n_instructions is None else _instructions(clusters)
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for agreement with human votes on {condition} pairs ({n} votes from "
            f"{where}; need about {MIN_VOTES} votes from {MIN_AGREEMENT_INSTRUCTIONS} instructions)",
        }
    above = _above_chance(row)
    numbers = f"{_estimate(row)}, chance {_chance_level_text(row.get('chance'))}, kappa {_kappa_estimate(row)}, "
    numbers += f"{_instructions(clusters)}, {n} votes"
    words = _chance_words(row, above)
    text = f"agrees with human votes {words} on {condition} pairs ({numbers})"
    if baseline is not None and baseline["value"] is not None:
        text += f", rater-rater {_estimate(baseline)}"
    return claim | {"verdict": "measured", "above_chance": above, "chance_words": words, "text": text}


def _above_chance(row: dict) -> bool:
    """Both clustered intervals clear chance (kappa's above 0, the percent's above the chance
    level) and kappa's test holds after Holm across the judge's conditions.

    Either interval alone could say "above" while the other includes chance (the chance level
    is itself estimated); a claim needs both. Missing numbers never make a claim.
    """
    kappa_ci, ci, chance = row.get("kappa_ci95") or [None, None], row.get("ci95") or [None, None], row.get("chance")
    if kappa_ci[0] is None or ci[0] is None or chance is None:
        return False
    adjusted = row.get("kappa_p_adjusted")
    if adjusted is not None and adjusted >= ALPHA / 2:
        return False
    return bool(kappa_ci[0] > 0 and ci[0] > chance)


def _chance_words(row: dict, above: bool) -> str:
    if above:
        return "above chance"
    kappa_ci = row.get("kappa_ci95") or [None, None]
    # A judge whose whole kappa interval is below 0 disagrees with people systematically.
    if kappa_ci[1] is not None and kappa_ci[1] < 0:
        return "below chance"
    ci, chance = row.get("ci95") or [None, None], row.get("chance")
    # One interval clears chance and the other does not: say that, not "no better than chance".
    if (kappa_ci[0] is not None and kappa_ci[0] > 0) or (None not in (ci[0], chance) and ci[0] > chance):
        return "not clearly above chance"
    return "no better than chance"


def _kappa_estimate(row: dict) -> str:
    kappa, ci = row.get("kappa"), row.get("kappa_ci95")
    if kappa is None:
        return "undefined"  # chance is 1: both sides gave one label only
    if not ci or None in ci:
        return f"{kappa:.2f}"
    return f"{kappa:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def _instructions(count: int) -> str:
    return f"{count} instruction" if count == 1 else f"{count} instructions"


def _chance_level_text(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.2f}"


def length_claim(row: dict, votes: dict | None = None) -> dict:
    """The length-control verdict of one judge and condition (its share of above-chance agreement).

    ``votes``: the same card's agreement claim on the same condition (``percent_claim``). The
    share's chance is a coin's 0.5 on the human majority, but the votes claim holds the judge
    to the chance its own choices and people's give (a judge that always picks the longer
    answer, where people mostly do too, agrees 0.68 with the majority and no better than
    chance with their votes). When that claim finds no agreement above chance, neither does
    this line: no share of an agreement the card says is not there.
    """
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
    where = f" on {row['condition']} pairs" if row.get("condition") else ""
    if row["n"] < MIN_VOTES:
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for length control{where} (n = {row['n']}; need about {MIN_VOTES} "
            f"keys with a decisive human majority)",
        }
    ci = row.get("ci95") or [None, None]
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if None not in ci else ""
    if votes is not None and votes.get("verdict") == "measured" and not votes.get("above_chance"):
        return claim | {
            "verdict": "measured",
            "share_meaningful": False,
            "text": f"agrees with human votes {votes['chance_words']}{where}, so there is no above-chance "
            f"agreement for length to explain (with the human majority {row['agreement']:.2f}{interval}, "
            f"n = {row['n']})",
        }
    numbers = f"agreement {row['agreement']:.2f}, n = {row['n']}; verdict: {row.get('verdict')}"
    reason = share_reason(row, where)
    if share is None or (ci[0] is not None and ci[0] <= 0.5):
        text = (
            f"agrees with the human majority no better than chance{where}, so there is no agreement "
            f"for length to explain (agreement {row['agreement']:.2f}{interval}, n = {row['n']})"
        )
    elif reason is not None:
        text = f"{reason}; {numbers}"
    else:
        # Of the agreement *above chance* (methods.md "Headline share"), not of the agreement itself.
        text = f"length alone recovers {share:.0%} of its above-chance agreement with the human majority{where} ({numbers})"
    return claim | {"verdict": "measured", "text": text, "share_meaningful": reason is None}


def share_reason(row: dict, where: str = "") -> str | None:
    """Why a length-control row's headline share has no reading as a percentage; None when it has one.

    The share (null - 0.5) / (judge - 0.5) is the part of the judge's above-chance agreement
    that length alone recovers only when the judge agrees above chance and 0 <= share <= 1.
    Outside that a percentage misleads ("length recovers -642%"), so it is never printed as one.
    """
    share = row.get("headline_share")
    low = (row.get("ci95") or [None])[0]
    if share is None or (low is not None and low <= 0.5):
        # No value, or no meaning: a share of a near-zero excess reads as -642% or 900%.
        return (
            f"the judge agrees with the human majority no better than chance{where}, so there is no agreement "
            f"for length to explain"
        )
    if share < 0:
        return (
            f"length alone agrees with the human majority below chance{where}, so the share of agreement "
            f"it explains is not interpretable (share {share:.2f})"
        )
    if share > 1:
        return (
            f"length alone agrees with the human majority more than the judge does{where}, so the share of "
            f"agreement it explains is not interpretable (share {share:.2f})"
        )
    return None


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
