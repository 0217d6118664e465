"""Per-IP throttles (cobbler_site.foundation.throttle): limits on entry, login, token and admin login,
429 with Retry-After, and fail-open (logged) when the cache (Redis) is down."""

from __future__ import annotations

import logging
import uuid
from types import SimpleNamespace

import pytest
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.services.design import generate_batches
from cobbler_site.foundation import throttle
from tests.annotations.conftest import build_study

DEAD_REDIS = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
}


@pytest.fixture(autouse=True)
def one_window(monkeypatch):
    """The throttle counts in fixed windows (slot = now // window): a test whose requests
    straddle a minute boundary would see its count reset. Every test runs in one window."""
    start = throttle.time.time()
    monkeypatch.setattr(throttle, "time", SimpleNamespace(time=lambda: start))  # this module's clock only


def fresh_ip() -> str:
    """An address no other test used, so counts left in the shared cache don't interfere."""
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def test_parse_rate():
    assert throttle.parse_rate("30/min") == (30, 60)
    assert throttle.parse_rate("10/s") == (10, 1)
    assert throttle.parse_rate("5/hour") == (5, 3600)
    assert throttle.parse_rate("") is None and throttle.parse_rate("0/min") is None
    with pytest.raises(ValueError):
        throttle.parse_rate("lots")


def _open_study(slug: str):
    """A study with free places: a study without batches turns every arrival away at the door."""
    study = build_study(slug)
    generate_batches(study=study, condition="plain", seed=1, pairs_per_batch=1)
    return study


@pytest.mark.django_db
@override_settings(THROTTLE_START="30/min")
def test_the_31st_start_in_a_minute_from_one_ip_is_refused():
    study = _open_study("thr")
    client, ip = Client(), fresh_ip()
    for i in range(30):
        response = client.get(f"/s/{study.slug}/start?code=w{i}", REMOTE_ADDR=ip)
        assert response.status_code == 302, i
    refused = client.get(f"/s/{study.slug}/start?code=w31", REMOTE_ADDR=ip)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert b"Too many requests" in refused.content
    assert study.participants.count() == 30  # the refused entry created nobody
    # Another address is not affected.
    assert client.get(f"/s/{study.slug}/start?code=other", REMOTE_ADDR=fresh_ip()).status_code == 302


@pytest.mark.django_db
@override_settings(THROTTLE_START="2/min", TRUSTED_PROXY_COUNT=0)
def test_forwarded_for_is_ignored_without_trusted_proxies():
    study = build_study("thr2")
    client, ip = Client(), fresh_ip()
    for i in range(2):
        client.get(f"/s/{study.slug}/start?code=w{i}", REMOTE_ADDR=ip, HTTP_X_FORWARDED_FOR=fresh_ip())
    # A forged X-Forwarded-For does not give a fresh allowance.
    assert (
        client.get(f"/s/{study.slug}/start?code=w9", REMOTE_ADDR=ip, HTTP_X_FORWARDED_FOR=fresh_ip()).status_code == 429
    )


@pytest.mark.django_db
@override_settings(THROTTLE_START="2/min", TRUSTED_PROXY_COUNT=1)
def test_first_forwarded_hop_is_the_client_behind_a_trusted_proxy():
    study = _open_study("thr3")
    client, proxy, real = Client(), fresh_ip(), fresh_ip()
    for i in range(2):
        assert (
            client.get(
                f"/s/{study.slug}/start?code=w{i}", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"{real}, {proxy}"
            ).status_code
            == 302
        )
    assert (
        client.get(
            f"/s/{study.slug}/start?code=w3", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"{real}, {proxy}"
        ).status_code
        == 429
    )
    # Another client behind the same proxy still gets in.
    assert (
        client.get(f"/s/{study.slug}/start?code=w4", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=fresh_ip()).status_code
        == 302
    )


@pytest.mark.django_db
@override_settings(THROTTLE_LOGIN="3/min")
def test_login_posts_are_limited_per_ip(researcher):
    client, ip = Client(), fresh_ip()
    for _ in range(3):
        assert (
            client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR=ip).status_code
            == 200
        )
    refused = client.post("/accounts/login/", {"username": "alice", "password": "alice-password"}, REMOTE_ADDR=ip)
    assert refused.status_code == 429 and "Retry-After" in refused
    assert "_auth_user_id" not in client.session  # the right password did not get through
    # GETs of the form are not counted.
    assert client.get("/accounts/login/", REMOTE_ADDR=ip).status_code == 200


