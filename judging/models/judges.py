from __future__ import annotations

import hashlib
import json
import os
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.views.decorators.debug import sensitive_variables

from judging import crypto, endpoints, generation_params, vocabulary
from judging.models.grants import KeyNotGranted, check_key_use, validate_api_key_env
from judging.models.templates import PromptTemplate
from judging.prompts import templates


def validate_base_url(value: str) -> None:
    if value:
        try:
            endpoints.check_base_url(value)
        except ValueError as exc:
            raise ValidationError(str(exc), code="base_url_not_allowed") from None


def validate_generation(value: Any) -> None:
    """Only the allow-listed sampling parameters (judging.generation_params), with their types and ranges."""
    try:
        generation_params.check(value)
    except generation_params.GenerationParamError as exc:
        raise ValidationError(str(exc), code="generation_not_allowed") from None


def validate_builtin_template(value: str) -> None:
    if value and not templates.is_builtin(value):
        raise ValidationError(
            f"Unknown prompt template {value!r}; built-ins: {', '.join(templates.builtin_versions())}.",
            code="unknown_template",
        )


class RegisteredModelQuerySet(models.QuerySet):
    """The one access rule for registered models (judges and generators).

    Public judges (no owner: the built-in baselines, imported evaluators, the demo judge
    and judges made with ``create_judge`` without ``--owner``) and judges shared with
    everyone are usable by every researcher (staff); a private judge only by its owner,
    the users it is shared with, and superusers. Only the owner or a superuser may edit one;
    a judge without an owner only a superuser.
    """

    def usable_by(self, user: Any) -> RegisteredModelQuerySet:
        if not (user is not None and getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
            return self.none()
        if user.is_superuser:
            return self
        visible = Q(owner__isnull=True) | Q(owner=user) | Q(is_shared=True) | Q(shared_with=user)
        return self.filter(pk__in=RegisteredModel.objects.filter(visible).values("pk"))

    def editable_by(self, user: Any) -> RegisteredModelQuerySet:
        if not (user is not None and getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
            return self.none()
        return self if user.is_superuser else self.filter(owner=user)


class RegisteredModel(models.Model):
    """A registered model: the one record per OpenAI-compatible model (or built-in baseline,
    or imported evaluator). It can judge pairs, write candidate answers, or both; when one
    model does both in a study, its judge jobs measure self-preference (egocentric bias)
    against its own answers. (It was called ``Judge`` until migration 0015; URLs, the API and
    ``create_judge`` keep the word "judge", which names the role its jobs use it in.)
    """

    Kind = vocabulary.ModelKind
    Baseline = vocabulary.Baseline
    # A taken name, whoever holds it: "exists" would confirm another researcher's private model
    # (as annotations' SLUG_NOT_AVAILABLE for study slugs). Used by the form and create_judge.
    NAME_NOT_AVAILABLE = "This name is not available; choose another."

    name = models.SlugField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=Kind)
    baseline = models.CharField(max_length=16, choices=Baseline, blank=True)
    # Checked against JUDGE_ALLOWED_HOSTS here and before every call (judging.endpoints).
    base_url = models.URLField(max_length=500, blank=True, validators=[validate_base_url])
    model = models.CharField(max_length=200, blank=True)
    # The key is read from this environment variable (named with JUDGE_KEY_ENV_PREFIX), or
    # from the encrypted field; it is never rendered in a page, an API response or a log line.
    # A key belongs to its endpoint: changing base_url drops both (see save()).
    api_key_env = models.CharField(max_length=100, blank=True, validators=[validate_api_key_env])
    api_key_encrypted = models.TextField(blank=True)
    # Private to its owner unless shared (with everyone, or with named users); no owner = public.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="judges")
    is_shared = models.BooleanField(default=False, help_text="Every researcher may use this judge.")
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="shared_judges",
        help_text="Researchers who may use this judge.",
    )
    # Sampling settings sent with every request: only judging.generation_params.ALLOWED, checked
    # here and again before every request (judging.llm.complete).
    generation = models.JSONField(default=dict, blank=True, validators=[validate_generation])
    max_concurrency = models.PositiveIntegerField(default=8)
    requests_per_minute = models.PositiveIntegerField(default=600)
    price_in_per_1k = models.DecimalField(max_digits=10, decimal_places=6, default=Decimal("0"))
    price_out_per_1k = models.DecimalField(max_digits=10, decimal_places=6, default=Decimal("0"))
    seed = models.BigIntegerField(default=0)
    # The candidate key that is this judge's own model (egocentric bias), if any.
    self_candidate_key = models.CharField(max_length=64, blank=True)
    # Seconds the client waits for one call; retries are ours, never the SDK's.
    request_timeout = models.FloatField(default=60.0)

    Transport = vocabulary.Transport

    transport = models.CharField(max_length=8, choices=Transport, default=Transport.OPENAI)
    # Roles in the registry: a judge, a candidate answer generator, or both.
    use_as_judge = models.BooleanField(default=True, help_text="May be used to judge pairs.")
    use_as_generator = models.BooleanField(
        default=True, help_text="May write candidate answers for a study's instructions."
    )
    # Provider limits shared by every worker process (0 = no limit): requests and tokens
    # per minute, enforced by a token bucket in Redis (the database in embedded mode).
    tokens_per_minute = models.PositiveIntegerField(default=0)
    # Batch API prices; blank = half the synchronous price (OpenAI's Batch discount).
    batch_price_in_per_1k = models.DecimalField(max_digits=10, decimal_places=6, null=True, blank=True)
    batch_price_out_per_1k = models.DecimalField(max_digits=10, decimal_places=6, null=True, blank=True)
    # The prompt this judge is asked with: none = the CoBBLEr prompt (its version chosen per job),
    # else a built-in template (``prompt_template``, judging.prompts.templates) or a researcher's
    # own (``own_template``), never both. The template names the verdict format.
    prompt_template = models.CharField(max_length=80, blank=True, validators=[validate_builtin_template])
    own_template = models.ForeignKey(PromptTemplate, models.PROTECT, null=True, blank=True, related_name="judges")
    # How this judge's raw text is read (judging.verdicts): copied from its template on save;
    # set directly only for imported judges (their outputs came from prompts we never sent).
    verdict_format = models.CharField(
        max_length=16, choices=vocabulary.VerdictFormat, default=vocabulary.VerdictFormat.COBBLER
    )
    verdict_spec = models.JSONField(default=dict, blank=True)  # the regex format's spec, else {}
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RegisteredModelQuerySet.as_manager()

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A new base_url drops the key, unless this same change sets a new one."""
        loaded = getattr(self, "_loaded", {})
        update_fields = kwargs.get("update_fields")
        writes_url = update_fields is None or "base_url" in update_fields
        if writes_url and "base_url" in loaded and self.base_url.rstrip("/") != loaded["base_url"].rstrip("/"):
            if self.api_key_encrypted == loaded.get("api_key_encrypted"):
                self.api_key_encrypted = ""
            if self.api_key_env == loaded.get("api_key_env"):
                self.api_key_env = ""
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "api_key_encrypted", "api_key_env"}
        if update_fields is None or {"prompt_template", "own_template"} & set(update_fields):
            self._sync_verdict_format()
            if update_fields is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "verdict_format", "verdict_spec"}
        super().save(*args, **kwargs)
        self._loaded = {
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "api_key_encrypted": self.api_key_encrypted,
        }

    @classmethod
    def from_db(cls, db, field_names, values):  # Django's signature
        judge = super().from_db(db, field_names, values)
        judge._loaded = {
            f: getattr(judge, f) for f in ("base_url", "api_key_env", "api_key_encrypted") if f in field_names
        }
        return judge

    def clean(self) -> None:
        # The owner must hold a grant for a server key variable (judging.models.grants).
        refusal = self.key_refusal()
        if refusal:
            raise ValidationError({"api_key_env": refusal}, code="key_not_granted")
        self._check_template()

    def _check_template(self) -> None:
        if self.prompt_template and self.own_template_id:
            raise ValidationError("Choose a built-in prompt template or your own, not both.", code="two_templates")
        has_template = bool(self.prompt_template or self.own_template_id)
        if has_template and self.kind != self.Kind.OPENAI:
            raise ValidationError("Only an endpoint model is prompted with a template.", code="template_kind")
        if has_template:
            self._sync_verdict_format()
        elif self.kind == self.Kind.OPENAI and self.verdict_format != vocabulary.VerdictFormat.COBBLER:
            # The CoBBLEr prompt asks for "System _ is better"; another format would read nothing.
            raise ValidationError(
                "A judge asked with the CoBBLEr prompt answers in the cobbler format; "
                "choose a prompt template to use another verdict format.",
                code="format_without_template",
            )

    def key_refusal(self) -> str:
        """Why this model may not use its server key variable ("" when it may)."""
        try:
            check_key_use(self._env_key_name(), self.owner)
        except KeyNotGranted as exc:
            return str(exc)
        return ""

    def _env_key_name(self) -> str:
        """The variable to read, only if it carries the configured prefix."""
        name = self.api_key_env
        prefix = settings.JUDGE_KEY_ENV_PREFIX
        return name if name and name.startswith(prefix) and name != prefix else ""

    @property
    def has_api_key(self) -> bool:
        env = self._env_key_name()
        return bool(self.api_key_encrypted or (env and os.environ.get(env)))

    @sensitive_variables("raw")  # a DEBUG 500 page lists frame variables
    def set_api_key(self, raw: str) -> None:
        """Store ``raw`` encrypted (empty clears it). Caller saves."""
        self.api_key_encrypted = crypto.encrypt(raw) if raw else ""

    def get_api_key(self) -> str:
        """The key for the endpoint: the named env var wins over the stored one.

        Never log or render the result. Returns "" when the endpoint needs none
        (local servers such as the simulator, vLLM or Ollama). Raises KeyNotGranted when the
        row names a server key variable its owner holds no grant for: checked here, at send
        time, whatever the row went through when it was saved.
        """
        env = self._env_key_name()  # never any other variable, whatever the row says
        check_key_use(env, self.owner)
        if env and os.environ.get(env):
            return os.environ[env]
        if self.api_key_encrypted:
            return crypto.decrypt(self.api_key_encrypted)
        return ""

    def cache_identity(self) -> str:
        """What makes two calls with the same messages interchangeable (Inspect's cache key)."""
        ident = {
            "kind": self.kind,
            "baseline": self.baseline,
            "base_url": self.base_url.rstrip("/"),
            "model": self.model,
            "generation": self.generation,
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def price(self, tokens_in: int, tokens_out: int, *, batch: bool = False) -> Decimal:
        """USD for one call; ``batch`` prices it as a Batch API request."""
        price_in, price_out = self.price_in_per_1k, self.price_out_per_1k
        if batch:
            half = Decimal("0.5")
            price_in = self.batch_price_in_per_1k if self.batch_price_in_per_1k is not None else price_in * half
            price_out = self.batch_price_out_per_1k if self.batch_price_out_per_1k is not None else price_out * half
        return (price_in * tokens_in + price_out * tokens_out) / Decimal(1000)

    def template(self) -> templates.Template | None:
        """The judge's prompt template, or None for the CoBBLEr prompt."""
        if self.own_template_id:
            assert self.own_template is not None
            return self.own_template.as_template()
        return templates.builtin(self.prompt_template) if self.prompt_template else None

    def _sync_verdict_format(self) -> None:
        """A templated judge's answers are read with its template's format, so the two cannot drift."""
        try:
            template = self.template()
        except ValueError:
            return  # an unknown built-in: the field validator says so
        if template is not None:
            self.verdict_format = template.verdict_format
            self.verdict_spec = dict(template.verdict_spec or {})
