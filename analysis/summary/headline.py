"""Each verdict card's ``headline``: one sentence, read off the card's own claims.

A judge's headline says how it agrees with people (beside people's agreement with each other),
which biases its card claims, and what that means for using it; the humans' headline describes
people (they are the reference the judges are read against, not the defendant). Nothing is
recomputed and nothing is said that no claim supports: "agrees" only when the agreement claim
is above chance, a bias only when its claim is ``biased``, and "not enough data" when the claims
say so (docs/methods.md, "Verdict summary").
"""

from __future__ import annotations

from analysis.summary.claims import ALPHA, _chance_words, settled_no_evidence
from annotations.biases import REGISTRY, SWAP_REGISTRY, CueBias, SwapBias
from annotations.vocabulary import Condition

HUMANS = "humans"
# The condition a headline reads agreement on: the first of these the card has, as the leaderboard does.
PRIMARY = (Condition.ORDER, Condition.PLAIN)
# What a claimed bias means for a judge, by bias and direction ("toward" / "against").
# Every plugin of annotations.biases, cue or swapped (keyed by condition or report row); a phrase a
# plugin leaves "" falls back to the claim's own target (_bias_words).
_PLUGINS: dict[str, CueBias | SwapBias] = {**SWAP_REGISTRY, **REGISTRY}
JUDGE_BIAS = {
    **{(key, "toward"): b.words.judge_toward for key, b in _PLUGINS.items()},
    **{(key, "against"): b.words.judge_against for key, b in _PLUGINS.items()},
}
# The same findings said of people: a description, not a charge.
HUMAN_BIAS = {
    **{(key, "toward"): b.words.people_toward for key, b in _PLUGINS.items()},
    **{(key, "against"): b.words.people_against for key, b in _PLUGINS.items()},
}
SHORT = {key: b.short for key, b in _PLUGINS.items()}


def headline(card: dict) -> str:
    """The card's one-sentence headline (``card["headline"]`` in the report JSON)."""
    claims = card.get("claims") or []
    waiting = [c for c in claims if c.get("jobs") is not None]
    if waiting and len(waiting) == len(claims):
        # A judge whose jobs have not completed: the claim's own first clause.
        return _sentence([waiting[0]["text"].split("; ")[0]])
    if not any(c["verdict"] in ("biased", "no_evidence", "measured") for c in claims):
        return _not_enough(claims, card["kind"])
    if card["kind"] == HUMANS:
        return _sentence(_human_parts(claims))
    return _sentence(_judge_parts(claims))


def _judge_parts(claims: list[dict]) -> list[str]:
    agreement, agrees = _judge_agreement(claims)
    biased = _of(claims, "bias", "biased")
    parts = [agreement]
    if biased:
        parts.append(_listed([_bias_words(c, JUDGE_BIAS) for c in biased]))
    else:
        parts.append(_unbiased(claims, "bias"))
    parts.append(_trust(claims, agrees=agrees, biased=bool(biased)))
    return [p for p in parts if p]


def _judge_agreement(claims: list[dict]) -> tuple[str, bool | None]:
    """(the agreement clause, whether it agrees above chance: None when not measured)."""
    percent = [c for c in claims if c["kind"] == "agreement" and c.get("metric") == "percent"]
    measured = [c for c in percent if c["verdict"] == "measured" and c.get("value") is not None]
    if measured:
        claim = _primary(measured)
        where = f" on {claim['condition']} pairs" if claim.get("condition") else ""
        people = _people(claim.get("baseline"))
        others = [c for c in measured if c is not claim and c.get("above_chance") != claim.get("above_chance")]
        split = ""
        if others:
            above = sum(bool(c.get("above_chance")) for c in measured)
            split = f"; above chance on {above} of {len(measured)} conditions"
        if claim.get("above_chance"):
            inside = f"people agree with each other {people}" if people else ""
            inside = "; ".join(x for x in (inside, split.removeprefix("; ")) if x)
            return f"agrees with people {_pct(claim['value'])}{where}" + (f" ({inside})" if inside else ""), True
        chance = f" vs chance {_pct(claim['chance'])}" if claim.get("chance") is not None else ""
        words = _chance_words(claim, False)
        verb = "matches people less often than chance" if words == "below chance" else f"matches people {words}"
        inside = f"{_pct(claim['value'])}{chance}" + (f", people with each other {people}" if people else "") + split
        return f"{verb}{where} ({inside})", False
    rbo = [c for c in claims if c["kind"] == "agreement" and str(c.get("metric", "")).startswith("rbo_")]
    ranked = [c for c in rbo if c["verdict"] == "measured" and c.get("value") is not None]
    if ranked:
        claim = ranked[0]
        people = f", people with each other {claim['baseline']:.2f}" if claim.get("baseline") is not None else ""
        p, level = claim.get("chance_p"), claim.get("chance")
        if level is None or p is None:
            return (
                f"ranks answers RBO {claim['value']:.2f} against people's consensus (chance level unknown{people})",
                None,
            )
        numbers = f"RBO {claim['value']:.2f} vs chance {level:.2f}{people}"
        if claim.get("above_chance"):
            return f"agrees with people's rankings above chance ({numbers})", True
        if claim.get("below_chance"):
            return f"ranks answers against people's order, below chance ({numbers})", False
        if p < ALPHA:  # the test alone: its interval reaches chance (claims.rbo_claim)
            return f"ranks answers not clearly above chance against people ({numbers})", False
        return f"ranks answers no better than chance against people ({numbers})", False
    if percent or rbo:
        return "not enough data yet to compare with people (" + _needs(percent + rbo) + ")", None
    return "not compared with people (no human votes on its pairs)", None


