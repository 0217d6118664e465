"""The generated methods paragraph and the reproducibility manifest."""
from __future__ import annotations

import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from django.conf import settings

PACKAGES = ("Django", "pandas", "numpy", "scipy", "matplotlib", "rbo", "jsonschema", "celery")


def methods_paragraphs(report: dict) -> list[str]:
    """Every definition choice that produced a number, with its n (plain text; the template escapes)."""
    c = report.get("profile_choices") or {}
    lc = report.get("length_control") or {}
    counts = lc.get("counts") or {}
    paragraphs = [
        f"All numbers were computed under profile '{report['profile']}' for study '{report['study']}'. "
        f"Bias rates use the {c.get('denominator', '?')} denominator ('all' = every comparison, 'valid' = valid "
        f"answers only), compassion semantics '{c.get('compassion', '?')}', and are compared with the theoretical "
        f"RANDOM threshold; each rate carries a 95% interval. Rankings break ties by rule '{c.get('tie_break', '?')}'; "
        f"rank-biased overlap is the '{c.get('rbo_variant', '?')}' variant with p = {c.get('rbo_p', '?')}. Human "
        f"salience lengths are counted in {c.get('human_length_unit', '?')}. The report has "
        f"{len(report.get('bias') or [])} bias rows and {len(report.get('agreement') or [])} agreement rows.",
    ]
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
            f"interval; differences between strata have a {lc.get('difference_interval')} interval (seed "
            f"{lc.get('seed')}). Verdict rule, fixed before looking: on <10% pairs, a judge interval wider than "
            f"+-15 points is inconclusive; one overlapping the null's is length-confounded; one above 0.5 whose upper "
            f"bound reaches overall agreement minus 10 points is semantic; anything else is inconclusive. "
            f"n: {counts.get('votes', 0)} human votes ({counts.get('decisive_votes', 0)} decisive) on "
            f"{counts.get('keys', 0)} keys, {counts.get('majority_keys', 0)} with a decisive majority; "
            f"{counts.get('judge_rows', 0)} judge rows on {counts.get('judge_keys', 0)} judge keys."
        )
    return paragraphs


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


def build_manifest(*, report: dict, counts: dict, data_files: list[Path] | None = None,
                   source_files: dict[str, str] | None = None) -> dict:
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
