"""Encryption of judge API keys at rest: Fernet (``cryptography``), keys from the environment.

``FIELD_ENCRYPTION_KEY`` encrypts (any string: it is stretched to a Fernet key with SHA-256;
unset, ``SECRET_KEY`` is used). Rotation: move the old value to ``FIELD_ENCRYPTION_OLD_KEYS``
(comma-separated), set a new ``FIELD_ENCRYPTION_KEY``, restart, and run
``manage.py rotate_field_key``, which re-encrypts every stored key with the new one; then the
old value can be dropped. Until then both decrypt (``MultiFernet``).
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.views.decorators.debug import sensitive_variables


@cache
def _fernet(secret: str) -> Fernet:
    # Fernet wants 32 url-safe base64 bytes; any configured secret is stretched to that.
    digest = hashlib.sha256(("cobbler-judge-key:" + secret).encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def _keys() -> MultiFernet:
    """The current key first (it encrypts), then the old ones (they only decrypt)."""
    old = [s for s in settings.FIELD_ENCRYPTION_OLD_KEYS if s]
    return MultiFernet([_fernet(settings.FIELD_ENCRYPTION_KEY), *map(_fernet, old)])


@sensitive_variables("secret")  # a DEBUG 500 page lists frame variables
def encrypt(secret: str) -> str:
    return _keys().encrypt(secret.encode()).decode()


def decrypt(token: str) -> str:
    """Raise ValueError (never showing the token) when the key cannot be decrypted."""
    try:
        return _keys().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError("stored API key cannot be decrypted with FIELD_ENCRYPTION_KEY") from None


def rotate(token: str) -> str:
    """``token`` re-encrypted with the current key (ValueError if no configured key opens it)."""
    try:
        return _keys().rotate(token.encode()).decode()
    except InvalidToken:
        raise ValueError("stored API key cannot be decrypted with FIELD_ENCRYPTION_KEY") from None
