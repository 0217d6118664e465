"""The generated methods paragraph and the reproducibility manifest."""

from __future__ import annotations

import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from django.conf import settings

from analysis import summary

PACKAGES = ("Django", "pandas", "numpy", "scipy", "matplotlib", "rbo", "jsonschema", "celery")


def methods_paragraphs(report: dict) -> list[str]:
    """Every definition choice that produced a number, with its n (plain text; the template escapes)."""
    c = report.get("profile_choices") or {}
    lc = report.get("length_control") or {}
    counts = lc.get("counts") or {}
    bias_rows = report.get("bias") or []
    tested = sum(1 for r in bias_rows if r.get("p_value") is not None)
    correction = {"holm": "Holm's step-down", "bh": "Benjamini-Hochberg"}.get(str(c.get("correction")), "?")
    paragraphs = [
        f"All numbers were computed under profile '{report['profile']}' for study '{report['study']}'; every "
        f"definition is written out in docs/methods.md. Bias rates use the {c.get('denominator', '?')} denominator "
        f"('all' = every comparison, 'valid' = valid answers only), compassion semantics "
        f"'{c.get('compassion', '?')}', egocentric semantics '{c.get('egocentric', '?')}' and human averaging "
        f"'{c.get('human_average', '?')}'. Each rate is tested against the null that means no bias, never against a "
        f"simulated random judge: position_preference (order_first - order_last) by an exact two-sided sign "
        f"(McNemar) test of pairs with the first slot twice against pairs with the last slot twice; bandwagon and "
        f"attentional by an exact sign test of following the cue in both presentations against going against it "
        f"in both (the judge's own no-cue agreement with the cued answer is 1/2 by design); egocentric and salience "
        f"by exact sign tests of the outcome against its mirror (the other response; the shorter one). order_first, "
        f"order_last, position_consistency (the same response, or a tie, chosen in both presentations of an order "
        f"pair) and the compassion rates are descriptive and carry no test of their own. The theoretical "
        f"RANDOM value is a reference column only. {tested} rows are tested; p-values are corrected across them "
        f"with {correction}. Every 95% interval is cluster-robust: a seeded cluster bootstrap (1000 replicates) "
        f"over instructions for judges and over raters and instructions (two-way) for humans, giving a Wilson "
        f"interval at the effective sample size for rates and a normal interval with the bootstrap standard error "
        f"for position_preference, never narrower than the interval for independent pairs. Rankings break ties by "
        f"rule '{c.get('tie_break', '?')}'; rank-biased overlap is the '{c.get('rbo_variant', '?')}' variant with "
        f"p = {c.get('rbo_p', '?')}. Human salience lengths are counted in {c.get('human_length_unit', '?')}. The "
        f"report has {len(bias_rows)} bias rows and {len(report.get('agreement') or [])} agreement rows.",
    ]
    gold = [r for r in report.get("gold_accuracy") or [] if r.get("category") is None]
    if gold:
        paragraphs.append(gold_paragraph(gold))
    if lc:
        paragraphs.append(
            f"Length control: a pair key is (question, model A, model B, turn) per condition, joined "
            f"'{lc.get('join')}' ({'the key as written; a reversed key does not match' if lc.get('join') == 'ordered' else 'models put in canonical order, winners flipped with them'}). "
            f"The human majority per key counts decisive votes and ignores ties; equal counts drop the key. A judge's "
            f"verdict per key is its row there; several rows (two presentations) stand only if they agree, otherwise "
            f"they are a tie, and ties drop the key. Judge-vs-human agreement is the share of keys, both decisive, where "
            f"the judge matches the majority; per-vote agreement scores every human vote against the judge, with ties "
            f"as a third class (S1) and without ties (S2). Answer length is counted in {lc.get('unit')} over the "
            f"'{lc.get('scope')}' scope. The length-only null picks the longer answer (equal lengths: no decision) and "
            f"is scored against every decisive human vote and every decisive judge verdict. Strata use "
            f"d = |la - lb| / max(la, lb): <5%, <10% (containing <5%), 10-30%, >30%. Every agreement has a 95% Wilson "
            f"interval at the effective sample size, the design effect from a cluster bootstrap over questions "
            f"({lc.get('interval')}); differences between strata have a {lc.get('difference_interval')} interval "
            f"(seed {lc.get('seed')}). Verdict rule, fixed before looking, applied to those cluster-robust "
            f"intervals: on <10% pairs, a judge interval wider than "
            f"+-15 points is inconclusive; one overlapping the null's is length-confounded; one above 0.5 whose upper "
            f"bound reaches overall agreement minus 10 points is semantic; anything else is inconclusive. "
            f"n: {counts.get('votes', 0)} human votes ({counts.get('decisive_votes', 0)} decisive) on "
            f"{counts.get('keys', 0)} keys, {counts.get('majority_keys', 0)} with a decisive majority; "
            f"{counts.get('judge_rows', 0)} judge rows on {counts.get('judge_keys', 0)} judge keys."
        )
    paragraphs.append(
        f"Human work counts when submitted and '{c.get('human_work', 'approved')}' (profile setting human_work; "
        f"rejected and unfinished work never count), the same rule in every section. Work with a quality flag "
        f"{'does not count' if c.get('flagged_work') == 'exclude' else 'counts like any other'} (profile setting "
        f"flagged_work '{c.get('flagged_work', 'keep')}'), and attention checks and gold items are never data "
        f"(docs/methods.md, 'Crowd quality'). Pairwise votes are scored as "
        f"the response chosen, and a tie vote as a tie, never as a slot. Rater agreement (Krippendorff's alpha, "
        f"Fleiss' kappa, percent agreement) uses units of one pair (MT-Bench: question, model pair, turn) under one "
        f"condition with the cue on the same response, split by presentation where a rater answered both; every "
        f"agreement statistic is given with ties as a third class (a tie against a response disagrees, tie against "
        f"tie agrees; rows 'ties: third-class') and, where there are tie votes, again without them ('ties: "
        f"excluded'). See docs/methods.md, 'Ties and agreement units' and 'Which work counts'."
    )
    if report.get("summary") is not None:
        paragraphs.append(
            f"The summary at the top claims a bias only where the row's exact sign test is significant at "
            f"{summary.ALPHA} after {correction} correction and the row has at least {summary.MIN_PAIRS} pairs; "
            f"a tested row below that says 'not enough data', one above it without significance 'no evidence'. "
            f"Agreement is stated from {summary.MIN_INSTRUCTIONS} instructions (RBO) or {summary.MIN_VOTES} votes "
            f"(percent agreement, length control) up, beside the human-human baseline; every number is the "
            f"section row's. The report read data version {report.get('data_version', '?')}. See docs/methods.md, "
            f"'Verdict summary' and 'Report states'."
        )
    paragraphs += _section_methods(report)
    return paragraphs


