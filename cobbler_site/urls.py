from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from cobbler_site import views
from cobbler_site.foundation import throttle
from cobbler_site.foundation.access import Audience, allow

# Brute-force limit on the admin login (per client IP, POSTs only; cobbler_site.foundation.throttle).
admin.site.login = throttle.limit("admin-login", "THROTTLE_LOGIN", methods=("POST",))(  # type: ignore[method-assign]
    admin.site.login  # wrapped on purpose: the admin site has no hook for a login limit
)

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        allow(Audience.PUBLIC)(
            throttle.limit("login", "THROTTLE_LOGIN", methods=("POST",))(auth_views.LoginView.as_view())
        ),
        name="login",
    ),
    path("accounts/logout/", allow(Audience.PUBLIC)(auth_views.LogoutView.as_view()), name="logout"),
    path("api/schema/", views.SchemaApi.as_view(), name="api-schema"),
    path("api/docs/", views.SwaggerDocs.as_view(), name="api-docs"),
    path("api/redoc/", views.RedocDocs.as_view(), name="api-redoc"),
    path("api/", include("cobbler_site.api_urls")),
    path("", include("annotations.urls")),
    path("", include("judging.urls")),
    path("", include("analysis.urls")),
]

# Under /api/ errors are JSON ({"detail": ...}) like DRF's own; elsewhere Django's pages.
handler400 = "cobbler_site.foundation.api_errors.bad_request"
handler403 = "cobbler_site.foundation.api_errors.permission_denied"
handler404 = "cobbler_site.foundation.api_errors.page_not_found"
handler500 = "cobbler_site.foundation.api_errors.server_error"
