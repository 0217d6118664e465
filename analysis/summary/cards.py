"""The report's ``summary``: one card per judge (and one for the humans), claims first, in plain words.

Pure: reads the finished report dict (bias, agreement, length_control, gold_accuracy, counted_work) and
adds nothing the sections did not compute but Holm's step over each judge's agreement claims. Cards are ordered humans first, then judges by
name; each card's ``headline`` says it in one sentence (``analysis.summary.headline``) and its
``text`` joins its claims, biased findings first.
"""

from __future__ import annotations

from analysis.summary.alt_test_claims import alt_test_claims
from analysis.summary.claims import (
    CLAIMED,
    TESTED,
    adjust_agreement,
    bias_claim,
    descriptive_claim,
    length_claim,
    missing_claim,
    percent_claim,
    rbo_claim,
    reference_claim,
)
from analysis.summary.gold_claims import gold_claims
from analysis.summary.headline import headline

HUMANS = "humans"
ORDER = {"biased": 0, "no_evidence": 1, "measured": 2, "not_enough_data": 3, "no_data": 4}


def build_summary(report: dict) -> list[dict]:
    correction = (report.get("profile_choices") or {}).get("correction", "holm")
    bias_rows = report.get("bias") or []
    agreement = report.get("agreement") or []
    lc = report.get("length_control") or {}
    measured = {r["bias"] for r in bias_rows if r["bias"] in TESTED and r.get("n")}

    references = report.get("bias_reference") or []
    gold = report.get("gold_accuracy") or []
    cards = []
    human = _human_card(bias_rows, agreement, report.get("counted_work"), correction=correction, gold=gold)
    if human is not None:
        cards.append(human)
    judges: list[dict] = []
    for judge in _judges(report):
        claims = bias_claims(judge, bias_rows, references, correction=correction)
        have = {c["bias"] for c in claims}
        missing = [b for b in TESTED if b in measured and b not in have]
        agreements = _agreement_claims(judge, agreement)
        if missing:
            imported = bool(agreements) and all((c.get("source") or "").startswith("imported") for c in agreements)
            claims.append(missing_claim(judge, missing, imported=imported))
        claims += agreements
        votes = {c["condition"]: c for c in agreements if c.get("metric") == "percent"}
        claims += [
            length_claim(r, votes.get(r.get("condition")))
            for r in lc.get("judge_vs_human") or []
            if r["judge"] == judge
        ]
        claims += gold_claims(judge, gold)
        claims += alt_test_claims(judge, report.get("alt_test") or [])
        judges.append(_card(judge, "judge", claims))
    judges += _waiting_judges(report, have={c["subject"] for c in judges})
    return cards + sorted(judges, key=lambda c: c["subject"])


def bias_claims(subject: str, rows: list[dict], references: list[dict], *, correction: str) -> list[dict]:
    """A subject's bias claims: the claimed rows on their own test; length and self-preference
    against a reference on the same pairs when one exists, else described without a claim."""
    mine = {(r["bias"]): r for r in references if r["subject"] == subject}
    claims = []
    for row in rows:
        if row["subject"] != subject or row["bias"] not in TESTED:
            continue
        if row["bias"] in CLAIMED:
            claim = bias_claim(row, correction=correction)
        elif row["bias"] in mine:
            claim = reference_claim(mine[row["bias"]], correction=correction)
        else:
            claim = descriptive_claim(row)
        if claim is not None:
            claims.append(claim)
    return claims


def _waiting_judges(report: dict, *, have: set[str]) -> list[dict]:
    """Judges whose only jobs do not count yet: a card that says so instead of no card at all."""
    waiting: dict[str, list[dict]] = {}
    for job in ((report.get("counted_work") or {}).get("judge_jobs") or {}).get("not_counted") or []:
        if job["judge"] not in have:
            waiting.setdefault(job["judge"], []).append(job)
    cards = []
    for judge, jobs in sorted(waiting.items()):
        listed = ", ".join(f"job {j['job']} {j['status']}" for j in jobs)
        claim = {
            "kind": "bias",
            "subject": judge,
            "statistic": "not measured",
            "verdict": "no_data",
            "n": 0,
            "jobs": [j["job"] for j in jobs],
            "text": f"nothing measured yet: no completed judge job ({listed}); only completed jobs count, "
            f"watch or resume them on the judging page",
        }
        cards.append(_card(judge, "judge", [claim]))
    return cards


