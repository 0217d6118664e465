"""FIELD_ENCRYPTION_KEY rotation: old values still decrypt, `rotate_field_key` re-encrypts every
stored key with the current one, and a key no value opens stops it with nothing changed."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import crypto
from judging.models import RegisteredModel

OWN_KEY = "sk-own-" + "r" * 24


def _with_key(name: str = "mine") -> RegisteredModel:
    judge = RegisteredModel(name=name, kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
    judge.set_api_key(OWN_KEY)
    judge.save()
    return judge


def test_rotation_re_encrypts_with_the_new_key(db, settings, capsys):
    settings.FIELD_ENCRYPTION_KEY = "old-" + "o" * 40
    judge = _with_key()
    settings.FIELD_ENCRYPTION_KEY, settings.FIELD_ENCRYPTION_OLD_KEYS = "new-" + "n" * 40, ["old-" + "o" * 40]
    judge.refresh_from_db()
    assert judge.get_api_key() == OWN_KEY  # the old value still decrypts
    call_command("rotate_field_key")
    assert capsys.readouterr().out.strip() == "1 stored keys re-encrypted with the current FIELD_ENCRYPTION_KEY"
    settings.FIELD_ENCRYPTION_OLD_KEYS = []
    judge.refresh_from_db()
    assert judge.get_api_key() == OWN_KEY and OWN_KEY not in judge.api_key_encrypted


def test_a_key_no_value_opens_stops_rotation_and_changes_nothing(db, settings):
    settings.FIELD_ENCRYPTION_KEY = "lost-" + "l" * 40
    lost = _with_key("lost")
    settings.FIELD_ENCRYPTION_KEY = "new-" + "n" * 40
    kept = _with_key("kept")
    before = {j.pk: j.api_key_encrypted for j in RegisteredModel.objects.all()}
    with pytest.raises(CommandError, match="model lost: its stored key opens with neither"):
        call_command("rotate_field_key")
    assert {j.pk: j.api_key_encrypted for j in RegisteredModel.objects.all()} == before
    with pytest.raises(ValueError):
        crypto.decrypt(RegisteredModel.objects.get(pk=lost.pk).api_key_encrypted)
    assert RegisteredModel.objects.get(pk=kept.pk).get_api_key() == OWN_KEY
