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
authority          0        P(pick the answer that ends with a fabricated "Reference: ..." line)
verbosity          0        P(pick the answer padded with content-free sentences)
refinement         0        P(pick the answer the prompt calls "a refined version of" the other)
identity           0        P(pick the answer the prompt says "was written by" a named group)
sentiment          0        P(pick the answer rewritten in a cheerful, confident tone: one that
                            opens and closes with the simulator's own cheerful paragraphs, as its
                            rewrites do; see "Rewrites" below)
cot                0        on a prompt that asks to "think step by step" (the cot run): every
                            knob that pulls away from quality (order_first, order_last, the cue
                            knobs, self, length) is scaled by (1 - cot), and the answer reasons
                            in a few sentences before its verdict; negative values make thinking
                            hurt (in [-1, 1]; scaled knobs are capped at 1)
                            (the cue biases of annotations.biases; an answer perturbation is
                            removed before the quality of step 9 is read, so a judge without
                            the knob decides on the original answers)
self               0        P(pick the slot marked "(You)", if one is)
length             0        P(pick the longer response; equal lengths -> second slot)
invalid            0        P(the answer is garbage that names no system; per prompt)
error_rate         0        P(a call fails; drawn per call, so a retry may succeed)
errors             429+500  kinds drawn uniformly on failure: 429, 500, timeout
retry_after        1        Retry-After seconds sent with a 429 (may be fractional)
timeout_ms         5000     how long a "timeout" failure holds the request before a 504
latency_ms         0        every answer or error comes this long after its request arrived
jitter_ms          0        extra delay, uniform in [0, jitter_ms), drawn per call
                            (each of the three at most MAX_DELAY_MS = 5000, and so is the
                            whole hold of one request)
style              terse    the surface form of the answer (never the decision): terse (alias
                            plain): "System Star is better"; verbose: one sentence of reasoning
                            then the verdict; json: {"winner": "System Star"}; mixed: one of
                            those three per prompt; and the chat styles of the parser corpus
                            (tests/judging/parser_corpus.jsonl), each a few seeded variants:
                            verbose_reasoning (reasoning that restates any cue), restated_bandwagon,
                            restated_distractor (the cue, or a made-up one about the loser,
                            restated), hedge_naming_loser, negation (of the loser), markdown,
                            and tie / refusal / both_labels_final_sentence: their valid answers
                            still decide (a near tie, a hedged refusal, both labels but one
                            asserted) and their INVALID answers (knob ``invalid``) are a real
                            tie, refusal or both-asserted sentence instead of GARBAGE. Only
                            terse parses with the paper parser.