def _judges(report: dict) -> list[str]:
    names = {r["subject"] for r in report.get("bias") or [] if r["subject"] != HUMANS}
    names |= {r["b"] for r in report.get("agreement") or [] if r["kind"] == "human_vs_judge"}
    names |= {r["judge"] for r in (report.get("length_control") or {}).get("judge_vs_human") or []}
    names |= {r["judge"] for r in report.get("judge_jobs") or []}
    names |= {r["subject"] for r in report.get("gold_accuracy") or [] if r["subject"] != HUMANS}
    return sorted(names)


def _agreement_claims(judge: str, rows: list[dict]) -> list[dict]:
    mine = [row for row in rows if row["kind"] == "human_vs_judge" and row["b"] == judge]
    human_human = _human_rbo_baseline(rows)
    claims = [rbo_claim(row, human_human) for row in mine if row["metric"].startswith("rbo_") and row["a"] == HUMANS]
    percent = [
        row for row in mine if row["metric"] == "percent" and row["a"].startswith(f"{HUMANS}:") and _third_class(row)
    ]
    # One family per judge: its conditions' "above chance" claims share Holm's correction.
    for row in adjust_agreement(percent):
        claims.append(percent_claim(row, _rater_baseline(rows, row.get("condition"))))
    return claims


def _human_rbo_baseline(rows: list[dict]) -> dict | None:
    # The mean over every pair of raters (a = b = "all"): people's agreement with each other.
    for row in rows:
        if row["kind"] == "inter_annotator" and row["metric"].startswith("rbo_") and row["a"] == row["b"] == "all":
            return row
    return None


def _rater_baseline(rows: list[dict], condition: str | None) -> dict | None:
    for row in rows:
        if (
            row["kind"] == "inter_annotator"
            and row["metric"] == "percent"
            and row["a"] == f"raters:{condition}"
            and _third_class(row)
        ):
            return row
    return None


def _third_class(row: dict) -> bool:
    # One reading per statistic: ties as a third outcome (rows without ties carry no "ties").
    return row.get("ties", "third-class") == "third-class"


def _human_card(
    bias_rows: list[dict], agreement: list[dict], counted: dict | None, *, correction: str, gold: list[dict]
) -> dict | None:
    claims = bias_claims(HUMANS, bias_rows, [], correction=correction) + gold_claims(HUMANS, gold)
    rbo = _human_rbo_baseline(agreement)
    if rbo is not None and rbo["value"] is not None:
        claims.append(
            {
                "kind": "agreement",
                "metric": rbo["metric"],
                "subject": HUMANS,
                "with": HUMANS,
                "value": rbo["value"],
                "ci95": rbo.get("ci95"),
                "n": rbo["n"],
                "unit": "rater pairs",
                "verdict": "measured",
                "chance": (rbo.get("chance") or {}).get("value"),
                "text": f"agree with each other RBO {_fmt(rbo)} (mean of {rbo['n']} rater pairs"
                + _chance_words(rbo)
                + ")",
            }
        )
    for row in agreement:
        if (
            row["kind"] == "inter_annotator"
            and row["metric"] == "percent"
            and _third_class(row)
            and row["a"].startswith("raters:")
            and row["value"] is not None
        ):
            claims.append(
                {
                    "kind": "agreement",
                    "metric": "percent",
                    "subject": HUMANS,
                    "with": HUMANS,
                    "condition": row.get("condition"),
                    "value": row["value"],
                    "ci95": row.get("ci95"),
                    "n": row["n"],
                    "unit": "units",
                    "verdict": "measured",
                    "text": f"agree with each other {_fmt(row)} on {row.get('condition')} pairs (n = {row['n']} units)",
                }
            )
    work = (counted or {}).get("assignments") or {}
    if not claims and not work.get("submitted"):
        return None  # no human work at all: no card
    card = _card(HUMANS, "humans", claims)
    if not claims:
        waiting = work.get("waiting_for_review", 0)
        card["text"] = (
            f"No human work counts yet ({(counted or {}).get('rule', 'approved')} work only): "
            f"{work.get('submitted', 0)} submitted assignments, {waiting} waiting for review."
        )
        card["verdict"] = "no_data"
        card["headline"] = card["text"]
    return card


