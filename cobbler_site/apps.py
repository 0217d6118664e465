"""The site itself as an app: what happens once, when Django starts (never at settings import)."""

from __future__ import annotations

from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class SiteConfig(AppConfig):
    name = "cobbler_site"
    verbose_name = "CoBBLEr platform"

    def ready(self) -> None:
        # The folders the embedded mode writes to (SQLite, the filesystem broker, the cache) and
        # STATIC_ROOT (whitenoise warns on every request without it). Made here, before any
        # connection or request, so reading the settings module has no side effect.
        for path in settings.RUNTIME_DIRS:
            Path(path).mkdir(parents=True, exist_ok=True)
