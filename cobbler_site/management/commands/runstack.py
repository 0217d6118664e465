"""`make run`: the web server and a real Celery worker, stopped together on Ctrl-C.

It lives in cobbler_site, above the apps: it starts the whole site and points the demo judge
(judging) at the simulator this server serves.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from judging.services import local_simulator_url, point_demo_judge_at


class Command(BaseCommand):
    help = "Start the web server and a Celery worker (default and llm queues); Ctrl-C stops both."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--concurrency", type=int, default=4)

    def handle(self, *args: Any, host: str, port: int, concurrency: int, **options: Any) -> None:
        # Ctrl-C reaches the whole process group; a plain `kill` reaches only us, so turn
        # SIGTERM into the same clean shutdown or the children would outlive us.
        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
        env = _child_env(host=host, port=port)
        self._point_demo_judge(env["SIMULATOR_BASE_URL"])
        python = sys.executable
        worker = subprocess.Popen(
            [
                python,
                "-m",
                "celery",
                "-A",
                "cobbler_site",
                "worker",
                "-Q",
                "default,llm",
                "--pool",
                "threads",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "--beat",
                "--schedule",
                str(settings.DATA_DIR / "celerybeat-schedule"),  # with the rest of this run's state
            ],
            env=env,
        )
        # --noreload: the autoreloader would fork a second server we could not stop cleanly.
        web = subprocess.Popen(
            [python, "manage.py", "runserver", f"{host}:{port}", "--noreload"],
            env=env,
        )
        try:
            # Say "Serving" once the port answers, not before: a click on the link too early fails.
            if wait_until_listening(host, port, web):
                self.stdout.write(f"Serving http://{host}:{port}/ with a worker; Ctrl-C stops both.")
            while web.poll() is None and worker.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            for proc in (web, worker):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in (web, worker):
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def _point_demo_judge(self, base_url: str) -> None:
        # A database seeded for another port keeps working: the demo judge follows this server.
        if point_demo_judge_at(base_url=base_url):
            self.stdout.write(f"demo judge now calls {base_url}")


def wait_until_listening(host: str, port: int, process: subprocess.Popen, timeout: float = 60.0) -> bool:
    """True once ``host:port`` accepts a connection; False if ``process`` exits first or time runs out."""
    address = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection((address, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def _child_env(*, host: str, port: int) -> dict[str, str]:
    """The environment of the web and worker processes: SIMULATOR_BASE_URL names this server's
    simulator unless it is set (the Makefile passes the same value to seed_demo)."""
    env = dict(os.environ)
    env.setdefault("SIMULATOR_BASE_URL", local_simulator_url(host=host, port=port))
    return env


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
