from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from django import forms
from django.db.models import QuerySet

from annotations.models import Condition, RejectReason, Study
from annotations.models.review import CHANGE_REASON_MAX
from annotations.quality.rules import DEFAULT_RULES, validate_rules
from annotations.services.design import MAX_LETTER_MAP_BYTES, parse_cobbler_letter_map
from annotations.services.review import ANY_FLAG, NO_FLAG
from annotations.services.review import SORTS as REVIEW_SORTS
from annotations.services.review import STATES as REVIEW_STATES
from annotations.surveys import validate_surveys
from cobbler_site import text_safety

# More checks than this and a batch is mostly checks, not data.
MAX_CHECK_RATE = 0.5

GENERATABLE = [
    (c.value, c.label)
    for c in (Condition.ORDER, Condition.BANDWAGON, Condition.ATTENTIONAL, Condition.PLAIN, Condition.RANKING)
]


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


class StudySettingsForm(forms.ModelForm):
    """Task types and quality control of a study (docs/methods.md "Crowd quality")."""

    surveys = JSONTextField(
        validate_json=validate_surveys,
        label="Surveys (JSON)",
        help_text='Optional pre- and post-study questions: {"pre": [{"id": "age", "text": "Your age?", '
        '"kind": "text"}], "post": [...]}; kinds text, choice (with "choices") and scale.',
    )
    quality_rules = JSONTextField(
        validate_json=validate_rules,
        label="Quality rule overrides (JSON)",
        help_text='Optional thresholds of the quality flags, e.g. {"min_median_seconds": 6}. Defaults: '
        + ", ".join(f"{k} {v}" for k, v in DEFAULT_RULES.items())
        + ".",
    )

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

    def clean_attention_check_rate(self) -> float:
        return self._rate("attention_check_rate")

    def clean_gold_rate(self) -> float:
        return self._rate("gold_rate")

    def _rate(self, name: str) -> float:
        value = self.cleaned_data[name]
        if not 0 <= value <= MAX_CHECK_RATE:
            raise forms.ValidationError(f"Use a share between 0 and {MAX_CHECK_RATE}.")
        return value


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
