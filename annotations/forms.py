from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from annotations.models import Condition, Study
from annotations.services.design import MAX_LETTER_MAP_BYTES, parse_cobbler_letter_map

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
    # An upload, not a server path: the page never opens files on the server
    # (`manage.py generate_batches --cobbler-design DIR` still takes a directory).
    cobbler_design = forms.FileField(
        required=False, label="CoBBLEr design file",
        help_text="Optional: upload human_annotation_gt_formatted.json (human/batches/model_annotations/ of the "
                  "CoBBLEr data) to reproduce the original 750-task design instead of a fresh one.",
    )

    def clean_cobbler_design(self) -> list[dict[str, str]] | None:
        """The uploaded letter map, parsed; a file that is not one is a form error, never a 500."""
        upload = self.cleaned_data.get("cobbler_design")
        if not upload:
            return None
        if upload.size > MAX_LETTER_MAP_BYTES:
            raise forms.ValidationError(f"The design file is larger than {MAX_LETTER_MAP_BYTES // 1024} KB.")
        return parse_cobbler_letter_map(upload.read(MAX_LETTER_MAP_BYTES + 1), "The design file")
