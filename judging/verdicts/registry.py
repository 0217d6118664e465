"""The verdict formats by name: ``get_format("arena-hard")``, ``get_format("regex", spec)``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from judging.verdicts.arena_hard import ArenaHardFormat
from judging.verdicts.base import Format
from judging.verdicts.cobbler import CobblerFormat
from judging.verdicts.mt_bench import MTBenchFormat
from judging.verdicts.regex_format import RegexFormat
from judging.verdicts.verdict import Verdict
from judging.vocabulary import VerdictFormat

FORMAT_NAMES: tuple[str, ...] = tuple(VerdictFormat.values)
# Formats without a spec are stateless: one instance each.
_BUILT_IN: dict[str, Format] = {
    VerdictFormat.COBBLER: CobblerFormat(),
    VerdictFormat.ARENA_HARD: ArenaHardFormat(),
    VerdictFormat.MT_BENCH: MTBenchFormat(),
}


def get_format(name: str, spec: Mapping[str, Any] | None = None) -> Format:
    """The format called ``name``; ``regex`` needs its ``spec`` (``VerdictSpecError`` if unusable),
    the built-ins take none. ValueError for an unknown name."""
    if name == VerdictFormat.REGEX:
        if spec is None:
            raise ValueError("the regex verdict format needs a spec: a pattern and a label map")
        try:
            canonical = json.dumps(spec, sort_keys=True)
        except (TypeError, ValueError):
            return RegexFormat(spec)  # not JSON: let validation say what is wrong
        return _regex_format(canonical)
    if name not in _BUILT_IN:
        raise ValueError(f"unknown verdict format {name!r}; use one of {', '.join(FORMAT_NAMES)}")
    if spec is not None:
        raise ValueError(f"the {name} verdict format takes no spec")
    return _BUILT_IN[name]


@lru_cache(maxsize=128)
def _regex_format(canonical: str) -> RegexFormat:
    """Validating a spec costs milliseconds (the backtracking checks); a judge's spec is read once."""
    return RegexFormat(json.loads(canonical))


def parse(
    name: str,
    raw: str,
    *,
    labels: Sequence[str] = (),
    echo_strings: Sequence[str] = (),
    spec: Mapping[str, Any] | None = None,
) -> Verdict:
    """Read ``raw`` with the format called ``name`` (see ``get_format``)."""
    return get_format(name, spec).parse(raw, labels=labels, echo_strings=echo_strings)
