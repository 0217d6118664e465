from __future__ import annotations

from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from annotations.models import Study
from annotations.vocabulary import Condition
from cobbler_site.foundation.text_safety import StrictJSONFormField
from judging import conditions, generation_params, parsers, prompts
from judging.models import JudgeJob, PromptTemplate, RegisteredModel
from judging.prompts import templates
from judging.template_services import save_template
from judging.vocabulary import Parser, VerdictFormat

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
    (
        "Prompt and verdict format",
        (
            "template",
            "new_template_name",
            "template_system",
            "template_user",
            "template_verdict_format",
            "template_spec",
        ),
    ),
    ("Access", ("is_shared", "shared_with")),
)
# The template choice's values: "" (the CoBBLEr prompt), "builtin:<version>", "own:<pk>", or NEW.
NEW_TEMPLATE = "new"


def _check_kind(data: dict[str, Any]) -> None:
    kind = data.get("kind")
    if kind == RegisteredModel.Kind.OPENAI and not (data.get("base_url") and data.get("model")):
        raise forms.ValidationError("An endpoint model needs a base URL and a model.")
    if kind == RegisteredModel.Kind.BASELINE and not data.get("baseline"):
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
    template = forms.ChoiceField(
        required=False,
        label="Prompt template",
        help_text="Blank: the CoBBLEr prompt (its version chosen per job). A template names the verdict "
        "format its answers are read with.",
    )
    new_template_name = forms.SlugField(
        required=False, max_length=64, label="Your template's name", help_text="For a new template of your own."
    )
    template_system = forms.CharField(
        required=False,
        max_length=templates.MAX_SYSTEM,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="System message",
        help_text="Literal text (no placeholders).",
    )
    template_user = forms.CharField(
        required=False,
        max_length=templates.MAX_USER,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        label="User message",
        help_text="Must hold {instruction}, {answer_a} (shown first, 'A') and {answer_b} once each; optional "
        "{reference}, and the insertion points {cue} (bandwagon cue, distractor sentence) and {names} "
        "(the named-model variant). Write {{ and }} for a literal brace.",
    )
    template_verdict_format = forms.ChoiceField(
        required=False, choices=VerdictFormat.choices, initial=VerdictFormat.ARENA_HARD, label="Verdict format"
    )
    template_spec = StrictJSONFormField(
        required=False,
        label="Regex verdict spec",
        help_text='Only for the regex format: {"pattern": "...(one group)...", "labels": {"A": ["first", null], ...}}.',
    )
    # Unchecked checkboxes are absent from a POST, so the form marks that it showed the roles:
    # a client that never saw them (an older script) gets the default roles, not "no role".
    roles_shown = forms.BooleanField(required=False, initial=True, widget=forms.HiddenInput)

    class Meta:
        model = RegisteredModel
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
        error_messages = {"name": {"unique": RegisteredModel.NAME_NOT_AVAILABLE}}
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
        self._own_templates = PromptTemplate.objects.usable_by(user).order_by("name", "-created_at")
        if self.instance.own_template_id:  # a shared judge's template stays choosable by its editor
            self._own_templates = self._own_templates | PromptTemplate.objects.filter(pk=self.instance.own_template_id)
        cast(forms.ChoiceField, self.fields["template"]).choices = [
            ("", "CoBBLEr prompt"),
            ("Built-in", [(f"builtin:{v}", v) for v in templates.builtin_versions()]),
            ("Yours", [(f"own:{t.pk}", t.version) for t in self._own_templates.distinct()]),
            (NEW_TEMPLATE, "A new template of mine (below)"),
        ]
        if self.instance.own_template_id:
            self.initial.setdefault("template", f"own:{self.instance.own_template_id}")
        elif self.instance.prompt_template:
            self.initial.setdefault("template", f"builtin:{self.instance.prompt_template}")

    def clean_tokens_per_minute(self) -> int:
        return self.cleaned_data.get("tokens_per_minute") or 0

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        _check_kind(data)
        kind = data.get("kind")
        if not data.get("roles_shown"):
            data["use_as_judge"] = True
            data["use_as_generator"] = kind == RegisteredModel.Kind.OPENAI
        elif not (data.get("use_as_judge") or data.get("use_as_generator")):
            raise forms.ValidationError("Choose at least one role: judge, answer generator, or both.")
        if kind != RegisteredModel.Kind.OPENAI and data.get("use_as_generator"):
            self.add_error("use_as_generator", "Only an endpoint model can write answers.")
        self._clean_template(data)
        return data

    def _clean_template(self, data: dict[str, Any]) -> None:
        """Put the chosen template on the instance (a new one is saved in ``save``), so the
        model's own validation (RegisteredModel.clean) sees it."""
        self._new_template: dict[str, Any] | None = None
        if "template" not in self.data:
            return  # a client that never saw the field (an older script) keeps the judge's template
        choice = data.get("template") or ""
        builtin, own = "", None
        if choice.startswith("builtin:"):
            builtin = choice.removeprefix("builtin:")
        elif choice.startswith("own:"):
            own = self._own_templates.filter(pk=choice.removeprefix("own:")).first()
        elif choice == NEW_TEMPLATE:
            self._new_template = self._checked_new_template(data)
        if choice and data.get("kind") != RegisteredModel.Kind.OPENAI:
            self.add_error("template", "Only an endpoint model is prompted with a template.")
            builtin, own, self._new_template = "", None, None  # said once, here
        self.instance.prompt_template, self.instance.own_template = builtin, own
        if not (builtin or own):  # the CoBBLEr prompt, or a new template whose format save() copies
            self.instance.verdict_format, self.instance.verdict_spec = VerdictFormat.COBBLER, {}

    def _checked_new_template(self, data: dict[str, Any]) -> dict[str, Any] | None:
        fields: dict[str, Any] = {
            "name": data.get("new_template_name") or "",
            "system": data.get("template_system") or "",
            "user": data.get("template_user") or "",
            "verdict_format": data.get("template_verdict_format") or VerdictFormat.ARENA_HARD,
            "verdict_spec": data.get("template_spec") or None,
        }
        if not fields["name"]:
            self.add_error("new_template_name", "Name your template.")
            return None
        try:
            templates.check(
                system=fields["system"],
                user=fields["user"],
                verdict_format=fields["verdict_format"],
                verdict_spec=fields["verdict_spec"] if fields["verdict_format"] == VerdictFormat.REGEX else None,
            )
        except templates.TemplateError as exc:
            field = "template_spec" if str(exc).startswith("verdict spec") else "template_user"
            self.add_error(field, str(exc))
            return None
        return fields

    def save(self, commit: bool = True) -> RegisteredModel:
        judge = super().save(commit=False)
        if self._new_template is not None:
            owner = judge.owner or self.user
            judge.own_template, _created = save_template(owner=owner, **self._new_template)
        if commit:
            judge.save()
            self.save_m2m()
        return judge

    def fieldsets(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names if name in self.fields]) for title, names in FIELDSETS]


