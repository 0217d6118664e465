"""The REST API (machine clients: study setup, exports, job control), under /api/."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.authtoken.views import ObtainAuthToken

from cobbler_site.foundation.access import Anyone
from cobbler_site.foundation.throttle import TokenRateThrottle
from cobbler_site.views import WhoAmIApi


class TokenApi(ObtainAuthToken):
    """POST username and password, get the user's API token (no account needed to ask)."""

    permission_classes = (Anyone,)
    # Per client IP (settings.THROTTLE_TOKEN), against password guessing; fails open.
    throttle_classes = (TokenRateThrottle,)


urlpatterns = [
    path("token/", TokenApi.as_view(), name="api-token"),
    path("me/", WhoAmIApi.as_view(), name="api-me"),
    path("", include("annotations.api_urls")),
    path("", include("judging.api_urls")),
    path("", include("analysis.api_urls")),
]