# Sections whose rows each carry their own method text: the first row's says how all were computed.
SECTION_METHODS = (
    ("alt_test", "Alternative annotator test"),
    ("bt_rankings", "Rankings with uncertainty (Bradley-Terry)"),
    ("leaderboard", "Judge leaderboard"),
)


def _section_methods(report: dict) -> list[str]:
    out = []
    for key, title in SECTION_METHODS:
        rows = [r for r in report.get(key) or [] if r.get("method")]
        if rows:
            out.append(f"{title} ({len(report[key])} rows): {rows[0]['method']}.")
    gold_rows = [r for r in report.get("bias_reference") or [] if r.get("reference") == "gold"]
    if gold_rows:
        out.append(
            f"Length and self-preference against gold labels ({len(gold_rows)} rows): {gold_rows[0]['estimand']}; "
            f"{gold_rows[0]['test']}; {gold_rows[0]['interval']}."
        )
    return out


def gold_paragraph(rows: list[dict]) -> str:
    """How ``gold_accuracy`` was computed, with its subjects and n (the overall rows)."""
    sizes = ", ".join(f"{r['subject']} n = {r['n']}" for r in rows)
    return (
        "Accuracy on gold labels follows JudgeBench's rule over the presentations a subject saw of a gold pair: "
        "+1 for each choice of the gold answer, -1 for each choice of the other, 0 for a tie or an invalid output; "
        "the pair is correct when the sum is above 0, and the value is correct units over units. Judges are read "
        "from their order run (both presentations) where it holds the pair, else their plain run (one "
        "presentation); an invalid output stays in n. People are read per rater and gold pair, from the rater's "
        "votes in the order condition (both presentations), else the plain condition, so the unit is one "
        "person's judgement, comparable to one judge's; cued conditions and gold quality-control tasks never "
        "count. 95% intervals: cluster-robust (CR1) variance over instructions (people: two-way over raters and "
        "instructions), Wilson at the effective sample size, t on min(clusters) - 1 df. Rows by instruction "
        f"category follow each overall row. Overall: {sizes}. See docs/methods.md, 'Accuracy on gold labels'."
    )


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def file_digest(path: Path) -> dict:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return {"path": path.name, "bytes": path.stat().st_size, "sha256": sha.hexdigest()}


def build_manifest(
    *, report: dict, counts: dict, data_files: list[Path] | None = None, source_files: dict[str, str] | None = None
) -> dict:
    lc = report.get("length_control") or {}
    files = [file_digest(p) for p in data_files or []]
    # Files named on the command line win; otherwise the hashes the importer recorded.
    hashes = {f["path"]: f["sha256"] for f in files} if files else dict(source_files or {})
    return {
        "schema": report["schema"],
        "profile": report["profile"],
        "choices": report.get("profile_choices") or {},
        "seeds": {"length_bootstrap": lc.get("seed")},
        "data": counts,
        # Hashes of the source data: recorded at import, or given with report --data-file.
        "data_files": hashes,
        "packages": {name: _version(name) for name in PACKAGES},
        "python": platform.python_version(),
        "git_commit": _git_commit(),
    }
