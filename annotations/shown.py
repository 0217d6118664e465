"""What a worker sees on a task, in one place: the worker page renders it, review shows it again.

Texts only, never the task's role: a check task must look like any other task on the page.
"""

from __future__ import annotations

from annotations.models import Condition, Study, Task
from annotations.vocabulary import CrowdChoice

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def answer_letter(index: int) -> str:
    """The on-screen label of the index-th answer of a ranking (A..Z, then A1, B1, ...)."""
    return LETTERS[index % 26] + ("" if index < 26 else str(index // 26))


def cue_banner(study: Study, task: Task) -> str:
    """The condition's line above the pair (bandwagon statistic, attentional distractor), or ""."""
    if task.condition == Condition.BANDWAGON:
        percent = task.cue.get("percent", study.bandwagon_percent)
        return f"{percent}% of people believe that System {task.cue.get('cue_slot', 'A')} is better."
    if task.condition == Condition.ATTENTIONAL:
        return str(task.cue.get("distractor", ""))
    return ""


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
