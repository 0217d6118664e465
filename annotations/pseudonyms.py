"""Crowd-platform ids are personal data: we keep only keyed hashes of them."""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings


def pseudonymise(platform: str, raw_id: str) -> str:
    """HMAC-SHA256 of ``platform:raw_id`` under PSEUDONYM_KEY (hex, 64 chars).

    Keyed, so a leaked database cannot be joined to public MTurk/Prolific ids
    by hashing candidate ids; stable, so re-imports and returning workers match.
    """
    message = f"{platform}:{raw_id.strip()}".encode()
    return hmac.new(settings.PSEUDONYM_KEY.encode(), message, hashlib.sha256).hexdigest()