class ConnectionTestForm(forms.ModelForm):
    """The endpoint fields of the model form, to test values before (or without) saving them."""

    api_key = forms.CharField(required=False, strip=True, widget=forms.PasswordInput(render_value=False))
    base_url = forms.URLField(required=False, max_length=500, assume_scheme="http")

    class Meta:
        model = RegisteredModel
        fields = ("kind", "baseline", "base_url", "model", "api_key_env", "generation", "request_timeout", "transport")
        field_classes = {"generation": StrictJSONFormField}  # as JudgeForm: a form error, never a 500

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        _check_kind(data)
        return data

    def model_to_test(self) -> RegisteredModel:
        """The unsaved model these values describe, with the key they may use.

        A stored key goes with its endpoint only (as RegisteredModel.save does): for a changed base URL
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
    # Narrowed to the judges the user may use (RegisteredModel.objects.usable_by) in __init__.
    judge = forms.ModelChoiceField(queryset=RegisteredModel.objects.none())
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
    # Blank: the judge's own prompt template, else the default CoBBLEr prompt version.
    prompt_version = forms.ChoiceField(
        initial="",
        required=False,
        help_text=f"Blank: the judge's prompt template if it has one, else {prompts.DEFAULT_VERSION}.",
    )
    seed = forms.IntegerField(initial=0)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["study"]).queryset = Study.objects.manageable_by(user).order_by("slug")
        cast(forms.ModelChoiceField, self.fields["judge"]).queryset = (
            RegisteredModel.objects.usable_by(user)
            .exclude(kind=RegisteredModel.Kind.IMPORTED)
            .filter(use_as_judge=True)
            .order_by("name")
        )
        cast(forms.ChoiceField, self.fields["prompt_version"]).choices = [
            ("", "Default"),
            *((v, v) for v in prompts.available_versions()),
        ]
