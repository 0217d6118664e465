"""Who may use a server key: an admin grants a ``JUDGE_KEY_*`` variable to users and groups.

A server key variable (set in the server's environment by an admin, e.g. the lab's
``JUDGE_KEY_OPENAI``) is sent to whatever base URL a model names, so naming it must not be
enough to spend it. ``check_key_use`` is the one rule, called when a model is saved (its
``clean``) and again when a key is read for a request (``RegisteredModel.get_api_key``), so a row
written around the validators still cannot use an ungranted key:

- a model without an owner (made by ``create_judge`` without ``--owner`` or by a superuser
  in the admin) is the server operator's, who set the variable in the first place;
- a superuser owner may use any variable;
- any other owner only a variable granted to them or to one of their groups.

A variable's name must carry ``JUDGE_KEY_ENV_PREFIX`` (``validate_api_key_env``), for a grant
and a model alike.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from judging.key_refusal import KeyNotGranted, refusal_message

__all__ = ("KeyGrant", "KeyNotGranted", "check_key_use", "may_use_key", "validate_api_key_env")


def validate_api_key_env(value: str) -> None:
    """A judge may only read variables named with JUDGE_KEY_ENV_PREFIX (never PATH, DATABASE_URL...)."""
    prefix = settings.JUDGE_KEY_ENV_PREFIX
    if value and (not value.startswith(prefix) or value == prefix):
        raise ValidationError(
            f"The key variable must start with {prefix} (e.g. {prefix}OPENAI); "
            "or leave it blank and type the key, which is stored encrypted.",
            code="api_key_env_prefix",
        )


class KeyGrant(models.Model):
    variable = models.CharField(
        max_length=100,
        unique=True,
        help_text="A server key variable, e.g. JUDGE_KEY_OPENAI (the value stays in the environment).",
    )
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="key_grants")
    groups = models.ManyToManyField(Group, blank=True, related_name="key_grants")
    note = models.CharField(max_length=200, blank=True, help_text="Why, for whom (shown only in the admin).")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.variable

    def clean(self) -> None:
        validate_api_key_env(self.variable)


def may_use_key(variable: str, owner: Any) -> bool:
    if not variable or owner is None:
        return True
    if owner.is_superuser and owner.is_active:
        return True
    if not owner.is_active:
        return False
    return KeyGrant.objects.filter(Q(users=owner) | Q(groups__in=owner.groups.all()), variable=variable).exists()


def check_key_use(variable: str, owner: Any) -> None:
    """Raise KeyNotGranted unless the model owned by ``owner`` may send ``variable``'s key."""
    if not may_use_key(variable, owner):
        raise KeyNotGranted(refusal_message(variable, owner.get_username()))