@pytest.mark.django_db
@override_settings(THROTTLE_LOGIN="2/min")
def test_admin_login_is_limited_per_ip(admin_user):
    client, ip = Client(), fresh_ip()
    for _ in range(2):
        assert (
            client.post("/admin/login/", {"username": "admin", "password": "wrong"}, REMOTE_ADDR=ip).status_code == 200
        )
    refused = client.post("/admin/login/", {"username": "admin", "password": "password"}, REMOTE_ADDR=ip)
    assert refused.status_code == 429 and "Retry-After" in refused


@pytest.mark.django_db
@override_settings(THROTTLE_TOKEN="3/min")
def test_token_endpoint_is_limited_per_ip(researcher):
    client, ip = APIClient(), fresh_ip()
    for _ in range(3):
        assert client.post("/api/token/", {"username": "alice", "password": "nope"}, REMOTE_ADDR=ip).status_code == 400
    refused = client.post("/api/token/", {"username": "alice", "password": "alice-password"}, REMOTE_ADDR=ip)
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "detail" in refused.json() and not Token.objects.filter(user=researcher).exists()


@pytest.mark.django_db
def test_the_api_user_throttle_still_limits(researcher, monkeypatch):
    from rest_framework.views import APIView

    assert throttle.FailOpenUserRateThrottle in APIView.throttle_classes
    scope = f"user-{uuid.uuid4().hex[:8]}"  # a bucket no other test (or run) has counted in
    monkeypatch.setattr(throttle.FailOpenUserRateThrottle, "scope", scope)
    monkeypatch.setattr(throttle.FailOpenUserRateThrottle, "THROTTLE_RATES", {scope: "2/min"})
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    codes = [client.get("/api/me/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]


@pytest.mark.django_db
@override_settings(CACHES=DEAD_REDIS, THROTTLE_START="30/min", THROTTLE_LOGIN="10/min", THROTTLE_TOKEN="10/min")
def test_everything_fails_open_when_redis_is_down(researcher, caplog):
    study = _open_study("dead")
    with caplog.at_level(logging.WARNING, logger="cobbler_site.foundation.throttle"):
        start = Client().get(f"/s/{study.slug}/start?code=w1", REMOTE_ADDR=fresh_ip())
        assert start.status_code == 302
        assert study.participants.count() == 1
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
        me = api.get("/api/me/")
        assert me.status_code == 200 and me.json()["username"] == "alice"
        token = APIClient().post("/api/token/", {"username": "alice", "password": "alice-password"})
        assert token.status_code == 200
        login = Client().post("/accounts/login/", {"username": "alice", "password": "alice-password"})
        assert login.status_code == 302
    warnings = [
        r for r in caplog.records if r.name == "cobbler_site.foundation.throttle" and r.levelno == logging.WARNING
    ]
    assert len(warnings) >= 4
    assert all("fail open" in r.getMessage() for r in warnings)


@pytest.mark.django_db
@override_settings(THROTTLE_LOGIN="100000/min", LOGIN_ACCOUNT_MAX_FAILURES=10, LOGIN_ACCOUNT_LOCKOUT_MINUTES=15)
def test_login_failures_are_limited_per_account_from_any_address(django_user_model):
    # A fresh account: the counts live in the shared cache.
    name = f"target-{uuid.uuid4().hex[:8]}"
    django_user_model.objects.create_user(name, password="the-right-password-1")
    for _ in range(10):  # ten addresses, one guess each: the per-IP limit never sees them
        wrong = Client().post("/accounts/login/", {"username": name, "password": "guess"}, REMOTE_ADDR=fresh_ip())
        assert wrong.status_code == 200
    assert throttle.account_locked(name) and throttle.account_locked(name.upper())  # usernames fold case
    client = Client()
    locked = client.post(
        "/accounts/login/", {"username": name, "password": "the-right-password-1"}, REMOTE_ADDR=fresh_ip()
    )
    assert locked.status_code == 200 and "_auth_user_id" not in client.session  # refused like a wrong password
    token = APIClient().post(
        "/api/token/", {"username": name, "password": "the-right-password-1"}, REMOTE_ADDR=fresh_ip()
    )
    assert token.status_code == 400  # the API token endpoint goes through the same lock
    # Other accounts are not affected, and the lock lifts after its window.
    other = f"other-{uuid.uuid4().hex[:8]}"
    django_user_model.objects.create_user(other, password="the-right-password-1")
    assert Client().post("/accounts/login/", {"username": other, "password": "the-right-password-1"}).status_code == 302
    from django.core.cache import cache

    cache.delete(f"login-lock:{throttle._account_key(name)}")  # as when LOGIN_ACCOUNT_LOCKOUT_MINUTES pass
    assert Client().post("/accounts/login/", {"username": name, "password": "the-right-password-1"}).status_code == 302


def test_the_account_key_never_holds_the_username():
    assert "alice" not in throttle._account_key("alice") and throttle._account_key("Alice ") == throttle._account_key(
        "alice"
    )
