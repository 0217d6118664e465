"""The demo judge calls the simulator on the port actually served (`make run PORT=8100`).

One rule (judging.services.local_simulator_url) names the URL; the Makefile passes it to
seed_demo and runstack, runstack to its web and worker processes, and a database seeded
earlier for another port is brought up to date; only the demo judge, never a researcher's.
"""

from __future__ import annotations

import io
import subprocess

import pytest
from django.core.management import call_command

from annotations.models import Study
from cobbler_site.management.commands import runstack
from judging.models import RegisteredModel
from judging.services import create_judge, is_local_simulator_url, local_simulator_url, point_demo_judge_at
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.django_db

PORT_8000 = "http://127.0.0.1:8000/sim/v1"
PORT_8100 = "http://127.0.0.1:8100/sim/v1"


def _seed(settings, base_url: str, *args: str) -> str:
    settings.SIMULATOR_BASE_URL = base_url
    out = io.StringIO()
    call_command("seed_demo", "--no-crowd", "--no-jobs", *args, stdout=out)
    return out.getvalue()


def _demo_judge() -> RegisteredModel:
    return RegisteredModel.objects.get(name="simulated-judge")


def test_it_moves_the_demo_judge_to_the_port_served_when_seeded_earlier(settings, researcher):
    _seed(settings, PORT_8000)
    assert _demo_judge().base_url == PORT_8000
    mine = create_judge(name="my-sim", base_url=PORT_8000, model="sim:seed=3", owner=researcher)
    output = _seed(settings, PORT_8100, "--if-empty")  # the content exists: only the URL moves
    assert "nothing to do" in output and f"demo judge now calls {PORT_8100}" in output
    assert _demo_judge().base_url == PORT_8100
    mine.refresh_from_db()
    assert mine.base_url == PORT_8000  # a researcher's judge is never touched
    assert Study.objects.count() == 1
    # Seeding again on the same port changes nothing and says nothing about the judge.
    assert "demo judge now calls" not in _seed(settings, PORT_8100, "--if-empty")


def test_a_full_seed_follows_the_port_too(settings):
    _seed(settings, PORT_8000)
    _seed(settings, PORT_8100)
    assert _demo_judge().base_url == PORT_8100


def test_a_demo_judge_pointed_at_a_real_endpoint_stays_there(settings):
    _seed(settings, PORT_8000)
    RegisteredModel.objects.filter(name="simulated-judge").update(base_url="https://api.example.org/v1")
    _seed(settings, PORT_8100, "--if-empty")
    assert _demo_judge().base_url == "https://api.example.org/v1"
    # Nor is a remote URL ever written over the local simulator's.
    RegisteredModel.objects.filter(name="simulated-judge").update(base_url=PORT_8000)
    assert point_demo_judge_at(base_url="https://sim.example.org/sim/v1") is False
    assert _demo_judge().base_url == PORT_8000


def test_an_owned_judge_with_the_demo_name_is_not_the_demo_judge(researcher):
    create_judge(name="simulated-judge", base_url=PORT_8000, model="sim:seed=1", owner=researcher)
    assert point_demo_judge_at(base_url=PORT_8100) is False
    assert _demo_judge().base_url == PORT_8000


def test_the_url_rule():
    assert local_simulator_url(host="127.0.0.1", port=8100) == PORT_8100
    assert local_simulator_url(host="0.0.0.0", port=8100) == PORT_8100  # a wildcard bind is called on loopback
    assert local_simulator_url(host="::1", port=8100) == "http://[::1]:8100/sim/v1"
    assert local_simulator_url(host="localhost", port=9000) == "http://localhost:9000/sim/v1"
    assert is_local_simulator_url(PORT_8100) and is_local_simulator_url("http://[::1]:8100/sim/v1")
    assert not is_local_simulator_url("https://api.openai.com/v1")
    assert not is_local_simulator_url("http://10.0.0.5:8000/sim/v1")
    assert not is_local_simulator_url("http://127.0.0.1:8000/v1")


def test_runstack_gives_its_processes_the_simulator_it_serves(monkeypatch):
    monkeypatch.delenv("SIMULATOR_BASE_URL", raising=False)
    assert runstack._child_env(host="127.0.0.1", port=8100)["SIMULATOR_BASE_URL"] == PORT_8100
    monkeypatch.setenv("SIMULATOR_BASE_URL", "http://127.0.0.1:9999/sim/v1")  # set by the caller: kept
    assert runstack._child_env(host="127.0.0.1", port=8100)["SIMULATOR_BASE_URL"] == "http://127.0.0.1:9999/sim/v1"


def test_runstack_moves_the_demo_judge_before_it_starts(settings):
    _seed(settings, PORT_8000)
    out = io.StringIO()
    runstack.Command(stdout=out)._point_demo_judge(PORT_8100)
    assert _demo_judge().base_url == PORT_8100
    assert PORT_8100 in out.getvalue()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["PORT=8100"], PORT_8100),
        (["PORT=8100", "HOST=0.0.0.0"], PORT_8100),
        (["PORT=8100", "SIMULATOR_BASE_URL=http://127.0.0.1:7000/sim/v1"], "http://127.0.0.1:7000/sim/v1"),
    ],
)
def test_make_run_passes_one_url_to_seed_demo_and_runstack(args, expected, monkeypatch):
    monkeypatch.delenv("SIMULATOR_BASE_URL", raising=False)
    # -n prints the commands without running them; -o keeps the venv prerequisite from printing pip.
    plan = subprocess.run(
        ["make", "-n", "-o", "venv", "run", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout
    commands = [line for line in plan.splitlines() if "seed_demo" in line or "runstack" in line]
    assert len(commands) == 2
    assert all(f"SIMULATOR_BASE_URL={expected} " in line for line in commands)
