"""The site's plumbing: settings helpers, admin for every model, the API schema and auth."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cobbler_site import settings as site_settings
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.smoke


def test_env_helpers_reject_bad_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        site_settings.env_bool("X_BOOL", False)
    monkeypatch.setenv("X_INT", "ten")
    with pytest.raises(ImproperlyConfigured, match="X_INT"):
        site_settings.env_int("X_INT", 1)
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert site_settings.env_list("X_LIST", []) == ["a", "b", "c"]


def test_it_refuses_the_dev_secret_key_when_debug_is_off():
    env = {**os.environ, "DEBUG": "0"}
    env.pop("SECRET_KEY", None)
    result = subprocess.run(
        [sys.executable, "-c", "import cobbler_site.settings"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_reading_the_settings_writes_nothing_and_starting_django_makes_the_folders(tmp_path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"DEBUG": "1", "DATA_DIR": str(data), "STATIC_ROOT": str(tmp_path / "static")}
    read = subprocess.run(
        [sys.executable, "-c", "import cobbler_site.settings"],
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
    )
    assert read.returncode == 0, read.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no var/, no static/, no control/
    started = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    assert {p.name for p in (data / "broker").iterdir()} == {"queue", "processed", "control"}
    assert (tmp_path / "static").is_dir()


def test_every_model_is_in_the_admin():
    ours = [m for m in apps.get_models() if m._meta.app_label in {"annotations", "judging", "analysis"}]
    assert ours, "no models found"
    missing = [m.__name__ for m in ours if not admin.site.is_registered(m)]
    assert missing == []


@pytest.mark.django_db
def test_every_admin_changelist_renders(admin_client):
    for model in admin.site._registry:
        if model._meta.app_label not in {"annotations", "judging", "analysis"}:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert admin_client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_healthz_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_openapi_schema_is_served_to_staff(admin_client):
    response = admin_client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content


@pytest.mark.django_db
def test_api_requires_a_valid_token(researcher, django_user_model):
    client = APIClient()
    assert client.get("/api/me/").status_code == 401
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/me/").status_code == 401
    token = Token.objects.create(user=researcher)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get("/api/me/")
    assert response.status_code == 200
    assert response.json() == {"username": "alice", "is_staff": True}


@pytest.mark.django_db
def test_api_refuses_non_staff_users(django_user_model):
    user = django_user_model.objects.create_user("mallory", password="x")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert client.get("/api/me/").status_code == 403


@pytest.mark.django_db
def test_token_endpoint_issues_tokens(researcher):
    response = APIClient().post("/api/token/", {"username": "alice", "password": "alice-password"})
    assert response.status_code == 200
    assert Token.objects.get(user=researcher).key == response.json()["token"]


@pytest.mark.django_db
def test_dashboard_is_for_staff_only(client, researcher):
    assert client.get(reverse("analysis:dashboard")).status_code == 302
    client.force_login(researcher)
    assert client.get(reverse("analysis:dashboard")).status_code == 200


def test_reports_carry_null_where_a_statistic_is_undefined():
    from analysis.report import _without_non_finite

    cleaned = _without_non_finite(
        {
            "agreement": [{"value": 0.7, "ci95": [float("nan"), float("nan")]}],
            "length_control": {"headline_share": float("inf"), "ci95": [0.1, 0.2]},
        }
    )
    assert cleaned == {
        "agreement": [{"value": 0.7, "ci95": None}],
        "length_control": {"headline_share": None, "ci95": [0.1, 0.2]},
    }
