from __future__ import annotations

from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from annotations.models import Study
from annotations.vocabulary import Condition
from cobbler_site.text_safety import StrictJSONFormField
from judging import conditions, generation_params, parsers, prompts
from judging.models import Judge, JudgeJob
from judging.vocabulary import Parser

# Fields shown together on the model form, in this order (the template walks these groups).
FIELDSETS = (
    ("Model", ("name", "kind", "baseline")),
    ("Endpoint", ("base_url", "model", "transport", "api_key_env", "api_key", "clear_api_key")),
    ("Roles", ("use_as_judge", "use_as_generator")),
    ("Limits", ("max_concurrency", "requests_per_minute", "tokens_per_minute", "request_timeout")),
    (
        "Prices (USD per 1k tokens)",
        ("price_in_per_1k", "price_out_per_1k", "batch_price_in_per_1k", "batch_price_out_per_1k"),
    ),
    ("Generation", ("generation", "self_candidate_key")),
    ("Access", ("is_shared", "shared_with")),
)


def _check_kind(data: dict[str, Any]) -> None:
    kind = data.get("kind")
    if kind == Judge.Kind.OPENAI and not (data.get("base_url") and data.get("model")):
        raise forms.ValidationError("An endpoint model needs a base URL and a model.")
    if kind == Judge.Kind.BASELINE and not data.get("baseline"):
        raise forms.ValidationError("Choose which baseline this is.")


class JudgeForm(forms.ModelForm):
    # Write-only: never rendered back (render_value=False); blank keeps the stored key.
    api_key = forms.CharField(
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        label="API key",
        help_text="Your own key: stored encrypted, never shown again, sent only to this base URL. "
        "Leave blank to keep the current key.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    # Checked against JUDGE_ALLOWED_HOSTS by the model's validator; a new URL drops the key.
    base_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="http",
        label="Base URL",
        help_text="Changing it removes the model's key (set a new one here).",
    )
    tokens_per_minute = forms.IntegerField(
        required=False,
        min_value=0,
        label="Tokens per minute",
        help_text="Shared by every worker; blank or 0 = no limit.",
    )
    # Unchecked checkboxes are absent from a POST, so the form marks that it showed the roles:
    # a client that never saw them (an older script) gets the default roles, not "no role".
    roles_shown = forms.BooleanField(required=False, initial=True, widget=forms.HiddenInput)

    class Meta:
        model = Judge
        fields = (
            "name",
            "kind",
            "baseline",
            "base_url",
            "model",
            "api_key_env",
            "generation",
            "use_as_judge",
            "use_as_generator",
            "max_concurrency",
            "requests_per_minute",
            "tokens_per_minute",
            "price_in_per_1k",
            "price_out_per_1k",
            "batch_price_in_per_1k",
            "batch_price_out_per_1k",
            "self_candidate_key",
            "request_timeout",
            "transport",
            "is_shared",
            "shared_with",
        )
        widgets = {"shared_with": forms.CheckboxSelectMultiple}
        # Django's forms.JSONField lets a 5,000-digit number raise ValueError (a 500) and a
        # "\u0000" escape reach jsonb; the strict field makes both a form error.
        field_classes = {"generation": StrictJSONFormField}
        error_messages = {"name": {"unique": Judge.NAME_NOT_AVAILABLE}}
        labels = {
            "requests_per_minute": "Requests per minute",
            "max_concurrency": "Concurrency",
            "request_timeout": "Request timeout (s)",
            "use_as_judge": "Judge",
            "use_as_generator": "Answer generator",
            "price_in_per_1k": "Input",
            "price_out_per_1k": "Output",
            "batch_price_in_per_1k": "Batch input",
            "batch_price_out_per_1k": "Batch output",
            "api_key_env": "Key variable",
            "self_candidate_key": "Own candidate key",
            "is_shared": "Shared with everyone",
        }
        help_texts = {
            "requests_per_minute": "Shared by every worker; 0 = no limit.",
            "max_concurrency": "Calls in flight at once for this model.",
            "batch_price_in_per_1k": "Blank: half the input price (the Batch API discount).",
            "batch_price_out_per_1k": "Blank: half the output price.",
            "self_candidate_key": "Optional: egocentric bias is measured automatically when this model "
            "also wrote answers in the study.",
            "generation": 'JSON sent with every request, e.g. {"temperature": 0, "max_tokens": 64}; only '
            + ", ".join(sorted(generation_params.ALLOWED))
            + " are allowed.",
        }

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        prefix = settings.JUDGE_KEY_ENV_PREFIX
        self.fields["api_key_env"].help_text = (
            f"A server key variable (name starts with {prefix}, e.g. {prefix}OPENAI) that an admin "
            "granted you (manage.py grant_key)."
        )
        owner_id = self.instance.owner_id if self.instance.pk else getattr(user, "pk", None)
        researchers = get_user_model().objects.filter(is_staff=True, is_active=True)
        if owner_id is not None:  # (excluding pk=None would exclude nobody either)
            researchers = researchers.exclude(pk=owner_id)
        cast(forms.ModelMultipleChoiceField, self.fields["shared_with"]).queryset = researchers.order_by("username")

    def clean_tokens_per_minute(self) -> int:
        return self.cleaned_data.get("tokens_per_minute") or 0

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        _check_kind(data)
        kind = data.get("kind")
        if not data.get("roles_shown"):
            data["use_as_judge"] = True
            data["use_as_generator"] = kind == Judge.Kind.OPENAI
        elif not (data.get("use_as_judge") or data.get("use_as_generator")):
            raise forms.ValidationError("Choose at least one role: judge, answer generator, or both.")
        if kind != Judge.Kind.OPENAI and data.get("use_as_generator"):
            self.add_error("use_as_generator", "Only an endpoint model can write answers.")
        return data

    def fieldsets(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names if name in self.fields]) for title, names in FIELDSETS]


