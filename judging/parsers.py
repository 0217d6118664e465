"""Raw judge text -> the slot it chose ("first" / "second") or None (invalid).

Two parsers:
- ``paper``: cobbler-method.md 3.1 exactly (delete echoed prompt pieces, cut after the
  first "Response:", strip, first 30 characters, first case-insensitive label match).
- ``robust`` (default): reads verdicts wherever they are. It prefers the LAST explicit
  verdict ("... so System Square is better"), understands JSON, markdown and bare
  labels, and returns None whenever the answer is a tie, a refusal or ambiguous.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

Choice = str | None  # "first" | "second" | None
PARSERS = ("robust", "paper")


def parse(name: str, raw: str, *, labels: Sequence[str], echo_strings: Sequence[str] = ()) -> Choice:
    """Dispatch by parser name; ValueError for an unknown one."""
    try:
        fn: Callable[..., Choice] = {"robust": parse_robust, "paper": parse_paper}[name]
    except KeyError:
        raise ValueError(f"unknown parser {name!r}; use one of {', '.join(PARSERS)}") from None
    return fn(raw, labels=labels, echo_strings=echo_strings)


def parse_paper(raw: str, *, labels: Sequence[str], echo_strings: Sequence[str] = ()) -> Choice:
    text = raw
    for piece in echo_strings:
        if piece:
            text = text.replace(piece, "")
    if "Response:" in text:
        text = text.split("Response:", 1)[1]
    window = text.strip()[:30]
    pattern = "|".join(re.escape(label) for label in labels)
    match = re.search(pattern, window, flags=re.IGNORECASE)
    if not match:
        return None
    found = match.group(0).lower()
    return "first" if found == labels[0].lower() else "second"


# --- robust -----------------------------------------------------------------------

_TIE = re.compile(
    r"\b(tie|tied|equally (?:good|bad|coherent)|both (?:are|responses are) equally|"
    r"neither|cannot (?:decide|determine)|can't (?:decide|determine)|no preference)\b",
    re.IGNORECASE,
)


def _label_alternatives(labels: Sequence[str]) -> list[tuple[str, str]]:
    """(regex, slot) per label: "System Star" also matches "Star"; "Model gpt4" also "gpt4"."""
    out = []
    for label, slot in zip(labels, ("first", "second"), strict=True):
        prefix, _, bare = label.partition(" ")
        bare_rx = re.escape(bare) if bare else re.escape(label)
        rx = rf"(?:(?:{re.escape(prefix)})\s*)?{bare_rx}(?:\s*\(you\))?" if bare else bare_rx
        out.append((rx, slot))
    return out


def _clean(raw: str) -> str:
    text = re.sub(r"[*_`#>]+", " ", raw)  # markdown emphasis, code fences, headers, quotes
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"[ \t]+", " ", text).strip()


def _from_json(raw: str, alts: list[tuple[str, str]]) -> Choice:
    match = re.search(r"\{.*\}", raw, flags=re.DOTALL)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("winner", "better", "verdict", "choice", "answer", "preferred", "best", "result"):
        value = data.get(key)
        if isinstance(value, str):
            slots = {slot for rx, slot in alts if re.fullmatch(rf"\s*{rx}\s*(?:is better)?\.?\s*",
                                                               value, re.IGNORECASE)}
            if len(slots) == 1:
                return slots.pop()
    return None


def _verdicts(text: str, alts: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """Every explicit verdict as (position, slot); negative verdicts point to the other slot."""
    other = {"first": "second", "second": "first"}
    found: list[tuple[int, str]] = []
    for rx, slot in alts:
        positive = [
            rf"\b{rx}\s+(?:is|was|seems|appears to be)\s+(?:clearly\s+|slightly\s+|much\s+)?(?:the\s+)?better",
            rf"\b{rx}\s+is\s+(?:more coherent|preferred|the winner|superior)",
            rf"\b(?:better|best|preferred|winning|stronger)\s+(?:response|answer|one|system|model)\s*(?:is\s*:?|:)\s*(?:from\s+|that of\s+)?{rx}\b",
            rf"\b(?:verdict|winner|answer|choice|final answer|preference|decision)\s*(?:is)?\s*[:=\-]?\s*\"?{rx}\b",
            rf"\b(?:i\s+(?:would\s+)?(?:prefer|choose|pick|select))\s+{rx}\b",
            rf"\b{rx}\s+wins\b",
        ]
        negative = [rf"\b{rx}\s+(?:is|was)\s+(?:clearly\s+|slightly\s+|much\s+)?(?:the\s+)?(?:worse|less coherent)"]
        for pat in positive:
            found += [(m.start(), slot) for m in re.finditer(pat, text, re.IGNORECASE)]
        for pat in negative:
            found += [(m.start(), other[slot]) for m in re.finditer(pat, text, re.IGNORECASE)]
    return sorted(found)


def parse_robust(raw: str, *, labels: Sequence[str], echo_strings: Sequence[str] = ()) -> Choice:
    alts = _label_alternatives(labels)
    choice = _from_json(raw, alts)
    if choice:
        return choice
    text = _clean(raw)
    if "Response:" in text:  # completion judges echo the prompt; judge only the answer
        text = text.rsplit("Response:", 1)[1]
    # The answer-format echo "System _ is better" names nobody; drop it.
    text = re.sub(r"\b(?:system|model)\s+_\s+is better", " ", text, flags=re.IGNORECASE)
    verdicts = _verdicts(text, alts)
    if verdicts:
        return verdicts[-1][1]
    if _TIE.search(text):
        return None
    # No verdict sentence: accept a bare label ("Star", "System Square.") and nothing longer.
    for rx, slot in alts:
        if re.fullmatch(rf"\s*(?:answer:\s*)?{rx}\s*[.!]?\s*", text, re.IGNORECASE):
            return slot
    return None
