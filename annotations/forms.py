from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from annotations.models import Condition, RejectReason, Study
from annotations.models.review import CHANGE_REASON_MAX
from annotations.quality.rules import DEFAULT_RULES, validate_rules
from annotations.services.design import MAX_LETTER_MAP_BYTES, PAIRWISE_CONDITIONS, parse_cobbler_letter_map
from annotations.services.review import ANY_FLAG, NO_FLAG
from annotations.services.review import SORTS as REVIEW_SORTS
from annotations.services.review import STATES as REVIEW_STATES
from annotations.surveys import MAX_QUESTIONS as SURVEY_MAX_QUESTIONS
from annotations.surveys import MAX_TEXT_CHARS as SURVEY_TEXT_CHARS
from annotations.surveys import validate_surveys
from cobbler_site.foundation import text_safety

# More checks than this and a batch is mostly checks, not data.
MAX_CHECK_RATE = 0.5

# Every condition the designer makes batches for (annotations.services.design), read from the
# bias registry so a new crowd cue bias is offered without touching this form.
GENERATABLE = [(Condition(c).value, Condition(c).label) for c in (*PAIRWISE_CONDITIONS, Condition.RANKING)]


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=64)
    from_study = forms.ModelChoiceField(
        queryset=Study.objects.none(),
        required=False,
        to_field_name="slug",
        help_text="Copy instructions, candidates and responses from an imported study or the demo.",
    )
    overlap = forms.IntegerField(min_value=1, max_value=50, initial=3)
    bandwagon_percent = forms.IntegerField(min_value=0, max_value=100, initial=85)
    lease_minutes = forms.IntegerField(min_value=1, max_value=24 * 60, initial=90)

    def __init__(self, *args: Any, sources: QuerySet[Study], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["from_study"]).queryset = sources

    def service_kwargs(self) -> dict:
        return dict(self.cleaned_data)


class GenerateBatchesForm(forms.Form):
    condition = forms.ChoiceField(choices=GENERATABLE)
    seed = forms.IntegerField(initial=1, min_value=0)
    pairs_per_batch = forms.IntegerField(initial=15, min_value=1, max_value=500)
    # An upload, not a server path: the page never opens files on the server
    # (`manage.py generate_batches --cobbler-design DIR` still takes a directory).
    cobbler_design = forms.FileField(
        required=False,
        label="CoBBLEr design file",
        help_text="Optional: upload human_annotation_gt_formatted.json (human/batches/model_annotations/ of the "
        "CoBBLEr data) to reproduce the original 750-task design instead of a fresh one.",
    )
    new_round = forms.BooleanField(
        required=False,
        label="Add as a new round",
        help_text="When the condition already has generated batches: add these beside them, to add places "
        "(imported votes never need this).",
    )

    def clean_cobbler_design(self) -> list[dict[str, str]] | None:
        """The uploaded letter map, parsed; a file that is not one is a form error, never a 500."""
        upload = self.cleaned_data.get("cobbler_design")
        if not upload:
            return None
        if upload.size > MAX_LETTER_MAP_BYTES:
            raise forms.ValidationError(f"The design file is larger than {MAX_LETTER_MAP_BYTES // 1024} KB.")
        return parse_cobbler_letter_map(upload.read(MAX_LETTER_MAP_BYTES + 1), "The design file")


class AddRoundForm(forms.Form):
    """The hub's Capacity box: another round of fresh batches for one condition, beside what it has."""

    condition = forms.ChoiceField(choices=GENERATABLE)
    seed = forms.IntegerField(min_value=0, help_text="A new seed draws new pairs; the same seed repeats a design.")
    pairs_per_batch = forms.IntegerField(initial=15, min_value=1, max_value=500)