class ConnectionTestForm(forms.ModelForm):
    """The endpoint fields of the model form, to test values before (or without) saving them."""

    api_key = forms.CharField(required=False, strip=True, widget=forms.PasswordInput(render_value=False))
    base_url = forms.URLField(required=False, max_length=500, assume_scheme="http")

    class Meta:
        model = Judge
        fields = ("kind", "baseline", "base_url", "model", "api_key_env", "generation", "request_timeout", "transport")
        field_classes = {"generation": StrictJSONFormField}  # as JudgeForm: a form error, never a 500

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        _check_kind(data)
        return data

    def model_to_test(self) -> Judge:
        """The unsaved model these values describe, with the key they may use.

        A stored key goes with its endpoint only (as Judge.save does): for a changed base URL
        only a key typed in this form or a newly named variable is sent.
        """
        judge = self.instance
        loaded = getattr(judge, "_loaded", {})
        if judge.pk and judge.base_url.rstrip("/") != loaded.get("base_url", "").rstrip("/"):
            if judge.api_key_encrypted == loaded.get("api_key_encrypted"):
                judge.api_key_encrypted = ""
            if judge.api_key_env == loaded.get("api_key_env"):
                judge.api_key_env = ""
        if self.cleaned_data.get("api_key"):
            judge.set_api_key(self.cleaned_data["api_key"])
        return judge


class JobForm(forms.Form):
    # Narrowed to the studies the user manages (Study.objects.manageable_by) in __init__.
    study = forms.ModelChoiceField(queryset=Study.objects.none())
    # Narrowed to the judges the user may use (Judge.objects.usable_by) in __init__.
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    conditions = forms.MultipleChoiceField(
        choices=[(c, c) for c in conditions.SUPPORTED],
        initial=[Condition.ORDER],
        widget=forms.CheckboxSelectMultiple,
        help_text="Egocentric and salience are read from the order run.",
    )
    pair_set = forms.ChoiceField(choices=JudgeJob.PairSet.choices, initial=JudgeJob.PairSet.ALL)
    budget_usd = forms.DecimalField(required=False, min_value=0, decimal_places=4, label="Budget (USD)")
    # Not required: scripts that post the older form get synchronous calls, as before.
    mode = forms.TypedChoiceField(
        choices=JudgeJob.Mode.choices,
        initial=JudgeJob.Mode.SYNC,
        required=False,
        empty_value=JudgeJob.Mode.SYNC,
        help_text="Batch API: the batch price, answered within 24 h; failed requests fall back to single calls.",
    )
    bandwagon_percent = forms.IntegerField(
        required=False, min_value=0, max_value=100, help_text="Blank: the study's setting (85 by default)."
    )
    parser = forms.ChoiceField(choices=[(p, p) for p in parsers.PARSERS], initial=Parser.ROBUST)
    prompt_version = forms.ChoiceField(initial=prompts.DEFAULT_VERSION)
    seed = forms.IntegerField(initial=0)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["study"]).queryset = Study.objects.manageable_by(user).order_by("slug")
        cast(forms.ModelChoiceField, self.fields["judge"]).queryset = (
            Judge.objects.usable_by(user).exclude(kind=Judge.Kind.IMPORTED).filter(use_as_judge=True).order_by("name")
        )
        cast(forms.ChoiceField, self.fields["prompt_version"]).choices = [(v, v) for v in prompts.available_versions()]
