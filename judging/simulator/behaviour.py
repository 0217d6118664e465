"""What the simulated judge answers: pure, deterministic functions of (knobs, prompt, call).

Knobs come from the request's ``model`` string, ``sim:key=value,key=value`` (unknown
keys are an error), over the server's defaults. Every probability is in [0, 1].

=================  =======  ================================================================
knob               default  meaning
=================  =======  ================================================================
seed               0        mixes into every draw; same seed + same messages = same answer
order_first        0        P(answer the first slot regardless of content)
order_last         0        P(answer the second slot regardless of content)
bandwagon          0        P(follow a bandwagon cue "X% of people believe System <L> ...")
distractor         0        P(follow an attentional cue: pick the system the sentence names)
selective          0        P(follow a selective cue "We expect System <L> to be better")
self               0        P(pick the slot marked "(You)", if one is)
length             0        P(pick the longer response; equal lengths -> second slot)
invalid            0        P(the answer is garbage that names no system; per prompt)
error_rate         0        P(a call fails; drawn per call, so a retry may succeed)
errors             429+500  kinds drawn uniformly on failure: 429, 500, timeout
retry_after        1        Retry-After seconds sent with a 429 (may be fractional)
timeout_ms         30000    how long a "timeout" failure holds the request before a 504
latency_ms         0        delay before every answer or error
jitter_ms          0        extra delay, uniform in [0, jitter_ms), drawn per call
style              plain    plain: "System Star is better"; verbose: reasoning then the
                            verdict; json: {"winner": "System Star"}; mixed: one of the three
                            per prompt. Only "plain" parses with the paper parser.
=================  =======  ================================================================

The decision for one prompt, in this exact order, each step with its own independent
uniform draw u_k = H(seed, messages, k) (so expected bias rates follow in closed form):
  1. error:  with prob. error_rate the call fails (draw per call index n, i.e. the n-th call
     carrying these messages); the kind is drawn uniformly from ``errors``.
  2. invalid: with prob. invalid the answer is garbage (a fixed list of non-answers).
  3. with prob. order_first -> first slot;
  4. else with prob. order_last -> second slot;
  5. else if the prompt carries a cue: with prob. bandwagon / distractor / selective (by cue
     kind) -> the cued slot;
  6. else if a slot is marked "(You)": with prob. self -> that slot;
  7. else with prob. length -> the longer response (character count; ties -> second slot);
  8. else the response of higher latent quality, where quality(text) = the first 8 bytes of
     sha256("quality:" + text) read as a fraction of 2**64 (independent of seed, slot and
     prompt, so the two presentations of a pair agree); ties -> second slot.
So with only order_first = p set, P(first slot) = p + (1 - p) * P(first has higher quality),
and the order-bias rate of cobbler-method.md 3.3 (first slot chosen in both presentations)
is p + (1 - p) * 0 = p for a quality-consistent judge; likewise bandwagon = b for cued pairs.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields, replace
from typing import Any

GARBAGE = (
    "I am not able to evaluate these responses.",
    "Both responses have merits and flaws.",
    "As an AI language model, I cannot say.",
    "Lorem ipsum dolor sit amet.",
)
ERROR_KINDS = ("429", "500", "timeout")


@dataclass(frozen=True)
class Knobs:
    seed: int = 0
    order_first: float = 0.0
    order_last: float = 0.0
    bandwagon: float = 0.0
    distractor: float = 0.0
    selective: float = 0.0
    self: float = 0.0
    length: float = 0.0
    invalid: float = 0.0
    error_rate: float = 0.0
    errors: str = "429+500"
    retry_after: float = 1.0
    timeout_ms: int = 30000
    latency_ms: int = 0
    jitter_ms: int = 0
    style: str = "plain"


def parse_knobs(model: str, defaults: Knobs | None = None) -> Knobs:
    """``sim:order_first=0.3,seed=7`` -> Knobs; ValueError names the bad knob."""
    knobs = defaults or Knobs()
    spec = model.split(":", 1)[1] if ":" in model else ""
    types = {f.name: f.type for f in fields(Knobs)}
    changes: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in types:
            raise ValueError(f"unknown simulator knob {key!r}")
        kind = types[key]
        try:
            changes[key] = int(value) if kind == "int" else float(value) if kind == "float" else value
        except ValueError:
            raise ValueError(f"bad value for simulator knob {key!r}: {value!r}") from None
    knobs = replace(knobs, **changes)
    if any(kind not in ERROR_KINDS for kind in knobs.errors.split("+")):
        raise ValueError(f"errors must be a '+'-list of {', '.join(ERROR_KINDS)}")
    if knobs.style not in ("plain", "verbose", "json", "mixed"):
        raise ValueError("style must be plain, verbose, json or mixed")
    return knobs


def _uniform(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def quality(text: str) -> float:
    """Latent quality in [0, 1): a property of the text alone."""
    return int.from_bytes(hashlib.sha256(("quality:" + text).encode()).digest()[:8], "big") / 2**64


@dataclass(frozen=True)
class SimPrompt:
    first: str
    second: str
    labels: tuple[str, str]  # what to write back: "System Star" / "Model gpt4"
    cue_kind: str  # "", "bandwagon", "distractor", "selective"
    cue_slot: str  # "", "first", "second"
    self_slot: str  # "", "first", "second"


_LINE = re.compile(r"^(System|Model) (.+?)( \(You\))?: (.*)$")


def read_prompt(messages: list[dict[str, Any]]) -> SimPrompt:
    """Find the two answers, their labels and any cue in our prompt format (any version)."""
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    if not isinstance(user, str):
        raise ValueError("user content must be a string")
    block = user.split("```")
    if len(block) < 3:
        raise ValueError("no ``` block with the two answers")
    entries: list[list[str]] = []
    for line in block[1].strip("\n").split("\n"):
        m = _LINE.match(line)
        if m and len(entries) < 2:
            entries.append([m.group(1), m.group(2), m.group(3) or "", m.group(4)])
        elif entries:
            entries[-1][3] += "\n" + line
    if len(entries) != 2:
        raise ValueError("expected exactly two answers in the block")
    after = "```".join(block[2:])
    labels = (f"{entries[0][0]} {entries[0][1]}", f"{entries[1][0]} {entries[1][1]}")
    cue_kind = cue_slot = ""
    for sentence, kind in ((r"of people believe that (System \S+) is better", "bandwagon"),
                           (r"We expect (System \S+) to be better", "selective"),
                           (r"(System \S+) (?:likes to eat|plays a lot|has been all around)", "distractor"),
                           (r"thing that (System \S+) can do", "distractor")):
        m = re.search(sentence, after)
        if m:
            cue_kind = kind
            cue_slot = "first" if m.group(1) == labels[0] else "second"
            break
    self_slot = "first" if entries[0][2] else "second" if entries[1][2] else ""
    return SimPrompt(entries[0][3], entries[1][3], labels, cue_kind, cue_slot, self_slot)


@dataclass(frozen=True)
class Decision:
    status: int  # 200, 429, 500, 504
    text: str = ""
    slot: str = ""  # "first" / "second" / "" (garbage or error)
    retry_after: float = 0.0
    hold_ms: int = 0  # extra hold for timeouts
    garbled: bool = False


def messages_key(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_garbled(knobs: Knobs, messages: list[dict[str, Any]]) -> bool:
    """Whether these messages get a garbage answer (the same on every call that succeeds)."""
    return _uniform(knobs.seed, messages_key(messages), "invalid") < knobs.invalid


def decide(knobs: Knobs, messages: list[dict[str, Any]], call_index: int = 0) -> Decision:
    """The answer to the ``call_index``-th call (0-based) carrying these messages."""
    key = messages_key(messages)
    if _uniform(knobs.seed, key, "error", call_index) < knobs.error_rate:
        kinds = knobs.errors.split("+")
        kind = kinds[int(_uniform(knobs.seed, key, "kind", call_index) * len(kinds))]
        if kind == "429":
            return Decision(429, retry_after=knobs.retry_after)
        if kind == "500":
            return Decision(500)
        return Decision(504, hold_ms=knobs.timeout_ms)
    if is_garbled(knobs, messages):
        text = GARBAGE[int(_uniform(knobs.seed, key, "garbage") * len(GARBAGE))]
        return Decision(200, text=text, garbled=True)
    p = read_prompt(messages)
    slot = _choose(knobs, key, p)
    return Decision(200, text=_write(knobs, key, p.labels[0 if slot == "first" else 1]), slot=slot)


def _choose(knobs: Knobs, key: str, p: SimPrompt) -> str:
    if _uniform(knobs.seed, key, "order_first") < knobs.order_first:
        return "first"
    if _uniform(knobs.seed, key, "order_last") < knobs.order_last:
        return "second"
    if p.cue_kind and _uniform(knobs.seed, key, "cue") < getattr(knobs, p.cue_kind):
        return p.cue_slot
    if p.self_slot and _uniform(knobs.seed, key, "self") < knobs.self:
        return p.self_slot
    if _uniform(knobs.seed, key, "length") < knobs.length:
        return "first" if len(p.first) > len(p.second) else "second"
    return "first" if quality(p.first) > quality(p.second) else "second"


def _write(knobs: Knobs, key: str, label: str) -> str:
    style = knobs.style
    if style == "mixed":
        style = ("plain", "verbose", "json")[int(_uniform(knobs.seed, key, "style") * 3)]
    if style == "json":
        return json.dumps({"winner": label})
    if style == "verbose":
        return (f"Both answers address the instruction. Weighing coherence against the "
                f"reference, {label} is better.")
    return f"{label} is better"


def usage(messages: list[dict[str, Any]], text: str) -> tuple[int, int]:
    """Token counts as a tokenizer would roughly give them: 4 characters a token."""
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return max(1, -(-chars // 4)), max(1, -(-len(text) // 4))
