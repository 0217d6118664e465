"""`rotate_field_key`: re-encrypt every stored model key with the current FIELD_ENCRYPTION_KEY.

Rotation: put the old value in FIELD_ENCRYPTION_OLD_KEYS, set the new FIELD_ENCRYPTION_KEY,
restart, run this, then drop the old value. A key that no configured value decrypts stops the
command with one line and nothing changed (one transaction).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from judging import crypto
from judging.models import RegisteredModel


class Command(BaseCommand):
    help = "Re-encrypt stored model API keys with the current FIELD_ENCRYPTION_KEY."

    def handle(self, *args: Any, **o: Any) -> None:
        rotated = 0
        with transaction.atomic():
            for judge in RegisteredModel.objects.select_for_update().exclude(api_key_encrypted="").order_by("pk"):
                try:
                    token = crypto.rotate(judge.api_key_encrypted)
                except ValueError:
                    raise CommandError(
                        f"model {judge.name}: its stored key opens with neither FIELD_ENCRYPTION_KEY "
                        "nor FIELD_ENCRYPTION_OLD_KEYS; nothing changed"
                    ) from None
                # update(), not save(): the key stays with its unchanged base URL either way.
                RegisteredModel.objects.filter(pk=judge.pk).update(api_key_encrypted=token)
                rotated += 1
        self.stdout.write(f"{rotated} stored keys re-encrypted with the current FIELD_ENCRYPTION_KEY")