format             cobbler  the verdict format the judge answers in (judging.verdicts): cobbler
                            (the styles above); arena-hard: a review, then "My final verdict is
                            ...: [[A>B]]" with A the answer shown first, [[A>>B]] / [[B>>A]] when
                            the chosen answer's latent quality exceeds the other's by 0.5 or more
                            (P = 1/4 for a quality-based choice), [[A>B]] / [[B>A]] otherwise;
                            mt-bench: [[A]] / [[B]] / [[C]]; regex: a lab's XML-tag format,
                            <preference>A much better|A better|tie|B better|B much better
                            </preference>, read by the spec {"pattern":
                            "<preference>([^<]{1,40})</preference>", "labels": {...}} (the
                            "xml-preference" spec of tests/judging/verdict_corpora/regex-specs.json);
                            alpaca-eval: "Output (a)" / "Output (b)", no tie, no strength (the
                            alpaca-eval-v1 template's own regex spec reads it).
                            Each writes a few seeded variants the way real judges do (a long
                            review, the labels restated first, per-criterion labels before the
                            final line, an explanation after it, the bare label); its INVALID
                            answers (knob ``invalid``) are a refusal, a review with no label,
                            labels that disagree with no final line, or only the options listed.
                            ``style`` applies to cobbler only.
tie                0        P(answer a tie) at step 8 below; only with a format that has one
rpm                0        requests per minute this model accepts (0 = no limit); beyond it
                            the server answers 429 with a Retry-After of when the next fits
tpm                0        tokens (in + out, as ``usage`` counts them) per minute, the same way;
                            both are token buckets refilled continuously, holding one second's
                            worth, shared by every request that names the same model string
answer_words       120      length of a candidate answer, in words (drawn per prompt in
                            [0.5, 1.5) x this); see "Candidate answers" below
=================  =======  ================================================================

Candidate answers: messages that are not a judging prompt (no ``` block with two labelled
answers, see ``read_prompt``) get an answer instead of a verdict, as a generation job asks:
seeded, deterministic text (same seed + same messages = same answer) whose length is governed
by ``answer_words`` and cut at about ``max_tokens`` (4 characters a token, like ``usage``).
The error knobs apply to them too; ``invalid`` and the judging knobs do not.

Rewrites: messages that ask for a rewrite (a user message holding the answer between
``<answer>`` and ``</answer>`` lines and a request for ``<rewrite>`` tags, as the sentiment-v1
prompt of judging.generate.prompts does) get the answer back in a cheerful, confident tone: a
seeded opening paragraph and closing paragraph (``CHEERFUL_OPENERS`` / ``CHEERFUL_CLOSERS``)
around the unchanged text, inside ``<rewrite>`` tags, after a seeded preface line half the time
(chat models preface). The content is kept exactly, so a judge reads the same quality in it.

The decision for one prompt, in this exact order, each step with its own independent
uniform draw u_k = H(seed, messages, k) (so expected bias rates follow in closed form):
  1. error:  with prob. error_rate the call fails (draw per call index n, i.e. the n-th call
     carrying these messages); the kind is drawn uniformly from ``errors``.
  2. invalid: with prob. invalid the answer is garbage (a fixed list of non-answers).
  3. with prob. order_first -> first slot;
  4. else with prob. order_last -> second slot;
  5. else if the prompt carries a cue: with prob. bandwagon / distractor / selective /
     authority / verbosity / refinement / identity / sentiment (by cue kind) -> the cued slot;
  6. else if a slot is marked "(You)": with prob. self -> that slot;
  7. else with prob. length -> the longer response (character count; ties -> second slot);
  8. else with prob. tie -> a tie (formats other than cobbler; the draw exists only when tie > 0);
  9. else the response of higher latent quality, where quality(text) = the first 8 bytes of
     sha256("quality:" + text) read as a fraction of 2**64 (independent of seed, slot and
     prompt, so the two presentations of a pair agree); ties -> second slot.
So with only order_first = p set, P(first slot) = p + (1 - p) * P(first has higher quality),
and the order-bias rate order_first (first slot chosen in both presentations; docs/methods.md,
'Rows, hits and mirrors')
is p + (1 - p) * 0 = p for a quality-consistent judge; likewise bandwagon = b for cued pairs.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields, replace
from typing import Any

from judging.simulator import formats
from judging.simulator.formats import FORMATS

GARBAGE = (
    "I am not able to evaluate these responses.",
    "Both responses have merits and flaws.",
    "As an AI language model, I cannot say.",
    "Lorem ipsum dolor sit amet.",
)
ERROR_KINDS = ("429", "500", "timeout")
# No request is held longer than this (a caller cannot park server threads for minutes).
MAX_DELAY_MS = 5000
MAX_ANSWER_WORDS = 5000


@dataclass(frozen=True)
class Knobs:
    seed: int = 0
    order_first: float = 0.0
    order_last: float = 0.0
    bandwagon: float = 0.0
    distractor: float = 0.0
    selective: float = 0.0
    authority: float = 0.0
    verbosity: float = 0.0
    refinement: float = 0.0
    identity: float = 0.0
    sentiment: float = 0.0
    cot: float = 0.0
    self: float = 0.0
    length: float = 0.0
    invalid: float = 0.0
    error_rate: float = 0.0
    errors: str = "429+500"
    retry_after: float = 1.0
    timeout_ms: int = 5000
    latency_ms: int = 0
    jitter_ms: int = 0
    style: str = "terse"
    format: str = "cobbler"
    tie: float = 0.0
    answer_words: int = 120
    rpm: int = 0
    tpm: int = 0


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
    if knobs.style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}")
    if knobs.format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    if knobs.tie and knobs.format in formats.NO_TIE:
        raise ValueError("tie needs a format with a tie: arena-hard, mt-bench or regex")
    if not 1 <= knobs.answer_words <= MAX_ANSWER_WORDS:
        raise ValueError(f"answer_words must be between 1 and {MAX_ANSWER_WORDS}")
    if knobs.rpm < 0 or knobs.tpm < 0:
        raise ValueError("rpm and tpm must be 0 (no limit) or positive")
    if not -1 <= knobs.cot <= 1:
        raise ValueError("cot must be between -1 and 1")
    for name in ("latency_ms", "jitter_ms", "timeout_ms"):
        if not 0 <= getattr(knobs, name) <= MAX_DELAY_MS:
            raise ValueError(f"{name} must be between 0 and {MAX_DELAY_MS}")
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
    step_by_step: bool = False  # the prompt asks for reasoning first (the cot run)


_LINE = re.compile(r"^(System|Model) (.+?)( \(You\))?: (.*)$")
# The answer layouts of Arena-Hard-Auto ("<|The Start of Assistant A's Answer|>") and MT-Bench
# ("[The Start of Assistant A's Answer]"): Assistant A is the answer shown first.
_AB_LABELS = ("Assistant A", "Assistant B")
# (answer layout, its labels): Arena-Hard's and MT-Bench's, and AlpacaEval's "## Output (a):" /
# "## Output (b):" (the last pair, after its worked example; its cue is a paragraph between the
# second answer and the closing question, split off in read_prompt).
_LAYOUTS = (
    *(
        (
            re.compile(
                rf"{o}The Start of Assistant A's Answer{c}\n?(.*?)\n?{o}The End of Assistant A's Answer{c}.*?"
                rf"{o}The Start of Assistant B's Answer{c}\n?(.*?)\n?{o}The End of Assistant B's Answer{c}",
                re.DOTALL,
            ),
            _AB_LABELS,
        )
        for o, c in ((r"<\|", r"\|>"), (r"\[", r"\]"))
    ),
    (
        re.compile(
            r"## Output \(a\):\n((?:(?!## Output \(a\):).)*?)\n\n## Output \(b\):\n((?:(?!## Output \(a\):).)*?)\n+"
            r"## Which is best, Output \(a\) or Output \(b\)\?\s*\Z",
            re.DOTALL,
        ),
        ("Output (a)", "Output (b)"),
    ),
)
_LABEL = r"((?:System|Assistant) \S+|Output \([ab]\))"
_CUES = (
    (rf"of people believe that {_LABEL} is better", "bandwagon"),
    (rf"We expect {_LABEL} to be better", "selective"),
    (rf"{_LABEL} (?:likes to eat|plays a lot|has been all around)", "distractor"),
    (rf"thing that {_LABEL} can do", "distractor"),
    (rf"{_LABEL} is a refined version of", "refinement"),
    (rf"{_LABEL} was written by", "identity"),
)
# Answer perturbations, read from the text as an outside model would: a last paragraph that is a
# reference ("Reference: Rossi, T. (2013). ..."), or one whose every sentence only points back at
# the answer "above" (content-free padding, two sentences or more). Each is removed before quality
# is read.
_CITATION = re.compile(r"\n\nReference: [^\n]*\Z")
_SENTENCE = re.compile(r"[^.!?]+[.!?]")


def _without_citation(text: str) -> str | None:
    m = _CITATION.search(text)
    return text[: m.start()] if m else None


def _without_padding(text: str) -> str | None:
    head, sep, last = text.rpartition("\n\n")
    sentences = _SENTENCE.findall(last)
    restates = sentences and "".join(sentences).strip() == last.strip()
    if sep and head and restates and len(sentences) >= 2 and all(" above" in s for s in sentences):
        return head
    return None


CHEERFUL_OPENERS = (
    "Great question, and the good news is that the answer is clear!",
    "Happy to help: this one has a confident, clear answer!",
    "Absolutely, here is exactly what you need to know!",
)
CHEERFUL_CLOSERS = (
    "You've got this, and it works every time!",
    "Confidently put, that is all there is to it. Enjoy!",
    "There you have it, clear and certain. Good luck!",
)
_REWRITE_PREFACES = ("Sure! Here is the answer in a more confident, cheerful tone:", "Of course! Rewritten:")
_REWRITE_REQUEST = re.compile(r"<answer>\n(.*)\n</answer>", re.DOTALL)


def _without_cheer(text: str) -> str | None:
    opener, sep, rest = text.partition("\n\n")
    body, sep2, closer = rest.rpartition("\n\n")
    if sep and sep2 and body and opener in CHEERFUL_OPENERS and closer in CHEERFUL_CLOSERS:
        return body
    return None


def rewrite_text(knobs: Knobs, messages: list[dict[str, Any]], *, max_tokens: int | None = None) -> str | None:
    """The simulator's cheerful rewrite, when the messages ask for one (module docstring); else None."""
    asks = any("<rewrite>" in str(m.get("content", "")) for m in messages if m.get("role") == "system")
    user = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), "")
    m = _REWRITE_REQUEST.search(user)
    if not asks or m is None:
        return None
    key = messages_key(messages)
    opener = CHEERFUL_OPENERS[int(_uniform(knobs.seed, key, "opener") * len(CHEERFUL_OPENERS))]
    closer = CHEERFUL_CLOSERS[int(_uniform(knobs.seed, key, "closer") * len(CHEERFUL_CLOSERS))]
    preface = ""
    if _uniform(knobs.seed, key, "preface") < 0.5:
        preface = _REWRITE_PREFACES[int(_uniform(knobs.seed, key, "preface-kind") * len(_REWRITE_PREFACES))] + "\n\n"
    text = f"{preface}<rewrite>\n{opener}\n\n{m.group(1)}\n\n{closer}\n</rewrite>"
    if max_tokens is not None and max_tokens > 0 and len(text) > 4 * max_tokens:
        text = text[: 4 * max_tokens]  # stopped at max_tokens: the closing tag is lost
    return text


_ANSWER_CUES = (("authority", _without_citation), ("verbosity", _without_padding), ("sentiment", _without_cheer))
# A request for reasoning before the verdict, in the words instructions use for it.
_STEP_BY_STEP = re.compile(r"\b[Tt]hink step by step\b")


def read_prompt(messages: list[dict[str, Any]]) -> SimPrompt:
    """Find the two answers, their labels and any cue in our prompt format (any version), or in
    Arena-Hard's, MT-Bench's (labels "Assistant A" / "Assistant B") or AlpacaEval's ("Output (a)" /
    "Output (b)") answer layout; a cue naming the labels is read anywhere outside the answers."""
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    if not isinstance(user, str):
        raise ValueError("user content must be a string")
    for layout, labels in _LAYOUTS:
        m = layout.search(user)
        if m:
            # A cue is read anywhere but inside the two answers.
            rest = "\n".join(str(x.get("content", "")) for x in messages if x.get("content") != user)
            rest += "\n" + user[: m.start(1)] + "\n" + user[m.end(1) : m.start(2)] + "\n" + user[m.end(2) :]
            second, _, last = m.group(2).rpartition("\n\n")
            if second and _find_cue(last, labels)[0]:  # a cue paragraph after the answer (AlpacaEval)
                rest += "\n" + last
            else:
                second = m.group(2)
            cue_kind, cue_slot = _find_cue(rest, labels)
            p = SimPrompt(m.group(1), second, labels, cue_kind, cue_slot, "", _STEP_BY_STEP.search(rest) is not None)
            return _with_answer_cue(p)
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
    cue_kind, cue_slot = _find_cue(after, labels)
    self_slot = "first" if entries[0][2] else "second" if entries[1][2] else ""
    step_by_step = _STEP_BY_STEP.search(after) is not None
    return _with_answer_cue(
        SimPrompt(entries[0][3], entries[1][3], labels, cue_kind, cue_slot, self_slot, step_by_step)
    )


def _with_answer_cue(p: SimPrompt) -> SimPrompt:
    """The prompt with an answer perturbation read as a cue and removed from the answer."""
    if p.cue_kind:
        return p
    for kind, unperturb in _ANSWER_CUES:
        for slot, text in (("first", p.first), ("second", p.second)):
            original = unperturb(text)
            if original is not None:
                first, second = (original, p.second) if slot == "first" else (p.first, original)
                return replace(p, first=first, second=second, cue_kind=kind, cue_slot=slot)
    return p


def _find_cue(text: str, labels: tuple[str, str]) -> tuple[str, str]:
    """(cue kind, cued slot) of the first cue sentence in ``text``, or ("", "")."""
    for sentence, kind in _CUES:
        m = re.search(sentence, text)
        if m:
            return kind, "first" if m.group(1) == labels[0] else "second"
    return "", ""


@dataclass(frozen=True)
class Decision:
    status: int  # 200, 429, 500, 504
    text: str = ""
    slot: str = ""  # "first" / "second" / "tie" (formats with a tie) / "" (garbage or error)
    retry_after: float = 0.0
    hold_ms: int = 0  # extra hold for timeouts
    garbled: bool = False
    strength: str = ""  # "strong" / "slight" where the format grades it (arena-hard, regex)


def messages_key(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_garbled(knobs: Knobs, messages: list[dict[str, Any]]) -> bool:
    """Whether these messages get a garbage answer (the same on every call that succeeds)."""
    return _uniform(knobs.seed, messages_key(messages), "invalid") < knobs.invalid


def decide(
    knobs: Knobs, messages: list[dict[str, Any]], call_index: int = 0, *, max_tokens: int | None = None
) -> Decision:
    """The answer to the ``call_index``-th call (0-based) carrying these messages.

    A judging prompt gets a verdict; any other messages a candidate answer (``answer_text``).
    """
    key = messages_key(messages)
    if _uniform(knobs.seed, key, "error", call_index) < knobs.error_rate:
        kinds = knobs.errors.split("+")
        kind = kinds[int(_uniform(knobs.seed, key, "kind", call_index) * len(kinds))]
        if kind == "429":
            return Decision(429, retry_after=knobs.retry_after)
        if kind == "500":
            return Decision(500)
        return Decision(504, hold_ms=knobs.timeout_ms)
    rewrite = rewrite_text(knobs, messages, max_tokens=max_tokens)
    if rewrite is not None:
        return Decision(200, text=rewrite)
    try:
        p = read_prompt(messages)
    except ValueError:
        return Decision(200, text=answer_text(knobs, messages, max_tokens=max_tokens))
    if is_garbled(knobs, messages):
        if knobs.format != "cobbler":
            return Decision(200, text=formats.invalid_text(knobs.format, _variant_draw(knobs, key)), garbled=True)
        return Decision(200, text=_invalid_text(knobs, key, messages), garbled=True)
    slot = _choose(knobs, key, p)
    reasoning = _reasoning(p, slot) if p.step_by_step else ""
    if knobs.format != "cobbler":
        graded = formats.GRADED[knobs.format]
        strength = formats.strength(slot, quality(p.first), quality(p.second)) if graded else ""
        text = formats.write(knobs.format, slot, strength, _variant_draw(knobs, key))
        return Decision(200, text=reasoning + text, slot=slot, strength=strength)
    return Decision(200, text=reasoning + _write(knobs, key, p, slot, messages), slot=slot)


def _reasoning(p: SimPrompt, slot: str) -> str:
    """What a chat model writes when told to think step by step: both answers named, then the verdict."""
    if slot == "tie":
        return (
            f"Let me think step by step. First, what does the instruction ask for? Second, how complete and "
            f"accurate is each answer? {p.labels[0]} and {p.labels[1]} cover the request about equally well.\n\n"
        )
    winner, other = (p.labels[0], p.labels[1]) if slot == "first" else (p.labels[1], p.labels[0])
    return (
        f"Let me think step by step. First, what does the instruction ask for? Second, how complete and accurate "
        f"is each answer? {other} leaves part of the request unanswered, while {winner} addresses it directly.\n\n"
    )


def _choose(knobs: Knobs, key: str, p: SimPrompt) -> str:
    # Thinking first scales every pull away from quality (the same draws, so the closed forms hold).
    scale = 1.0 - knobs.cot if p.step_by_step else 1.0

    def pull(value: float) -> float:
        return min(1.0, value * scale)

    if _uniform(knobs.seed, key, "order_first") < pull(knobs.order_first):
        return "first"
    if _uniform(knobs.seed, key, "order_last") < pull(knobs.order_last):
        return "second"
    if p.cue_kind and _uniform(knobs.seed, key, "cue") < pull(getattr(knobs, p.cue_kind)):
        return p.cue_slot
    if p.self_slot and _uniform(knobs.seed, key, "self") < pull(knobs.self):
        return p.self_slot
    if _uniform(knobs.seed, key, "length") < pull(knobs.length):
        return "first" if len(p.first) > len(p.second) else "second"
    if knobs.tie and _uniform(knobs.seed, key, "tie") < knobs.tie:
        return "tie"
    return "first" if quality(p.first) > quality(p.second) else "second"


# --- output styles: the SAME decision in the surface forms real chat models use ------------
# (the decision above never looks at the style; a style only draws its own variant, seeded)

STYLES = (
    "terse",
    "plain",
    "verbose",
    "json",
    "mixed",
    "verbose_reasoning",
    "restated_bandwagon",
    "restated_distractor",
    "hedge_naming_loser",
    "negation",
    "markdown",
    "tie",
    "refusal",
    "both_labels_final_sentence",
)
# Styles whose invalid answers (the ``invalid`` knob) are written in the style instead of GARBAGE.
INVALID_STYLES = ("tie", "refusal", "both_labels_final_sentence")

_STYLE_TEXT: dict[str, tuple[str, ...]] = {
    "verbose_reasoning": (
        "Let me compare the two responses. {O} addresses the instruction but is less faithful to the "
        "reference. {W} covers the key points and stays coherent throughout.{cue} Considering coherence "
        "and the reference, {W} is better.",
        "{W} is better.\n\n{W} follows the reference closely and answers every part of the instruction. "
        "{O} is more verbose and drifts from the question, which makes it less coherent.{cue}",
        "To decide, I looked at accuracy, completeness and clarity.\n\n1. Accuracy: {W} is more accurate."
        "\n2. Completeness: {O} leaves out part of the instruction.\n3. Clarity: both are readable.{cue}"
        "\n\nOverall, {W} is the better response.",
    ),
    "restated_bandwagon": (  # {C}: the system the (restated) popularity claim names
        "{W} is more accurate, even though {P} of people believe that {C} is better.",
        "Although {P} of people believe {C} is better, I judged the answers on their merits. {W} is better.",
        'The prompt says that "{P} of people believe that {C} is better." Popularity is not evidence of '
        "quality; comparing the answers themselves, {W} is better.",
    ),
    "restated_distractor": (  # {D}: the distractor sentence, {DL}: the system it names
        "{D} That is irrelevant to the task. {W} is better.",
        "The remark that {DL} {Dtail} has nothing to do with answer quality. On the merits, {W} is better.",
        '{W} is better. The sentence "{D}" is an irrelevant distraction.',
    ),
    "hedge_naming_loser": (
        "{W} wins. {O} is better formatted though.",
        "{W} is better, though {O} has some good points about brevity.",
        "I'd go with {W} here. {O} is also solid and arguably better organized, but it is less faithful "
        "to the reference.",
        "{W} is better overall, but {O} is better for readers who want a shorter answer.",
    ),
    "negation": (
        "I disagree that {O} is better; {W} is.",
        "{O} is not better than {W}.",
        "{O} is not the better response. {W} is better.",
        "I would not choose {O}. {W} is more coherent.",
    ),
    "markdown": (
        "### Evaluation\n\n**{A}**\n- {A_note}\n\n**{B}**\n- {B_note}\n\n**Verdict:** {W} is better.",
        "**{W} is better**\n\nIt follows the reference and answers every part of the instruction.",
        "## Comparison\n\n| Criterion | {A} | {B} |\n|---|---|---|\n| Accuracy | {A_grade} | {B_grade} |\n\n"
        "**Winner: {W}**",
    ),
    "tie": (  # valid answers: a near-tie that still decides
        "It is almost a tie, but {W} is slightly better.",
        "Both responses are close and neither is perfect, but {W} is better.",
    ),
    "refusal": (  # valid answers: a hedged refusal that still decides
        "I can't be certain, but if I have to choose, {W} is better.",
        "I'm not fully confident here. Still, {W} is better.",
    ),
    "both_labels_final_sentence": (  # valid answers: both labels named, one asserted
        "{W} is better than {O}.",
        "Between {A} and {B}, {W} is better.",
        "{O} is worse than {W}.",
    ),
}
_STYLE_INVALID: dict[str, tuple[str, ...]] = {
    "tie": ("Both responses are equally good. It's a tie.", "Neither response is better; they are equally coherent."),
    "refusal": (
        "I'm sorry, but I can't help with comparing these responses.",
        "As an AI language model, I cannot say which response is better.",
    ),
    "both_labels_final_sentence": (
        "{A} is better, and {B} is better.",
        "{A} is better or {B} is better, depending on the reader.",
    ),
}


def _variant_draw(knobs: Knobs, key: str) -> float:
    return _uniform(knobs.seed, key, "format-variant")


def _variant(knobs: Knobs, key: str, options: tuple[str, ...]) -> str:
    return options[int(_uniform(knobs.seed, key, "style-variant") * len(options))]


def _invalid_text(knobs: Knobs, key: str, messages: list[dict[str, Any]]) -> str:
    """The garbage answer for ``key``: GARBAGE, or the style's own invalid form."""
    if knobs.style in INVALID_STYLES:
        try:
            a, b = read_prompt(messages).labels
        except ValueError:
            a, b = "System Star", "System Square"
        return _variant(knobs, key, _STYLE_INVALID[knobs.style]).format(A=a, B=b)
    return GARBAGE[int(_uniform(knobs.seed, key, "garbage") * len(GARBAGE))]


def _cue_parts(messages: list[dict[str, Any]], p: SimPrompt, loser: str) -> dict[str, str]:
    """The cue as the prompt states it (to restate it), or a made-up one naming the loser."""
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    after = "```".join(str(user).split("```")[2:])
    cued = p.labels[0 if p.cue_slot == "first" else 1] if p.cue_slot else loser
    percent = re.search(r"(\d+)%+ of people believe", after)
    parts = {
        "C": cued if p.cue_kind == "bandwagon" else loser,
        "P": f"{percent.group(1)}%" if percent and p.cue_kind == "bandwagon" else "many",
    }
    distractor = ""
    if p.cue_kind == "distractor":
        distractor = next((line.strip() for line in after.split("\n") if cued in line), "")
    if not distractor:
        cued = loser
        distractor = f"{loser} likes to eat apples and oranges."
    parts.update(D=distractor, DL=cued, Dtail=distractor.split(cued, 1)[-1].strip().rstrip(".") or "is fond of fruit")
    if p.cue_kind == "bandwagon":
        parts["cue"] = (
            f" The note that {parts['P']} of people believe that {parts['C']} is better does not change my assessment."
        )
    elif p.cue_kind == "distractor":
        parts["cue"] = f" The remark about {cued} is irrelevant to the quality of the answers."
    else:
        parts["cue"] = ""
    return parts


def _write(knobs: Knobs, key: str, p: SimPrompt, slot: str, messages: list[dict[str, Any]]) -> str:
    label = p.labels[0 if slot == "first" else 1]
    style = knobs.style
    if style == "mixed":
        style = ("plain", "verbose", "json")[int(_uniform(knobs.seed, key, "style") * 3)]
    if style == "json":
        return json.dumps({"winner": label})
    if style == "verbose":
        return f"Both answers address the instruction. Weighing coherence against the reference, {label} is better."
    if style in ("plain", "terse"):
        return f"{label} is better"
    loser = p.labels[1 if slot == "first" else 0]
    a, b = p.labels
    fill = {
        "W": label,
        "O": loser,
        "A": a,
        "B": b,
        "A_note": "Accurate and follows the reference" if slot == "first" else "Less complete",
        "B_note": "Accurate and follows the reference" if slot == "second" else "Less complete",
        "A_grade": "High" if slot == "first" else "Medium",
        "B_grade": "High" if slot == "second" else "Medium",
        **_cue_parts(messages, p, loser),
    }
    return _variant(knobs, key, _STYLE_TEXT[style]).format(**fill)


def usage(messages: list[dict[str, Any]], text: str) -> tuple[int, int]:
    """Token counts as a tokenizer would roughly give them: 4 characters a token."""
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return max(1, -(-chars // 4)), max(1, -(-len(text) // 4))


# --- candidate answers (generation jobs) ------------------------------------------------------

_WORDS = (
    "the",
    "answer",
    "depends",
    "on",
    "a",
    "few",
    "clear",
    "facts",
    "first",
    "because",
    "this",
    "means",
    "that",
    "most",
    "cases",
    "follow",
    "simple",
    "rule",
    "evidence",
    "shows",
    "in",
    "practice",
    "people",
    "often",
    "find",
    "it",
    "useful",
    "to",
    "check",
    "each",
    "step",
    "carefully",
    "and",
    "then",
    "compare",
    "results",
    "with",
    "known",
    "examples",
    "so",
    "overall",
    "reason",
    "is",
    "well",
    "understood",
    "by",
    "experts",
    "today",
)


def answer_text(knobs: Knobs, messages: list[dict[str, Any]], *, max_tokens: int | None = None) -> str:
    """A deterministic candidate answer: about ``answer_words`` words, at most ~``max_tokens``.

    The word count is drawn per prompt in [0.5, 1.5) x ``answer_words``, so answers of one
    model differ in length (length bias has something to see); the words are seeded filler.
    """
    key = messages_key(messages)
    user = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), "")
    topic = " ".join(user.split()[:12]).rstrip("?.!")
    count = max(1, int(knobs.answer_words * (0.5 + _uniform(knobs.seed, key, "answer-length"))))
    words = [_WORDS[int(_uniform(knobs.seed, key, "answer-word", i) * len(_WORDS))] for i in range(count)]
    sentences, start = [], 0
    while start < len(words):
        size = 8 + int(_uniform(knobs.seed, key, "answer-sentence", start) * 7)
        chunk = words[start : start + size]
        sentences.append(chunk[0].capitalize() + (" " + " ".join(chunk[1:]) if chunk[1:] else "") + ".")
        start += size
    text = f"About {topic}: " + " ".join(sentences) if topic else " ".join(sentences)
    if max_tokens is not None and max_tokens > 0 and len(text) > 4 * max_tokens:
        # Like a model stopped at max_tokens: the text ends mid-sentence, within the limit.
        text = text[: 4 * max_tokens].rsplit(" ", 1)[0] if " " in text[: 4 * max_tokens] else text[: 4 * max_tokens]
    return text


def max_tokens_of(request: dict[str, Any]) -> int | None:
    """The request's ``max_tokens`` (or ``max_completion_tokens``) if it is a positive integer."""
    value = request.get("max_tokens", request.get("max_completion_tokens"))
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
