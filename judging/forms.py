from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from annotations.models import Study
from judging import conditions, parsers, prompts
from judging.models import Judge, JudgeJob


class JudgeForm(forms.ModelForm):
    # Write-only: never rendered back (render_value=False); blank keeps the stored key.
    api_key = forms.CharField(
        required=False, strip=True, widget=forms.PasswordInput(render_value=False),
        help_text="Stored encrypted. Leave blank to keep the current key.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    # Checked against JUDGE_ALLOWED_HOSTS by the model's validator; a new URL drops the key.
    base_url = forms.URLField(required=False, max_length=500, assume_scheme="http",
                              help_text="Changing it removes the judge's key (set a new one here).")

    class Meta:
        model = Judge
        fields = (
            "name", "kind", "baseline", "base_url", "model", "api_key_env", "generation",
            "max_concurrency", "requests_per_minute", "price_in_per_1k", "price_out_per_1k",
            "self_candidate_key", "request_timeout", "transport", "is_shared", "shared_with",
        )
        widgets = {"shared_with": forms.CheckboxSelectMultiple}

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        prefix = settings.JUDGE_KEY_ENV_PREFIX
        self.fields["api_key_env"].help_text = f"A variable whose name starts with {prefix}, e.g. {prefix}OPENAI."
        owner_id = self.instance.owner_id if self.instance.pk else getattr(user, "pk", None)
        self.fields["shared_with"].queryset = (
            get_user_model().objects.filter(is_staff=True, is_active=True).exclude(pk=owner_id).order_by("username")
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        kind = data.get("kind")
        if kind == Judge.Kind.OPENAI and not (data.get("base_url") and data.get("model")):
            raise forms.ValidationError("An endpoint judge needs a base URL and a model.")
        if kind == Judge.Kind.BASELINE and not data.get("baseline"):
            raise forms.ValidationError("Choose which baseline this judge is.")
        return data


class JobForm(forms.Form):
    # Narrowed to the studies the user manages (Study.objects.manageable_by) in __init__.
    study = forms.ModelChoiceField(queryset=Study.objects.none())
    # Narrowed to the judges the user may use (Judge.objects.usable_by) in __init__.
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    conditions = forms.MultipleChoiceField(
        choices=[(c, c) for c in conditions.SUPPORTED], initial=["order"],
        widget=forms.CheckboxSelectMultiple,
        help_text="Egocentric and salience are read from the order run.",
    )
    pair_set = forms.ChoiceField(choices=JudgeJob.PairSet.choices, initial=JudgeJob.PairSet.ALL)
    budget_usd = forms.DecimalField(required=False, min_value=0, decimal_places=4, label="Budget (USD)")
    bandwagon_percent = forms.IntegerField(required=False, min_value=0, max_value=100,
                                           help_text="Blank: the study's setting (85 by default).")
    parser = forms.ChoiceField(choices=[(p, p) for p in parsers.PARSERS], initial="robust")
    prompt_version = forms.ChoiceField(initial=prompts.DEFAULT_VERSION)
    seed = forms.IntegerField(initial=0)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["study"].queryset = Study.objects.manageable_by(user).order_by("slug")
        self.fields["judge"].queryset = (
            Judge.objects.usable_by(user).exclude(kind=Judge.Kind.IMPORTED).order_by("name")
        )
        self.fields["prompt_version"].choices = [(v, v) for v in prompts.available_versions()]
