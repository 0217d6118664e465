"""The start form of a generation job (the UI twin of ``manage.py generate_answers``)."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from annotations.models import Study
from judging.models import GenerationJob, Judge


class GenerationForm(forms.Form):
    # Narrowed in __init__: studies the user manages, generator models the user may use.
    study = forms.ModelChoiceField(queryset=Study.objects.none())
    model = forms.ModelChoiceField(
        queryset=Judge.objects.none(), help_text="A registered model with “use as generator” on."
    )
    candidate_key = forms.CharField(
        required=False, max_length=64, help_text="The new candidate's key in the study. Blank: the model's name."
    )
    max_tokens = forms.IntegerField(required=False, min_value=1, initial=512)
    budget_usd = forms.DecimalField(required=False, min_value=0, decimal_places=4, label="Budget (USD)")
    pair_policy = forms.ChoiceField(choices=GenerationJob.PairPolicy.choices, initial=GenerationJob.PairPolicy.ALL)
    pair_sample_size = forms.IntegerField(
        required=False, min_value=1, help_text="Only for a sample: how many new pairs to add."
    )
    seed = forms.IntegerField(initial=0, help_text="Seeds the pair sample.")
    mode = forms.ChoiceField(choices=GenerationJob.Mode.choices, initial=GenerationJob.Mode.SYNC)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["study"]).queryset = Study.objects.manageable_by(user).order_by("slug")
        cast(forms.ModelChoiceField, self.fields["model"]).queryset = (
            Judge.objects.usable_by(user).filter(kind=Judge.Kind.OPENAI, use_as_generator=True).order_by("name")
        )
