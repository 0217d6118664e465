"""`make run`'s console: simulator calls do not bury the access log, and "Serving" is printed only
once the port accepts connections (issue 22, item 8)."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys

import pytest

from cobbler_site.foundation.log_filters import QuietSimulatorRequests
from cobbler_site.management.commands.runstack import wait_until_listening


def _record(line: str, status: int) -> logging.LogRecord:
    record = logging.LogRecord("django.server", logging.INFO, __file__, 1, '"%s" %s %s', (line, status, 388), None)
    record.status_code = status
    return record


def test_answered_simulator_calls_are_dropped_and_everything_else_kept(monkeypatch):
    monkeypatch.delenv("SIMULATOR_REQUEST_LOG", raising=False)
    keep = QuietSimulatorRequests().filter
    assert not keep(_record("POST /sim/v1/chat/completions HTTP/1.1", 200))
    assert keep(_record("POST /sim/v1/chat/completions HTTP/1.1", 429))  # errors still show
    assert keep(_record("GET /crowd/studies/demo/ HTTP/1.1", 200))
    monkeypatch.setenv("SIMULATOR_REQUEST_LOG", "1")
    assert keep(_record("POST /sim/v1/chat/completions HTTP/1.1", 200))


def test_the_development_server_logger_uses_the_filter():
    handlers = logging.getLogger("django.server").handlers
    assert any(isinstance(f, QuietSimulatorRequests) for h in handlers for f in h.filters)


def test_serving_waits_for_the_port_and_gives_up_when_the_server_dies():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert wait_until_listening("127.0.0.1", port, alive, timeout=5)
        finally:
            alive.kill()
            alive.wait()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert not wait_until_listening("127.0.0.1", port, dead, timeout=5)  # nothing listens, the server exited


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_a_wildcard_host_is_reached_on_loopback(host):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert wait_until_listening(host, listener.getsockname()[1], alive, timeout=5)
        finally:
            alive.kill()
            alive.wait()
