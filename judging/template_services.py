"""Researchers' own prompt templates: save a version, find one by name, choose one for a judge.

The one place the model form, the API and ``create_template`` go through, so all three check a
template the same way (``judging.prompts.templates.check``) and name the same problems.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from judging.models import PromptTemplate
from judging.prompts import templates
from judging.vocabulary import VerdictFormat


def save_template(
    *,
    owner: Any,
    name: str,
    user: str,
    verdict_format: str,
    system: str = "",
    verdict_spec: Mapping[str, Any] | None = None,
    labels: tuple[str, str] | list[str] = templates.DEFAULT_LABELS,
    reference_block: str = "{reference}",
) -> tuple[PromptTemplate, bool]:
    """(the version of template ``name`` with this content, whether it was created), owned by
    ``owner`` (None: public).

    Saving the same content again returns the version already saved; different content under
    the same name is a new version (the old one stays: judgments name it by its hash).
    TemplateError (nothing saved) when the template cannot be used.
    """
    if len(labels) != 2:
        raise templates.TemplateError("give exactly two answer labels")
    row = PromptTemplate(
        name=name,
        owner=owner,
        system=system,
        user=user,
        reference_block=reference_block,
        label_a=labels[0],
        label_b=labels[1],
        verdict_format=verdict_format,
        verdict_spec=dict(verdict_spec or {}) if verdict_format == VerdictFormat.REGEX else {},
    )
    try:
        row.full_clean(exclude=["content_hash", "version"])
    except ValidationError as exc:
        raise templates.TemplateError("; ".join(exc.messages)) from None
    content_hash = row.as_template().hash
    existing = PromptTemplate.objects.filter(owner=owner, name=name, content_hash=content_hash).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:  # the same version saved at the same moment
        return PromptTemplate.objects.get(owner=owner, name=name, content_hash=content_hash), False
    return row, True


def find_template(reference: str, *, user: Any = None, owner: Any = None) -> PromptTemplate | None:
    """A researcher's template by ``<name>@<hash12>`` or by name (its newest version), among the
    templates ``user`` may use (or, for the command line, owned by ``owner`` or nobody)."""
    if user is not None:
        usable = PromptTemplate.objects.usable_by(user)
    else:
        usable = PromptTemplate.objects.filter(owner=owner) | PromptTemplate.objects.filter(owner__isnull=True)
    if "@" in reference:
        return usable.filter(version=reference).first()
    return usable.filter(name=reference).order_by("-created_at", "-pk").first()