def _trust(claims: list[dict], *, agrees: bool | None, biased: bool) -> str:
    """What the claims mean for using the judge: only what its agreement and alt-test claims support."""
    alt = [c for c in claims if c["kind"] == "alt_test" and c["verdict"] == "measured"]
    if alt and alt[0].get("passed"):
        where = ", where those cues are controlled" if biased else ""
        return f"could replace your annotators (alt-test at epsilon = {alt[0]['epsilon']:g}){where}"
    if agrees is False:
        return "do not use its verdicts in place of people's"
    if agrees and biased:
        return "use it only where those cues are controlled"
    if agrees and alt:
        return "not shown to replace your annotators (alt-test)"
    return ""


def _human_parts(claims: list[dict]) -> list[str]:
    parts = []
    percent = [
        c for c in claims if c["kind"] == "agreement" and c.get("metric") == "percent" and c["verdict"] == "measured"
    ]
    rbo = [c for c in claims if c["kind"] == "agreement" and str(c.get("metric", "")).startswith("rbo_")]
    if percent:
        claim = _primary(percent)
        where = f" on {claim['condition']} pairs" if claim.get("condition") else ""
        parts.append(f"people agree with each other {_pct(claim['value'])}{where}")
    elif rbo and rbo[0].get("value") is not None:
        chance = f", chance {rbo[0]['chance']:.2f}" if rbo[0].get("chance") is not None else ""
        parts.append(f"people's rankings agree RBO {rbo[0]['value']:.2f}{chance}")
    leaned = []
    for claim in _of(claims, "bias", "biased"):
        words = _bias_words(claim, HUMAN_BIAS)
        if claim.get("hits_rate") is not None and claim.get("mirror_rate") is not None:
            words += f" ({_pct(claim['hits_rate'])} of pairs vs {_pct(claim['mirror_rate'])} the other way)"
        leaned.append(words)
    if leaned:
        parts.append("they " + _listed(leaned))
    else:
        parts.append(_unbiased(claims, "effect on them"))
    parts.append("they are the reference the judges are read against")
    return [p for p in parts if p]


def _unbiased(claims: list[dict], noun: str) -> str:
    """ "no evidence of position or length bias" from the no-evidence bias claims; else what is missing."""
    # Only where the test and the interval agree: "no clear evidence" rows are no headline's "no evidence".
    settled = [c for c in _of(claims, "bias", "no_evidence") if settled_no_evidence(c)]
    tested = [SHORT.get(c.get("bias", ""), c.get("bias", "")) for c in settled]
    if tested:
        names = list(dict.fromkeys(tested))
        return f"no evidence of {_listed(names, 'or')} {noun}"
    short = _of(claims, "bias", "not_enough_data")
    if short:
        return f"not enough data yet for bias tests ({_needs(short)})"
    return ""


def _not_enough(claims: list[dict], kind: str) -> str:
    """Nothing measured, tested or described yet: say so, with the largest n against what is needed."""
    short = [c for c in claims if c["verdict"] == "not_enough_data"]
    who = "people" if kind == HUMANS else "this judge"
    if not short:
        return _sentence([f"nothing measured yet for {who}"])
    return _sentence([f"not enough data yet for a verdict on {who} ({_needs(short)})"])


def _needs(claims: list[dict]) -> str:
    """The largest n among the claims against the n they need: "n = 12 votes; need about 30"."""
    claim = max(claims, key=lambda c: c.get("n") or 0)
    unit = claim.get("unit") or ("pairs" if claim["kind"] == "bias" else "units")
    need = claim.get("min_n")
    return f"largest n = {claim.get('n') or 0} {unit}" + (f"; need about {need}" if need else "")


def _bias_words(claim: dict, words: dict) -> str:
    direction = claim.get("direction") or "toward"
    found = words.get((claim.get("bias"), direction))
    return found or f"leaned {direction} {claim.get('target') or claim.get('bias')}"


def _primary(claims: list[dict]) -> dict:
    for condition in PRIMARY:
        for claim in claims:
            if claim.get("condition") == condition:
                return claim
    return sorted(claims, key=lambda c: str(c.get("condition") or ""))[0]


def _of(claims: list[dict], kind: str, verdict: str) -> list[dict]:
    return [c for c in claims if c["kind"] == kind and c["verdict"] == verdict]


def _people(value: float | None) -> str:
    return "" if value is None else _pct(value)


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _listed(words: list[str], last: str = "and") -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {last} " + words[-1]


def _sentence(parts: list[str]) -> str:
    text = "; ".join(p for p in parts if p)
    return text[:1].upper() + text[1:] + "."
