"""The start forms of a generation job (the UI twin of ``manage.py generate_answers``) and of a
rewrite job (``manage.py run_rewrites``)."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.db.models import QuerySet

from annotations.models import Study
from annotations.vocabulary import RewriteKind
from judging.generate import prompts
from judging.models import GenerationJob, RegisteredModel


def generator_models(user: Any) -> QuerySet[RegisteredModel]:
    """The registered models ``user`` may have write answers (or rewrite them)."""
    return (
        RegisteredModel.objects.usable_by(user)
        .filter(kind=RegisteredModel.Kind.OPENAI, use_as_generator=True)
        .order_by("name")
    )


class GenerationForm(forms.Form):
    # Narrowed in __init__: studies the user manages, generator models the user may use.
    study = forms.ModelChoiceField(queryset=Study.objects.none())
    model = forms.ModelChoiceField(
        queryset=RegisteredModel.objects.none(), help_text="A registered model with “use as generator” on."
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
        cast(forms.ModelChoiceField, self.fields["model"]).queryset = generator_models(user)


class RewriteForm(forms.Form):
    """A rewrite job of one study (the page's own, so no study field)."""

    model = forms.ModelChoiceField(
        queryset=RegisteredModel.objects.none(), help_text="A registered model with “use as generator” on."
    )
    kind = forms.ChoiceField(
        choices=[(kind.value, f"{kind.value}: {kind.label}") for kind in RewriteKind], initial=RewriteKind.SENTIMENT
    )
    # Every kind's versions are offered; plan_rewrite_job refuses one of another kind (a JobError).
    prompt_version = forms.ChoiceField(
        required=False,
        choices=[("", "The kind's current prompt"), *((v, v) for v in sorted(prompts.REWRITE_PROMPTS))],
    )
    max_tokens = forms.IntegerField(
        required=False, min_value=1, initial=1024, help_text="Room for the whole rewrite: a cut-off one is unusable."
    )
    budget_usd = forms.DecimalField(required=False, min_value=0, decimal_places=4, label="Budget (USD)")
    mode = forms.ChoiceField(choices=GenerationJob.Mode.choices, initial=GenerationJob.Mode.SYNC)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["model"]).queryset = generator_models(user)