def _fmt(row: dict) -> str:
    ci = row.get("ci95")
    if not ci or None in ci:
        return f"{row['value']:.2f}"
    return f"{row['value']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def _card(subject: str, kind: str, claims: list[dict]) -> dict:
    claims = sorted((_uniform(c) for c in claims), key=lambda c: (ORDER[c["verdict"]], c["kind"] != "bias"))
    verdicts = {c["verdict"] for c in claims}
    overall = next(
        (v for v in ("biased", "no_evidence", "measured", "not_enough_data", "no_data") if v in verdicts), "no_data"
    )
    lines = _lines(claims)
    return {
        "subject": subject,
        "kind": kind,
        "verdict": overall,
        "headline": headline({"kind": kind, "claims": claims}),
        "text": _sentence(subject, lines),
        "claims": claims,
        "lines": lines,
    }


def _uniform(claim: dict) -> dict:
    """Every claim carries the same display keys: what was measured, its number, interval, n, p."""
    statistic = claim.get("bias") or claim.get("metric") or "length_control"
    # A length share outside [0, 1] (or of no above-chance agreement) is not a share: no number shown.
    share = claim.get("share") if claim.get("share_meaningful", True) else None
    estimate = {"bias": claim.get("rate"), "length": share}.get(claim["kind"], claim.get("value"))
    return {
        "statistic": statistic,
        "estimate": estimate,
        "condition": None,
        "ci95": None,
        "n": 0,
        "p_adjusted": None,
    } | claim


def _lines(claims: list[dict]) -> list[dict]:
    """The card's lines, each text once, in the claims' order: ``text``, ``verdict``, ``statistic``.

    Identical texts become one line; not-enough-data lines of one statistic that differ only in
    their condition and its numbers ("... on order pairs (n = 2; need about 30)", "... on
    bandwagon pairs (n = 4; need about 30)") become one line naming the conditions ("... on
    order and bandwagon pairs (order: n = 2, bandwagon: n = 4; need about 30)"). The claims
    themselves stay one per statistic and condition.
    """
    groups: dict[tuple[str, ...], list[dict]] = {}
    for claim in claims:
        groups.setdefault(_line_shape(claim)[0], []).append(claim)
    return [
        {"text": _merged_text(shape, group), "verdict": group[0]["verdict"], "statistic": group[0]["statistic"]}
        for shape, group in groups.items()
    ]


def _line_shape(claim: dict) -> tuple[tuple[str, ...], str | None]:
    """(what the line says whatever its condition, the condition's own numbers or None).

    A not-enough-data text "<head> on <condition> pairs (<numbers>; <need>)<tail>" has the
    shape (head, need, tail); any other text is its own shape and has no numbers apart.
    """
    condition, text = claim.get("condition"), claim["text"]
    if claim["verdict"] == "not_enough_data" and condition:
        head, found, rest = text.partition(f" on {condition} pairs (")
        numbers, semicolon, after = rest.partition("; ")
        need, closing, tail = after.partition(")")
        if found and semicolon and closing and "(" not in numbers + need:
            return ("merge", head, need, tail), numbers
    return ("text", text), None


def _merged_text(shape: tuple[str, ...], group: list[dict]) -> str:
    """One line for the group: its text when all say the same, else the conditions listed with their numbers."""
    numbers = {str(c["condition"]): _line_shape(c)[1] for c in group}  # condition -> its numbers
    if shape[0] != "merge" or len(numbers) == 1:
        return group[0]["text"]
    _, head, need, tail = shape
    if len(set(numbers.values())) == 1:
        said = f"{next(iter(numbers.values()))} each"
    else:
        said = ", ".join(f"{condition}: {n}" for condition, n in numbers.items())
    return f"{head} on {_listed(list(numbers))} pairs ({said}; {need}){tail}"


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _sentence(subject: str, lines: list[dict]) -> str:
    """ "Biased toward A (...) and toward B (...); no evidence of ...; agrees with humans ..."."""
    if not lines:
        return f"{subject}: nothing measured yet."
    biased = [line["text"].removeprefix("biased ") for line in lines if line["verdict"] == "biased"]
    parts = [f"Biased {' and '.join(biased)}"] if biased else []
    parts += [line["text"] for line in lines if line["verdict"] != "biased"]
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _chance_words(row: dict) -> str:
    chance = (row.get("chance") or {}).get("value")
    return "" if chance is None else f"; chance {chance:.2f}"
