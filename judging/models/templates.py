"""A researcher's own prompt template: the same fields as a built-in one (judging.prompts.templates),
owned like a study, versioned by the hash of its content."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from cobbler_site.foundation.access import owned_by
from judging.prompts import templates
from judging.vocabulary import VerdictFormat


class PromptTemplateQuerySet(models.QuerySet):
    def usable_by(self, user: Any) -> PromptTemplateQuerySet:
        """The one access rule (cobbler_site.foundation.access.owned_by): a researcher's own templates and
        the ones nobody owns (made with ``create_template`` without ``--owner``); superusers all.
        Another researcher's template is a 404, never a 403."""
        return self.filter(owned_by(user, "owner"))


class PromptTemplate(models.Model):
    """One version of a researcher's template. Its content never changes once saved: editing
    means saving a new row (same name, new hash), so every judgment's ``template_hash`` still
    names words that exist. ``version`` = ``<name>@<first 12 hex of the hash>``."""

    name = models.SlugField(max_length=64)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="prompt_templates"
    )
    system = models.TextField(blank=True, max_length=templates.MAX_SYSTEM)
    user = models.TextField(max_length=templates.MAX_USER)
    reference_block = models.TextField(blank=True, default="{reference}", max_length=templates.MAX_REFERENCE_BLOCK)
    label_a = models.CharField(max_length=templates.MAX_LABEL, default=templates.DEFAULT_LABELS[0])
    label_b = models.CharField(max_length=templates.MAX_LABEL, default=templates.DEFAULT_LABELS[1])
    verdict_format = models.CharField(max_length=16, choices=VerdictFormat, default=VerdictFormat.ARENA_HARD)
    # A regex verdict format's spec (judging.verdicts.regex_spec); {} for the other formats.
    verdict_spec = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, editable=False)
    version = models.CharField(max_length=80, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PromptTemplateQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "name", "content_hash"], name="one_template_version_per_owner"),
        ]

    def __str__(self) -> str:
        return self.version or self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk and type(self).objects.filter(pk=self.pk).exclude(content_hash=self.as_template().hash).exists():
            raise ValueError("a prompt template's content never changes; save a new version instead")
        if self.verdict_format != VerdictFormat.REGEX:
            self.verdict_spec = {}
        self.content_hash = self.as_template().hash
        self.version = f"{self.name}@{self.content_hash[:12]}"
        super().save(*args, **kwargs)

    def as_template(self) -> templates.Template:
        return templates.Template(
            version=self.version or self.name,
            verdict_format=self.verdict_format,
            verdict_spec=self.verdict_spec if self.verdict_format == VerdictFormat.REGEX else None,
            system=self.system,
            user=self.user,
            labels=(self.label_a, self.label_b),
            reference_block=self.reference_block,
        )

    def clean(self) -> None:
        try:
            templates.check(
                system=self.system,
                user=self.user,
                verdict_format=self.verdict_format,
                verdict_spec=self.verdict_spec if self.verdict_format == VerdictFormat.REGEX else None,
                labels=(self.label_a, self.label_b),
                reference_block=self.reference_block,
            )
        except templates.TemplateError as exc:
            raise ValidationError(str(exc), code="bad_template") from None
