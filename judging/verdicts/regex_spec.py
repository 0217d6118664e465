"""A researcher's own verdict format: a regular expression with one capture group and a label map.

A spec is a JSON object::

    {"pattern": "<preference>([^<]{1,40})</preference>",
     "labels": {"A much better": ["first", "strong"], "A better": ["first", "slight"],
                "tie": ["tie", null], "B better": ["second", "slight"],
                "B much better": ["second", "strong"]},
     "ignore_case": false}

``labels`` maps a captured text (whitespace around it stripped) to ``[slot, strength]``: slot
``first`` / ``second`` / ``tie``, strength ``strong`` / ``slight`` / null (a tie has none).
``ignore_case`` (optional, default false) matches the pattern and looks the captured text up
case-insensitively. ``^`` and ``$`` match at line starts and ends (a verdict sits on a line).
A captured text the map lacks is a label this format does not know: the output is invalid if
it decides.

Validation refuses, each with a message naming the problem (``VerdictSpecError``):
- a pattern longer than 500 characters, one that does not compile, or one without exactly one
  capture group; inline flags (``(?i)``, ``(?s)``, ``(?x:...)``): ``ignore_case`` is the one option;
- a map that is empty, has more than 50 labels, a label longer than 100 characters, a value that
  is not ``[slot, strength]`` as above, or two labels equal under ``ignore_case``;
- patterns that can take exponential or polynomial time on a long output (Python's ``re`` has
  no timeout, and judge outputs run to tens of thousands of characters):
    * a nested quantifier, ``(a+)+`` or ``(?:\\s*\\w+)*``;
    * a repeated alternation, ``(?:a|ab)*`` (Python already turns ``(?:a|b)`` into a class);
    * a backreference or a conditional group; a quantifier inside a lookaround;
    * a quantifier at the very start (``\\s*Verdict``): every position of the text would start
      a scan of its own; start with a literal;
    * two quantified items in a row that can match the same character (``\\s*(.+)``,
      ``\\s*([^<]{1,30})\\s*``): the matcher tries every split between them. Drop the
      ``\\s*`` around a capture: the captured text is stripped anyway;
    * an unbounded quantifier whose characters cover everything that must come before it
      (``\\[\\[([^\\]]+)`` on "[[[[...", ``Verdict:(.+)``): every earlier start rescans the same
      run; bound it (``{1,200}``) or exclude those characters;
    * more than 4 unbounded quantifiers (``*``, ``+``, ``{n,}``), more than 12 quantified items
      in all, or a bound above 1000.
  These are conservative: they refuse some harmless patterns, and they refuse the known
  sources of exponential backtracking (nesting, repeated alternation, backreferences) and the
  common polynomial ones (overlapping neighbours, rescans); the admitted corpus specs stay in
  milliseconds on 20,000-character adversarial outputs (tests/judging/test_verdict_formats.py),
  where an unchecked <preference>\\s*([^<]{1,30}?)\\s*</preference> took 50 seconds.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from annotations.vocabulary import JudgeSlot
from judging.verdicts.verdict import Verdict
from judging.vocabulary import TIE, Strength

# The stdlib's own regex parser (re._parser in 3.11+); private, so loaded by name and read as Any.
_sre: Any = importlib.import_module("re._parser")
_MAXREPEAT: int = _sre.MAXREPEAT

MAX_PATTERN = 500
MAX_LABELS = 50
MAX_LABEL = 100
MAX_UNBOUNDED = 4
MAX_QUANTIFIED = 12
MAX_BOUND = 1000
# Characters the overlap check tries (every character a judge's text plausibly repeats).
_SAMPLE = "".join(chr(c) for c in range(0x3000))


class VerdictSpecError(ValueError):
    """A regex verdict spec that cannot be used, and why."""


@dataclass(frozen=True)
class RegexSpec:
    pattern: re.Pattern[str]
    labels: Mapping[str, Verdict]
    ignore_case: bool

    def lookup(self, captured: str) -> Verdict | None:
        key = captured.strip()
        return self.labels.get(key.casefold() if self.ignore_case else key)


def load_spec(spec: Mapping[str, Any]) -> RegexSpec:
    """A validated spec; ``VerdictSpecError`` names the first problem found."""
    if not isinstance(spec, Mapping):
        raise VerdictSpecError("a regex verdict spec is an object with 'pattern' and 'labels'")
    unknown = set(spec) - {"pattern", "labels", "ignore_case"}
    if unknown:
        raise VerdictSpecError(f"unknown spec keys: {', '.join(sorted(map(str, unknown)))}")
    ignore_case = spec.get("ignore_case", False)
    if not isinstance(ignore_case, bool):
        raise VerdictSpecError("'ignore_case' must be true or false")
    pattern = _check_pattern(spec.get("pattern"), ignore_case)
    labels = _check_labels(spec.get("labels"), ignore_case)
    return RegexSpec(pattern, labels, ignore_case)


def _check_pattern(source: object, ignore_case: bool) -> re.Pattern[str]:
    if not isinstance(source, str) or not source:
        raise VerdictSpecError("'pattern' must be a non-empty string")
    if len(source) > MAX_PATTERN:
        raise VerdictSpecError(f"'pattern' is longer than {MAX_PATTERN} characters")
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        compiled = re.compile(source, flags)
        tree = _sre.parse(source, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        raise VerdictSpecError(f"'pattern' does not compile: {exc}") from None
    if compiled.flags != flags | re.UNICODE or any(
        _name(op) == "SUBPATTERN" and (av[1] or av[2]) for op, av in _walk(tree)
    ):
        raise VerdictSpecError("inline flags such as (?i) or (?s) are not allowed; use 'ignore_case'")
    if compiled.groups != 1:
        raise VerdictSpecError(f"'pattern' must have exactly one capture group, not {compiled.groups}")
    _check_backtracking(tree)
    return compiled


def _check_labels(labels: object, ignore_case: bool) -> dict[str, Verdict]:
    if not isinstance(labels, Mapping) or not labels:
        raise VerdictSpecError("'labels' must be a non-empty object mapping a captured text to [slot, strength]")
    if len(labels) > MAX_LABELS:
        raise VerdictSpecError(f"'labels' has more than {MAX_LABELS} entries")
    out: dict[str, Verdict] = {}
    for raw_key, value in labels.items():
        key = str(raw_key).strip()
        if not key or len(key) > MAX_LABEL:
            raise VerdictSpecError(f"a label must be 1 to {MAX_LABEL} characters: {raw_key!r}")
        if not (isinstance(value, list | tuple) and len(value) == 2):
            raise VerdictSpecError(f"label {key!r}: the value must be [slot, strength]")
        slot, strength = value
        if slot not in (JudgeSlot.FIRST, JudgeSlot.SECOND, TIE):
            raise VerdictSpecError(f"label {key!r}: slot must be 'first', 'second' or 'tie', not {slot!r}")
        if strength is not None and strength not in Strength.values:
            raise VerdictSpecError(f"label {key!r}: strength must be 'strong', 'slight' or null, not {strength!r}")
        if slot == TIE and strength is not None:
            raise VerdictSpecError(f"label {key!r}: a tie has no strength")
        lookup = key.casefold() if ignore_case else key
        if lookup in out:
            raise VerdictSpecError(f"label {key!r} appears twice" + (" (ignoring case)" if ignore_case else ""))
        out[lookup] = Verdict(slot, strength)
    return out


# --- backtracking ---------------------------------------------------------------------------------


def _name(op: Any) -> str:
    return str(op)


def _is_repeat(op: Any) -> bool:
    return _name(op) in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


def _walk(items: Any) -> Iterator[tuple[Any, Any]]:
    """Every (op, argument) of a parsed pattern, depth first."""
    for op, av in items:
        yield op, av
        for child in _children(op, av):
            yield from _walk(child)


def _children(op: Any, av: Any) -> list[Any]:
    name = _name(op)
    if _is_repeat(op):
        return [av[2]]
    if name == "SUBPATTERN":
        return [av[3]]
    if name == "BRANCH":
        return list(av[1])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [av[1]]
    if name == "ATOMIC_GROUP":
        return [av]
    if name == "GROUPREF_EXISTS":
        return [x for x in av[1:] if x is not None]
    return []


def _check_backtracking(tree: Any) -> None:
    unbounded = quantified = 0
    for op, av in _walk(tree):
        name = _name(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_LOC_IGNORE", "GROUPREF_UNI_IGNORE"):
            raise VerdictSpecError("backreferences and conditional groups are not allowed")
        if name in ("ASSERT", "ASSERT_NOT") and any(_is_repeat(o) for o, _ in _walk(av[1])):
            raise VerdictSpecError("a quantifier inside a lookaround is not allowed (it rescans the text)")
        if _is_repeat(op):
            low, high, body = av
            quantified += 1
            if high == _MAXREPEAT:
                unbounded += 1
            elif high > MAX_BOUND:
                raise VerdictSpecError(f"a repeat bound above {MAX_BOUND} is not allowed")
            if high > 1 and any(_is_repeat(o) and a[1] > 1 for o, a in _walk(body)):
                raise VerdictSpecError(
                    "nested quantifiers such as (a+)+ can take exponential time; quantify the inner item only"
                )
            if high > 1 and any(_name(o) == "BRANCH" for o, _ in _walk(body)):
                raise VerdictSpecError(
                    "a repeated alternation such as (a|ab)* can take exponential time; use a character class"
                )
    if unbounded > MAX_UNBOUNDED:
        raise VerdictSpecError(f"more than {MAX_UNBOUNDED} unbounded quantifiers (*, +, {{n,}})")
    if quantified > MAX_QUANTIFIED:
        raise VerdictSpecError(f"more than {MAX_QUANTIFIED} quantified items")
    atoms = [a for a in _atoms(tree) if isinstance(a, _Atom)]
    if atoms and atoms[0].repeated:
        raise VerdictSpecError("the pattern starts with a quantifier; start it with a literal (e.g. 'Verdict:')")
    _check_adjacent(atoms)
    _check_rescans(atoms)


@dataclass(frozen=True)
class _Atom:
    """One item of the flattened pattern: the characters it can match, and whether it repeats."""

    chars: frozenset[str] | None  # None: cannot tell (a group of several items): treated as anything
    repeated: bool  # quantified with an upper bound above 1
    optional: bool = False  # may match nothing
    unbounded: bool = False


class _ZeroWidth:
    pass


_ZERO_WIDTH = _ZeroWidth()


def _atoms(items: Any) -> Iterator[_Atom | _ZeroWidth]:
    """The pattern flattened: groups opened up, alternations and lookarounds as single items."""
    for op, av in items:
        name = _name(op)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            yield _ZERO_WIDTH
        elif name == "SUBPATTERN":
            yield from _atoms(av[3])
        elif name == "ATOMIC_GROUP":
            yield from _atoms(av)
        elif _is_repeat(op):
            low, high, body = av
            yield _Atom(_chars_of(body), high > 1, low == 0, high == _MAXREPEAT)
        elif name == "BRANCH":
            yield _Atom(None, False)
        else:
            yield _Atom(_chars_of([(op, av)]), False)


def _chars_of(items: Any) -> frozenset[str] | None:
    """The characters a single-character item matches (over ``_SAMPLE``), None otherwise."""
    if len(items) != 1:
        return None
    op, av = items[0]
    name = _name(op)
    if name == "SUBPATTERN":
        return _chars_of(av[3])
    if name == "LITERAL":
        return frozenset(chr(av))
    if name == "NOT_LITERAL":
        return frozenset(c for c in _SAMPLE if c != chr(av))
    if name == "ANY":
        return frozenset(c for c in _SAMPLE if c != "\n")
    if name in ("IN", "CATEGORY"):
        probe = _class_probe(op, av)
        return frozenset(c for c in _SAMPLE if probe.fullmatch(c))
    return None


def _class_probe(op: Any, av: Any) -> re.Pattern[str]:
    """A compiled one-character pattern equal to a parsed class (rebuilt by the stdlib compiler)."""
    state = _sre.State()
    sub = _sre.SubPattern(state, [(op, av)])
    compiler: Any = importlib.import_module("re._compiler")
    compiled: re.Pattern[str] = compiler.compile(sub, 0)
    return compiled


def _overlap(a: _Atom, b: _Atom) -> bool:
    if a.chars is None or b.chars is None:
        return True
    return bool(a.chars & b.chars)


def _check_adjacent(atoms: list[_Atom]) -> None:
    """Two quantified items in a row (zero-width items between them ignored) must not overlap."""
    previous: _Atom | None = None
    for atom in atoms:
        if previous is not None and previous.repeated and atom.repeated and _overlap(previous, atom):
            raise VerdictSpecError(
                "two quantified items in a row can match the same characters (as in \\s*(.+) or "
                "\\s*([^<]+)\\s*), which makes matching slow on long outputs; drop the \\s* around the "
                "capture (the captured text is stripped) or make the classes disjoint"
            )
        previous = atom


def _check_rescans(atoms: list[_Atom]) -> None:
    """An unbounded item must not be able to run over every mandatory item before it."""
    for index, atom in enumerate(atoms):
        if not atom.unbounded:
            continue
        before = [a for a in atoms[:index] if not a.optional and a.chars is not None]
        if all(_overlap(a, atom) for a in before):
            raise VerdictSpecError(
                "an unbounded quantifier can run over the part of the pattern before it (as [^\\]]+ after "
                "\\[\\[ or .+ after 'Verdict:'), so every earlier start rescans the same text; bound it "
                "(e.g. {1,200}) or leave those characters out of its class"
            )
