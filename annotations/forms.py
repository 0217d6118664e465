from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from annotations.models import Condition, Study

GENERATABLE = [(c, Condition(c).label) for c in ("order", "bandwagon", "attentional", "plain", "ranking")]


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=64)
    from_study = forms.ModelChoiceField(
        queryset=Study.objects.none(), required=False, to_field_name="slug",
        help_text="Copy instructions, candidates and responses from an imported study or the demo.",
    )
    overlap = forms.IntegerField(min_value=1, max_value=50, initial=3)
    bandwagon_percent = forms.IntegerField(min_value=0, max_value=100, initial=85)
    lease_minutes = forms.IntegerField(min_value=1, max_value=24 * 60, initial=90)

    def __init__(self, *args: object, sources: QuerySet[Study], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["from_study"].queryset = sources

    def service_kwargs(self) -> dict:
        return dict(self.cleaned_data)


class GenerateBatchesForm(forms.Form):
    condition = forms.ChoiceField(choices=GENERATABLE)
    seed = forms.IntegerField(initial=1, min_value=0)
    pairs_per_batch = forms.IntegerField(initial=15, min_value=1, max_value=500)
    cobbler_design_dir = forms.CharField(
        required=False, max_length=500,
        help_text="Path to the CoBBLEr data: reproduces the original 750-task design instead of a fresh one.",
    )
