"""The simulator mounted at /sim/v1: only when enabled, then staff or a token unless DEBUG is on;
no request held longer than 5 s; bounded counters."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from rest_framework.authtoken.models import Token

from judging import prompts
from judging.simulator import views as sim_views
from judging.simulator.behaviour import MAX_DELAY_MS, Knobs, parse_knobs
from judging.simulator.server import BoundedCounter, SimulatorServer
from tests.conftest import PROJECT_ROOT

URL = "/sim/v1/chat/completions"


def _body(model: str = "sim:order_first=1") -> str:
    rendered = prompts.render(
        version="v1", condition="order", instruction="Q?", reference="", first_text="one", second_text="two", cue={}
    )
    return json.dumps({"model": model, "messages": rendered.messages})


def _post(client, **headers):
    return client.post(URL, data=_body(), content_type="application/json", headers=headers)


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.SIMULATOR_ENABLED = True
    settings.SIMULATOR_TOKEN = "sim-token-" + "t" * 30
    return settings


def test_debug_answers_anyone(client, settings):
    settings.DEBUG = True
    assert _post(client).status_code == 200


def test_without_debug_it_needs_staff_or_a_token(client, production, db, researcher, django_user_model):
    anonymous = _post(client)
    assert anonymous.status_code == 401 and "Bearer" in anonymous["WWW-Authenticate"]
    assert _post(client, Authorization="Bearer wrong").status_code == 401
    assert _post(client, Authorization=f"Bearer {production.SIMULATOR_TOKEN}").status_code == 200
    assert _post(client, Authorization=f"Token {Token.objects.create(user=researcher).key}").status_code == 200
    crowd = django_user_model.objects.create_user("carol", password="carol-password")
    assert _post(client, Authorization=f"Bearer {Token.objects.create(user=crowd).key}").status_code == 401
    client.force_login(crowd)
    assert _post(client).status_code == 401
    client.force_login(researcher)
    assert _post(client).status_code == 200


def test_no_token_configured_means_no_token_accepted(client, production, db):
    production.SIMULATOR_TOKEN = ""
    assert _post(client, Authorization="Bearer ").status_code == 401


def test_disabled_it_is_not_there(client, settings):
    settings.SIMULATOR_ENABLED = False
    settings.DEBUG = True
    assert _post(client).status_code == 404


def test_it_is_mounted_only_when_enabled():
    code = (
        "import django; django.setup(); from django.urls import resolve, Resolver404\n"
        "try:\n    resolve('/sim/v1/chat/completions'); print('mounted')\n"
        "except Resolver404:\n    print('absent')"
    )

    def run(enabled: str) -> str:
        env = {**os.environ, "SIMULATOR_ENABLED": enabled}  # the rest as tests/settings.py set it
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert run("0") == "absent" and run("1") == "mounted"


def test_latency_and_timeout_are_capped():
    assert MAX_DELAY_MS <= 5000 and Knobs().timeout_ms <= MAX_DELAY_MS
    for knob in ("latency_ms", "timeout_ms", "jitter_ms"):
        with pytest.raises(ValueError, match=knob):
            parse_knobs(f"sim:{knob}=60000")
        with pytest.raises(ValueError, match=knob):
            parse_knobs(f"sim:{knob}=-1")
    assert parse_knobs("sim:latency_ms=5000").latency_ms == 5000


def test_the_site_refuses_a_long_hold(client, settings):
    settings.DEBUG = True
    response = client.post(URL, data=_body("sim:latency_ms=600000"), content_type="application/json")
    assert response.status_code == 400 and "latency_ms" in response.json()["error"]["message"]


def test_counters_are_bounded():
    counter = BoundedCounter(max_keys=3)
    for key in "abcde":
        counter[key] += 1
    counter["e"] += 1
    assert list(counter) == ["c", "d", "e"] and counter["e"] == 2 and counter["a"] == 0
    assert sim_views._calls.max_keys <= 10_000


def test_the_asyncio_server_bounds_its_stats_and_bodies():
    server = SimulatorServer().start_in_thread()
    try:
        for key in ("calls", "answered", "garbled"):
            assert isinstance(getattr(server.stats, key), BoundedCounter)
        with socket.create_connection((server.host, server.port), timeout=5) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n")
            reply = sock.recv(4096)
        assert reply.startswith(b"HTTP/1.1 413")
    finally:
        server.stop()
