"""Verdict formats and their parsers: a judge's raw text -> ``Verdict(slot, strength)``.

Formats (``judging.vocabulary.VerdictFormat``):
- ``cobbler``: the platform's own prompt, read by the robust parser (``judging.parsers``);
  first / second or invalid, no tie, no strength.
- ``arena-hard``: [[A>>B]] [[A>B]] [[A=B]] [[B>A]] [[B>>A]], "A" the answer shown first.
- ``mt-bench``: [[A]] [[B]] [[C]] (a tie).
- ``regex``: a researcher's pattern with one capture group and a label map (``regex_spec``).

The label formats share one reading rule (``reading``): restated, quoted, negated, questioned or
counterfactual labels cast no vote; a final verdict line decides; otherwise every label asserted
must agree; anything else (no label, a refusal, labels that disagree) is invalid, never guessed.
Hand-labelled corpora: tests/judging/verdict_corpora/; accuracy: benchmarks/parser_accuracy.py.
"""

from __future__ import annotations

from judging.verdicts.base import Format
from judging.verdicts.reading import Reading
from judging.verdicts.regex_spec import VerdictSpecError
from judging.verdicts.registry import FORMAT_NAMES, get_format, parse
from judging.verdicts.verdict import INVALID, Verdict

__all__ = ["FORMAT_NAMES", "INVALID", "Format", "Reading", "Verdict", "VerdictSpecError", "get_format", "parse"]