class JSONTextField(forms.CharField):
    """A JSON object typed into a textarea; the validator passed in checks its shape."""

    def __init__(self, *, validate_json: Callable[[object], dict], **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 5, "spellcheck": "false", "class": "mono"}))
        super().__init__(required=False, strip=True, **kwargs)
        self.validate_json = validate_json

    def prepare_value(self, value: object) -> str:
        if isinstance(value, dict):
            return json.dumps(value, indent=1) if value else ""
        return "" if value is None else str(value)

    def clean(self, value: object) -> dict:
        text = super().clean(value)
        if not text:
            return {}
        try:
            parsed = text_safety.loads(text)  # refuses duplicate keys, huge integers, NUL
        except json.JSONDecodeError as e:
            raise forms.ValidationError(f"Not valid JSON: {e.msg} (line {e.lineno}, column {e.colno}).") from e
        except text_safety.JSONProblem as e:
            raise forms.ValidationError(f"Refused JSON: {e}.") from e
        except RecursionError:
            raise forms.ValidationError("Not valid JSON: nested too deeply.") from None
        return self.validate_json(parsed)


class SurveyQuestionForm(forms.Form):
    """One survey question as form fields; ``question()`` is its JSON (annotations.surveys checks it)."""

    phase = forms.ChoiceField(choices=[("pre", "Before the tasks"), ("post", "After the tasks")], initial="pre")
    qid = forms.CharField(
        max_length=40, label="Id", help_text="1-40 lower-case letters, digits, _ or -; the answer's key in exports."
    )
    text = forms.CharField(max_length=SURVEY_TEXT_CHARS, label="Question")
    kind = forms.ChoiceField(
        choices=[("text", "Free text"), ("choice", "Choice"), ("scale", "Scale")],
        initial="text",
    )
    choices = forms.CharField(
        required=False,
        label="Choices",
        help_text="A choice question only: one choice per line.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    low = forms.IntegerField(required=False, label="Scale from", help_text="A scale only.")
    high = forms.IntegerField(required=False, label="Scale to", help_text="A scale only.")
    required = forms.BooleanField(required=False, label="Required")

    @staticmethod
    def initial_of(phase: str, question: dict) -> dict:
        """The fields' initial values of one stored (validated) question."""
        return {
            "phase": phase,
            "qid": question["id"],
            "text": question["text"],
            "kind": question["kind"],
            "choices": "\n".join(question.get("choices", [])),
            "low": question.get("min"),
            "high": question.get("max"),
            "required": question.get("required", False),
        }

    def question(self) -> dict:
        """The question as the JSON of Study.surveys holds it (call after is_valid())."""
        d = self.cleaned_data
        out: dict[str, Any] = {"id": d["qid"].strip(), "text": d["text"], "kind": d["kind"], "required": d["required"]}
        if d["kind"] == "choice":
            out["choices"] = [line.strip() for line in d["choices"].splitlines() if line.strip()]
        elif d["kind"] == "scale":
            out["min"], out["max"] = d["low"], d["high"]
        return out


SurveyQuestionFormSet = forms.formset_factory(
    SurveyQuestionForm,
    extra=1,
    can_delete=True,
    max_num=2 * SURVEY_MAX_QUESTIONS,
    absolute_max=2 * SURVEY_MAX_QUESTIONS,
)

# The quality rules as named fields: each rule's label; a rule whose default is a whole number is a count.
RULE_LABELS: dict[str, str] = {
    "min_median_seconds": "Too fast below this median time per task (seconds)",
    "straight_line_min_tasks": "Straight-lining: only for work with at least this many answers of one kind",
    "attention_fail_max": "Attention checks failed allowed before flagging",
    "gold_fail_max": "Gold items failed allowed before flagging",
    "qualification_attempts_max": "Qualification attempts allowed before flagging",
    "majority_disagreement_max": "Disagreement with the majority above this share is flagged (0-1)",
    "min_raters_for_majority": "Compare with the majority only for tasks with at least this many raters",
    "majority_min_tasks": "Compare with the majority only with at least this many comparable tasks",
}
RULE_PREFIX = "rule_"


def _rule_field(name: str, default: float | int) -> forms.Field:
    common: dict[str, Any] = {
        "required": False,
        "label": RULE_LABELS.get(name, name),
        "help_text": f"{name}; blank: the default, {default}.",
    }
    if isinstance(default, float):
        return forms.FloatField(widget=forms.NumberInput(attrs={"step": "any", "placeholder": default}), **common)
    return forms.IntegerField(widget=forms.NumberInput(attrs={"placeholder": default}), **common)


class StudySettingsForm(forms.ModelForm):
    """Task types and quality control of a study (docs/methods.md "Crowd quality").

    Surveys and quality rules have form fields (a formset of questions, one field per rule)
    and, as the advanced option, their raw JSON box. Both feed the same validators
    (annotations.surveys.validate_surveys, annotations.quality.rules.validate_rules): whichever
    of the two the researcher changed is saved; changing both differently is an error. A post
    without the fields (a script, an older page) uses the JSON box alone.
    """

    surveys = JSONTextField(
        validate_json=validate_surveys,
        label="Surveys (JSON)",
        help_text='The surveys as JSON: {"pre": [{"id": "age", "text": "Your age?", '
        '"kind": "text"}], "post": [...]}; kinds text, choice (with "choices") and scale (with "min" and "max").',
    )
    quality_rules = JSONTextField(
        validate_json=validate_rules,
        label="Quality rule overrides (JSON)",
        help_text='The overrides as JSON, e.g. {"min_median_seconds": 6}. Defaults: '
        + ", ".join(f"{k} {v}" for k, v in DEFAULT_RULES.items())
        + ".",
    )
    PLAIN_FIELDS = ("allow_ties", "rationale", "attention_check_rate", "gold_rate")

    class Meta:
        model = Study
        fields = ("allow_ties", "rationale", "attention_check_rate", "gold_rate", "surveys", "quality_rules")
        labels = {
            "allow_ties": 'Allow a tie ("no preference", key 0) on pairwise tasks',
            "rationale": "Free-text rationale per task",
            "attention_check_rate": "Attention-check rate (share of each new batch's tasks, 0-0.5)",
            "gold_rate": "Gold-item rate (share of each new batch's tasks, 0-0.5)",
        }
        help_texts = {
            "attention_check_rate": "Instructed-response items and catch pairs, injected at seeded positions "
            "when batches are generated.",
            "gold_rate": "Pairs with an expected answer (a pair's gold response), injected the same way.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stored_surveys = _validated_or_none(validate_surveys, self.instance.surveys)
        self._stored_rules = _validated_or_none(validate_rules, self.instance.quality_rules)
        for name, default in DEFAULT_RULES.items():
            self.fields[RULE_PREFIX + name] = _rule_field(name, default)
            if self._stored_rules and name in self._stored_rules:
                self.initial[RULE_PREFIX + name] = self._stored_rules[name]
        initial = [
            SurveyQuestionForm.initial_of(phase, q)
            for phase, questions in (self._stored_surveys or {}).items()
            for q in questions
        ]
        self.questions = SurveyQuestionFormSet(self.data or None, initial=initial, prefix="survey")
        # Without the formset's management form the post is the JSON box alone (scripts, tests).
        self._has_question_fields = not self.is_bound or "survey-TOTAL_FORMS" in self.data
        self._has_rule_fields = not self.is_bound or any(RULE_PREFIX + n in self.data for n in DEFAULT_RULES)

    def plain_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.PLAIN_FIELDS]

    def rule_fields(self) -> list[forms.BoundField]:
        return [self[RULE_PREFIX + name] for name in DEFAULT_RULES]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self._has_question_fields:
            self._pick(data, "surveys", self._surveys_from_fields(), self._stored_surveys)
        if self._has_rule_fields:
            self._pick(data, "quality_rules", self._rules_from_fields(), self._stored_rules)
        return data

    def _pick(self, data: dict, name: str, from_fields: dict | None, stored: dict | None) -> None:
        """Keep the JSON box's value if it was changed, else the fields' (None: the fields have an error)."""
        if name not in data:
            return  # the JSON box is invalid: its error stands
        from_json = data[name]
        json_changed = from_json != (stored or {})
        if json_changed:
            if from_fields is not None and from_fields not in (stored, from_json):
                self.add_error(
                    name,
                    "You changed both the fields and the JSON box, differently: keep the change in one of them.",
                )
            return
        if from_fields is not None:  # else the fields' error stands (add_error dropped the value)
            data[name] = from_fields

    def _surveys_from_fields(self) -> dict | None:
        if not self.questions.is_valid():
            problems = self.questions.non_form_errors()
            self.add_error("surveys", problems[0] if problems else "Check the questions: a field below has a problem.")
            return None
        phases: dict[str, list[dict]] = {"pre": [], "post": []}
        for form in self.questions.forms:
            if not form.cleaned_data or form.cleaned_data.get("DELETE"):
                continue  # a blank extra row, or one marked for removal
            phases[form.cleaned_data["phase"]].append(form.question())
        try:
            return validate_surveys({k: v for k, v in phases.items() if v})
        except ValidationError as e:
            self.add_error("surveys", e.messages[0])
            return None

    def _rules_from_fields(self) -> dict | None:
        names = [RULE_PREFIX + n for n in DEFAULT_RULES]
        if any(name in self.errors for name in names):
            return None
        values = {n: self.cleaned_data[RULE_PREFIX + n] for n in DEFAULT_RULES}
        try:
            return validate_rules({n: v for n, v in values.items() if v is not None})
        except ValidationError as e:
            self.add_error("quality_rules", e.messages[0])
            return None

    def clean_attention_check_rate(self) -> float:
        return self._rate("attention_check_rate")

    def clean_gold_rate(self) -> float:
        return self._rate("gold_rate")

    def _rate(self, name: str) -> float:
        value = self.cleaned_data[name]
        if not 0 <= value <= MAX_CHECK_RATE:
            raise forms.ValidationError(f"Use a share between 0 and {MAX_CHECK_RATE}.")
        return value


def _validated_or_none(validate: Callable[[object], dict], value: object) -> dict | None:
    """A stored value through its validator; None if it no longer passes (stored past the form)."""
    try:
        return validate(value)
    except ValidationError:
        return None


class ReviewDecisionForm(forms.Form):
    """One decision on one or more submissions; the service enforces "a rejection needs a reason"."""

    decision = forms.ChoiceField(choices=[("approved", "Approve"), ("rejected", "Reject")])
    reason = forms.ChoiceField(choices=[("", "Choose a reason"), *RejectReason.choices], required=False)
    note = forms.CharField(max_length=300, required=False, label="Note to keep with the decision")
    # One submission at a time: why a decided submission changes (bulk never changes one).
    change_reason = forms.CharField(max_length=CHANGE_REASON_MAX, required=False, label="Why change the decision?")


class BulkReviewForm(ReviewDecisionForm):
    assignment = forms.TypedMultipleChoiceField(coerce=int, choices=(), required=False)

    def __init__(self, *args: Any, assignment_ids: list[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["assignment"]).choices = [(pk, pk) for pk in assignment_ids]


class ReviewFilterForm(forms.Form):
    state = forms.ChoiceField(
        choices=[(s, s.capitalize()) for s in REVIEW_STATES], required=False, label="Review state"
    )
    flag = forms.ChoiceField(required=False, label="Quality flag")
    sort = forms.ChoiceField(choices=list(REVIEW_SORTS.items()), required=False, label="Sort")

    def __init__(self, *args: Any, flags: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["flag"]).choices = [
            ("", "Any or none"),
            (ANY_FLAG, "Flagged (any flag)"),
            (NO_FLAG, "Not flagged"),
            *flags,
        ]

    def filters(self) -> dict[str, str]:
        """The valid filters; a tampered value falls back to the default instead of an error page."""
        data = self.cleaned_data if self.is_valid() else {}
        return {
            "state": data.get("state") or "all",
            "flag": data.get("flag") or "",
            "sort": data.get("sort") or "flags",
        }


class LookupForm(forms.Form):
    # Not a GET parameter: the id would land in server logs and browser history.
    platform_id = forms.CharField(
        max_length=200,
        label="Prolific ID, MTurk worker id or participant code",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
