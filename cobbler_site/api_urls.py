"""The REST API (machine clients: study setup, exports, job control), under /api/."""
from __future__ import annotations

from django.urls import include, path
from rest_framework.authtoken.views import obtain_auth_token

from cobbler_site.views import WhoAmIApi

urlpatterns = [
    path("token/", obtain_auth_token, name="api-token"),
    path("me/", WhoAmIApi.as_view(), name="api-me"),
    path("", include("annotations.api_urls")),
    path("", include("judging.api_urls")),
    path("", include("analysis.api_urls")),
]
