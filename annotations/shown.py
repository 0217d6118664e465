"""What a worker sees on a task, in one place: the worker page renders it, review and the MTurk
preview show it again.

Texts only, never the task's role: a check task must look like any other task on the page.
Everything is plain text; the templates escape it (answer texts and a task's stored cue are
untrusted), so nothing here marks anything safe.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from annotations.biases import CueBias, CueContext, cue_bias
from annotations.models import Study, Task
from annotations.vocabulary import CrowdChoice

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def answer_letter(index: int) -> str:
    """The on-screen label of the index-th answer of a ranking (A..Z, then A1, B1, ...)."""
    return LETTERS[index % 26] + ("" if index < 26 else str(index // 26))


def _context(study: Study, cue: dict) -> CueContext:
    slot = cue.get("cue_slot", CrowdChoice.A)
    other = CrowdChoice.B if slot == CrowdChoice.A else CrowdChoice.A
    return CueContext(label=f"System {slot}", other=f"System {other}", percent=study.bandwagon_percent)


def _stored(bias: CueBias, study: Study, task: Task) -> dict | None:
    """The task's cue with what the plugin needs to show it, or None when it cannot be shown.

    A cue needs its slot and the plugin's details (sentiment's ``rewrite`` and ``rewritten``,
    the latter empty on a check task's cue). Imported votes may carry the slot
    alone (docs/study-format.md): nobody knows which citation or persona those workers read,
    so nothing is made up; only bandwagon's percent falls back to the study's statistic.
    """
    cue = {"percent": study.bandwagon_percent, **(task.cue if isinstance(task.cue, dict) else {})}
    if cue.get("cue_slot") not in (CrowdChoice.A, CrowdChoice.B):
        return None
    # The keys a draw stores (its values are not used): a fixed rng, so this is no draw of the design's.
    details = bias.draw(random.Random(0), _context(study, cue))
    return cue if all(key in cue for key in details) else None


def cue_banner(study: Study, task: Task) -> str:
    """The condition's sentence above the pair, or "".

    A prompt-sentence bias (bandwagon's statistic, attentional's distractor, refinement's
    claim, identity's attribution) names the cued system, as the judge's prompt does; an
    answer perturbation (authority, verbosity) has no banner, its change is in the answer.
    """
    bias = cue_bias(task.condition)
    cue = _stored(bias, study, task) if bias is not None and not bias.judge_only else None
    return bias.prompt_sentence(cue, _context(study, cue)) if bias is not None and cue is not None else ""


def answer_texts(study: Study, task: Task, text_a: str, text_b: str) -> tuple[str, str]:
    """System A's and System B's answers as shown: an answer perturbation changes the cued one.

    Authority appends the stored citation, verbosity the stored padding sentences, sentiment
    shows the stored rewrite in place of the answer (annotations.biases; a sentiment cue without
    one, a check task's, shows the original); every other condition shows the answers as they are.
    """
    bias = cue_bias(task.condition)
    cue = _stored(bias, study, task) if bias is not None and not bias.judge_only else None
    if bias is None or cue is None:
        return text_a, text_b
    return bias.shown_texts(cue, text_a, text_b, first_slot=CrowdChoice.A)


def check_texts(task: Task, text_a: str, text_b: str) -> tuple[str, str, str]:
    """(note, text A, text B) as a check task shows them; an item shows its answers and no note.

    An instructed-response item adds its instruction as the note; a catch pair shows its broken
    text in place of one slot's answer.
    """
    expects = task.expects if isinstance(task.expects, dict) else {}
    texts: dict[str, str] = {CrowdChoice.A: text_a, CrowdChoice.B: text_b}
    note = str(expects.get("text", "")) if task.role == Task.Role.INSTRUCTED else ""
    broken = expects.get("broken_slot")
    if task.role == Task.Role.CATCH and broken in texts and expects.get("broken_text"):
        texts[broken] = str(expects["broken_text"])
    return note, texts["A"], texts["B"]


@dataclass(frozen=True)
class ShownPair:
    """A pairwise task as the worker reads it: a check's note, the cue's banner and both answers."""

    note: str
    banner: str
    text_a: str
    text_b: str


def shown_pair(study: Study, task: Task, text_a: str, text_b: str) -> ShownPair:
    """The single source of what a pair shows: the worker page, review and the preview call it.

    ``text_a`` / ``text_b`` are the responses in slots A and B. A check's texts come first, then
    the cue's perturbation, so a check task carries the same citation or padding as an item
    and never stands out.
    """
    note, a, b = check_texts(task, text_a, text_b)
    a, b = answer_texts(study, task, a, b)
    return ShownPair(note=note, banner=cue_banner(study, task), text_a=a, text_b=b)
