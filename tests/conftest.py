"""Shared fixtures: personas, builders, and a real Celery worker process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED = PROJECT_ROOT.parent / "shared"
COBBLER_DIR = SHARED / "datasets" / "cobbler"
SAMPLES_DIR = SHARED / "datasets" / "samples"
RBO_REFERENCE = SHARED / "datasets" / "rbo-reference" / "test.csv"
ARTIFACTS = PROJECT_ROOT / "test-artifacts"
SHARED_NAMES = ("SHARED", "COBBLER_DIR", "SAMPLES_DIR", "RBO_REFERENCE")
NO_SHARED = (
    f"{SHARED} is absent: the third-party datasets live in ../shared beside the project and are never copied into it"
)


def needs_shared() -> None:
    """Skip the calling test or fixture, with the reason, in a checkout without ../shared."""
    if not SHARED.is_dir():
        pytest.skip(NO_SHARED)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A test module that imports one of the ../shared paths reads the datasets: without them it
    # skips with the reason instead of failing on a missing file (fixtures call needs_shared()).
    module = getattr(item, "module", None)
    if module is not None and any(name in vars(module) for name in SHARED_NAMES):
        needs_shared()


@pytest.fixture
def researcher(db):
    return get_user_model().objects.create_user("alice", "alice@example.org", "alice-password", is_staff=True)


@pytest.fixture
def other_researcher(db):
    return get_user_model().objects.create_user("bob", "bob@example.org", "bob-password", is_staff=True)


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


def _worker_env() -> dict[str, str]:
    """Point a subprocess at the *test* database the current test uses."""
    env = os.environ.copy()
    db = connection.settings_dict
    if "postgresql" in db["ENGINE"]:
        user = db.get("USER") or "postgres"
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        env["DATABASE_URL"] = f"postgres://{user}@{host}:{port}/{db['NAME']}"
    else:
        env["SQLITE_PATH"] = str(db["NAME"])
    env["PYTHONUNBUFFERED"] = "1"
    return env


class WorkerProcess:
    """A real `celery worker` subprocess on the test database (start, kill -9, restart)."""

    def __init__(self, queues: str = "default,llm", concurrency: int = 4, pool: str = "threads"):
        self.args = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "cobbler_site",
            "worker",
            "-Q",
            queues,
            "--pool",
            pool,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        self.proc: subprocess.Popen | None = None
        ARTIFACTS.mkdir(exist_ok=True)
        self.log_path = ARTIFACTS / f"worker-{os.getpid()}.log"

    def start(self) -> WorkerProcess:
        # The log is shared by every worker of this pytest process: this one's lines start here.
        self.log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the subprocess
        self.proc = subprocess.Popen(
            self.args, cwd=PROJECT_ROOT, env=_worker_env(), stdout=log, stderr=subprocess.STDOUT
        )
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Until this worker logs that it is ready to take messages (Celery's "celery@host ready.")."""

        def ready() -> bool:
            with self.log_path.open("rb") as log:
                log.seek(self.log_start)
                return b" ready." in log.read()

        return wait_until(ready, timeout=timeout, interval=0.05)


def purge_broker() -> None:
    """Drop messages left by an earlier run, so a worker never sees another test's ids."""
    from cobbler_site.celery import app

    for queue in ("default", "llm"):
        try:
            with app.connection_for_write() as conn:
                conn.default_channel.queue_purge(queue)
        except Exception:  # a queue that does not exist yet has nothing to purge
            pass


@pytest.fixture
def celery_worker_process(transactional_db) -> Iterator[WorkerProcess]:
    purge_broker()
    worker = WorkerProcess().start()
    time.sleep(0.5)
    yield worker
    worker.stop()
    purge_broker()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def browser(monkeypatch):
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the test
    # makes meanwhile are still plain synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def wait_until(predicate, timeout: float = 60.0, interval: float = 0.2) -> bool:
    """Poll ``predicate`` until it is truthy or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
