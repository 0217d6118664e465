"""Encryption of judge API keys at rest (Fernet, key derived from settings)."""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@cache
def _fernet(secret: str) -> Fernet:
    # Fernet wants 32 url-safe base64 bytes; any configured secret is stretched to that.
    digest = hashlib.sha256(("cobbler-judge-key:" + secret).encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(plain: str) -> str:
    return _fernet(settings.FIELD_ENCRYPTION_KEY).encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    """Raise ValueError (never showing the token) when the key cannot be decrypted."""
    try:
        return _fernet(settings.FIELD_ENCRYPTION_KEY).decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError("stored API key cannot be decrypted with FIELD_ENCRYPTION_KEY") from None
