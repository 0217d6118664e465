"""Pre- and post-study survey questions: the definition a researcher writes, the form a worker fills.

A study's ``surveys`` is ``{"pre": [question, ...], "post": [question, ...]}``; a question is
``{"id", "text", "kind": "text"|"choice"|"scale", "choices": [...] (choice), "min"/"max"
(scale), "required": bool}``. Answers are stored once per phase in ``Assignment.survey``
(``{"pre": {id: answer}, "post": {...}}``): the pre-study survey comes after a batch is
claimed and before its first task, the post-study survey after the last task and before the
completion code.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Assignment, Study

logger = logging.getLogger(__name__)
PHASES = ("pre", "post")
KINDS = ("text", "choice", "scale")
MAX_QUESTIONS = 30
MAX_TEXT_CHARS = 500  # a question's wording
MAX_CHOICES = 20
MAX_CHOICE_CHARS = 200
MAX_SCALE_POINTS = 11  # 0-10 is the widest scale that still fits a phone as radio buttons
MAX_ANSWER_CHARS = 2000  # a free-text answer
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_KEYS = {
    "text": {"id", "text", "kind", "required"},
    "choice": {"id", "text", "kind", "required", "choices"},
    "scale": {"id", "text", "kind", "required", "min", "max"},
}


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _validate_question(raw: object, where: str) -> dict:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where} must be an object with id, text and kind.")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ValidationError(f"{where}: kind must be one of {', '.join(KINDS)} (got {kind!r}).")
    unknown = sorted(set(raw) - _KEYS[kind])
    if unknown:
        raise ValidationError(f"{where}: unknown key(s) {', '.join(unknown)} for a {kind} question.")
    qid, text, required = raw.get("id"), raw.get("text"), raw.get("required", False)
    if not isinstance(qid, str) or not _ID_RE.match(qid):
        raise ValidationError(
            f"{where}: id must be 1-40 lower-case letters, digits, _ or -, starting with a letter or digit."
        )
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT_CHARS:
        raise ValidationError(f"{where} ({qid}): text must be 1-{MAX_TEXT_CHARS} characters.")
    if not isinstance(required, bool):
        raise ValidationError(f"{where} ({qid}): required must be true or false.")
    question: dict[str, Any] = {"id": qid, "text": text.strip(), "kind": kind, "required": required}
    if kind == "choice":
        choices = raw.get("choices")
        if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
            raise ValidationError(f"{where} ({qid}): a choice question needs a list of 2-{MAX_CHOICES} choices.")
        if any(not isinstance(c, str) or not c.strip() or len(c) > MAX_CHOICE_CHARS for c in choices):
            raise ValidationError(f"{where} ({qid}): every choice must be text of 1-{MAX_CHOICE_CHARS} characters.")
        cleaned = [c.strip() for c in choices]
        if len(set(cleaned)) != len(cleaned):
            raise ValidationError(f"{where} ({qid}): the choices must differ from each other.")
        question["choices"] = cleaned
    elif kind == "scale":
        low, high = raw.get("min"), raw.get("max")
        if not _is_int(low) or not _is_int(high) or not low < high:
            raise ValidationError(f"{where} ({qid}): a scale needs whole numbers min < max.")
        if high - low + 1 > MAX_SCALE_POINTS:
            raise ValidationError(
                f"{where} ({qid}): a scale may have at most {MAX_SCALE_POINTS} points (got {high - low + 1})."
            )
        question["min"], question["max"] = low, high
    return question


def validate_surveys(value: object) -> dict:
    """The cleaned survey definition of a study; ValidationError naming the first problem.

    Accepts ``{}`` (no surveys) or an object with "pre" and/or "post" lists of questions.
    Question ids must be unique within a phase. Returns a normalised copy (stripped texts,
    ``required`` filled in, empty phases dropped).
    """
    if value in (None, "", {}):
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError('Surveys must be an object like {"pre": [...], "post": [...]}.')
    unknown = sorted(set(value) - set(PHASES))
    if unknown:
        raise ValidationError(f"Unknown survey phase(s) {', '.join(map(str, unknown))}: use pre and post.")
    cleaned: dict[str, list[dict]] = {}
    for phase in PHASES:
        raw = value.get(phase, [])
        if not isinstance(raw, list):
            raise ValidationError(f"The {phase} survey must be a list of questions.")
        if len(raw) > MAX_QUESTIONS:
            raise ValidationError(f"The {phase} survey has {len(raw)} questions; at most {MAX_QUESTIONS} are allowed.")
        questions = [_validate_question(q, f"{phase} question {i + 1}") for i, q in enumerate(raw)]
        ids = [q["id"] for q in questions]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValidationError(f"The {phase} survey repeats the question id(s) {', '.join(duplicates)}.")
        if questions:
            cleaned[phase] = questions
    return cleaned


def questions_for(study: Study, phase: str) -> list[dict]:
    """The study's questions of one phase, or [] for none.

    The study form validates definitions; one stored past it (the admin, a shell) must not
    lock workers out of their tasks, so it is logged and asks nothing.
    """
    try:
        return validate_surveys(study.surveys).get(phase, [])
    except ValidationError as e:
        logger.warning("study %s: survey definition ignored: %s", study.slug, e.messages[0])
        return []


def _field(question: dict) -> forms.Field:
    common = {"label": question["text"], "required": question["required"]}
    if question["kind"] == "text":
        return forms.CharField(max_length=MAX_ANSWER_CHARS, widget=forms.Textarea(attrs={"rows": 3}), **common)
    if question["kind"] == "choice":
        return forms.ChoiceField(choices=[(c, c) for c in question["choices"]], widget=forms.RadioSelect, **common)
    points = range(question["min"], question["max"] + 1)
    return forms.TypedChoiceField(
        choices=[(str(n), str(n)) for n in points], coerce=int, widget=forms.RadioSelect, empty_value=None, **common
    )


class SurveyForm(forms.Form):
    """One phase's questions as a Django form; field names are ``q-<id>``."""

    def __init__(self, *args: Any, questions: list[dict], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.questions = questions
        for question in questions:
            self.fields[f"q-{question['id']}"] = _field(question)

    def rows(self) -> list[tuple[forms.BoundField, dict]]:
        """(bound field, question) pairs in the study's order, for the template."""
        return [(self[f"q-{q['id']}"], q) for q in self.questions]

    def answers(self) -> dict:
        """{question id: answer} of the answered questions (call after is_valid())."""
        out = {}
        for question in self.questions:
            value = self.cleaned_data.get(f"q-{question['id']}")
            if isinstance(value, str):
                value = value.strip()
            if value not in (None, ""):
                out[question["id"]] = value
        return out


def clean_answers(questions: list[dict], data: Mapping[str, Any]) -> dict:
    """{question id: answer} from posted data; ValidationError with the first problem."""
    form = SurveyForm(data, questions=questions)
    if not form.is_valid():
        for name, errors in form.errors.items():
            label = form.fields[name].label if name in form.fields else "The survey"
            raise ValidationError(f"{label}: {errors[0]}")
    return form.answers()


def awaiting(study: Study, assignment: Assignment | None) -> str | None:
    """The survey phase this assignment must answer before going on, or None.

    "pre" while the lease is active and its pre-study survey unanswered; "post" once the
    batch is submitted and its post-study survey unanswered.
    """
    if assignment is None:
        return None
    answered = assignment.survey or {}
    if assignment.status == Assignment.Status.ACTIVE and "pre" not in answered and questions_for(study, "pre"):
        return "pre"
    if assignment.status == Assignment.Status.SUBMITTED and "post" not in answered and questions_for(study, "post"):
        return "post"
    return None


def record_survey(*, assignment: Assignment, phase: str, answers: dict) -> bool:
    """Store one phase's answers; True if stored, False if that phase was answered already.

    Idempotent (first answer wins): the row is locked and the phase checked under the lock,
    so a double click, a resubmitted form after Back, or a second tab stores one set and
    never overwrites the other phase.
    """
    if phase not in PHASES:
        raise ValidationError(f"Unknown survey phase {phase!r}.")
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().only("pk", "survey").get(pk=assignment.pk)
        survey = dict(locked.survey or {})
        if phase in survey:
            assignment.survey = survey
            return False
        survey[phase] = answers
        Assignment.objects.filter(pk=assignment.pk).update(survey=survey)
    assignment.survey = survey
    return True
