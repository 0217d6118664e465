"""Shared fixtures: personas, builders, and a real Celery worker process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--calibration",
        action="store_true",
        help="also run the calibration experiments (make calibrate); make test runs their in-process checks",
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # No order is imposed here: under xdist (--dist loadfile) the files are handed out by how
    # many tests they hold, most first (pytest-xdist's --loadscope-reorder default). A sort that
    # put the files with a slow test first was undone by it, and applied (--no-loadscope-reorder)
    # it starts the browser, worker and demo files together, to contend for the same two cores.
    # The experiments take minutes of simulated judge calls; the loop keeps their fast checks.
    if config.getoption("--calibration"):
        return
    skip = pytest.mark.skip(reason="a calibration experiment: make calibrate runs it")
    for item in items:
        if item.get_closest_marker("calibration"):
            item.add_marker(skip)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A test module that imports one of the ../shared paths reads the datasets: without them it
    # skips with the reason instead of failing on a missing file (fixtures call needs_shared()).
    module = getattr(item, "module", None)
    if module is not None and any(name in vars(module) for name in SHARED_NAMES):
        needs_shared()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a test that serves pages (``live_server``: it runs outside a transaction), close the
    database connections its setup and body opened.

    Django keeps them per context (asgiref Local), and a browser test is torn down in another
    one than it ran in, so nothing else closes them: on PostgreSQL the last one of a process
    kept its test database from being dropped ("being accessed by other users")."""
    try:
        return (yield)
    finally:
        if "live_server" in getattr(item, "fixturenames", ()):
            connections.close_all()


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
        self.reused = False  # handed on by WarmWorkers: already past its "ready" line
        self.key: tuple = ()
        ARTIFACTS.mkdir(exist_ok=True)
        self.log_path = ARTIFACTS / f"worker-{os.getpid()}.log"

    def start(self) -> WorkerProcess:
        # The log is shared by every worker of this pytest process: this one's lines start here.
        self.mark_log_start()
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the subprocess
        self.proc = subprocess.Popen(
            self.args, cwd=PROJECT_ROOT, env=_worker_env(), stdout=log, stderr=subprocess.STDOUT
        )
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def discard(self) -> None:
        """End a worker whose test is over: SIGKILL, as nothing it holds matters any more.

        A warm stop waits for Celery's loop to notice (up to 4 s on the filesystem broker, whose
        loop drains once more after the signal), some 40 times a run. Messages it held are
        purged with the broker after it.
        """
        self.kill(signal.SIGKILL)

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

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def mark_log_start(self) -> None:
        """From here on, ``wait_ready``/``wait_idle`` read only this test's lines of the shared log."""
        self.log_start = self.log_path.stat().st_size if self.log_path.exists() else 0

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Until this worker logs that it is ready to take messages (Celery's "celery@host ready.")."""
        if self.reused:
            return self.alive()

        def ready() -> bool:
            with self.log_path.open("rb") as log:
                log.seek(self.log_start)
                return b" ready." in log.read()

        return wait_until(ready, timeout=timeout, interval=0.05)

    def wait_idle(self, timeout: float = 60.0, polls: int = 3) -> bool:
        """Until this worker has ended every task it received and the broker holds no message.

        From then on nothing runs until someone sends a task, so a test that asserts "nothing
        was called after the stop" checks a state it reached, not a wait of a chosen length.
        A retry or a countdown stays "received" until it ran; ``polls`` idle readings in a row
        cover a message that was taken from the broker but not logged yet.
        """

        def idle() -> bool:
            with self.log_path.open("rb") as log:
                log.seek(self.log_start)
                text = log.read()
            return len(_TASK_RECEIVED.findall(text)) == len(_TASK_ENDED.findall(text)) and not broker_messages()

        streak = 0

        def settled() -> bool:
            nonlocal streak
            streak = streak + 1 if idle() else 0
            return streak >= polls

        return wait_until(settled, timeout=timeout, interval=0.1)


# Celery's INFO lines for a task message: one "received", then one ending per delivery.
_TASK_RECEIVED = re.compile(rb"Task \S+\[[0-9a-f-]+\] received")
_TASK_ENDED = re.compile(rb"Task \S+\[[0-9a-f-]+\] (?:succeeded|retry|raised|failed|ignored|rejected|revoked)")
QUEUES = ("default", "llm")


def broker_messages() -> int:
    """Messages waiting in the broker's queues (the transport's own count)."""
    from cobbler_site.celery import app

    total = 0
    with app.connection_for_read() as conn:
        for queue in QUEUES:
            with contextlib.suppress(Exception):  # a queue that was never declared holds nothing
                total += conn.default_channel.queue_declare(queue=queue, passive=True).message_count
    return total


class WarmWorkers:
    """Workers kept between the tests of one pytest process, so a test need not boot its own.

    Booting a worker (Django, the apps, Celery) costs about 2.3 s of CPU, and some 30 tests
    start one. A worker is reused only by a test that would start an identical one: the same
    queues, concurrency and environment (a test's ``monkeypatch.setenv`` makes another key).
    It is kept only when its test left it alive and idle (every task it received has ended,
    the broker is empty), and kept *frozen* (SIGSTOP) until then: a kept worker must not take
    the messages of the tests that run meanwhile, which queue work on purpose and expect it to
    wait. A killed or busy worker is discarded as before. The rows a kept worker saw are
    flushed with the test database, and their ids are never reused.

    Only on the embedded filesystem broker, where a frozen worker simply stops polling. On
    Redis a worker frozen inside its blocking BRPOP would still be handed the next message and
    hold it, so there every worker is discarded after its test, as before.
    """

    KEEP = 1  # at most this many kept workers per process (each a frozen process holding its memory)

    def __init__(self) -> None:
        self.idle: dict[tuple, WorkerProcess] = {}

    @staticmethod
    def key(queues: str, concurrency: int) -> tuple:
        env = {k: v for k, v in _worker_env().items() if k != "PYTEST_CURRENT_TEST"}
        return (queues, concurrency, tuple(sorted(env.items())))

    def start(self, *, queues: str, concurrency: int) -> WorkerProcess:
        key = self.key(queues, concurrency)
        worker = self.idle.pop(key, None)
        if worker is not None and worker.alive():
            worker.proc.send_signal(signal.SIGCONT)  # type: ignore[union-attr]  # alive: it has a proc
            worker.key = key
            worker.mark_log_start()
            worker.reused = True
            return worker
        if worker is not None:
            worker.discard()
        worker = WorkerProcess(queues=queues, concurrency=concurrency).start()
        worker.key, worker.reused = key, False
        return worker

    def release(self, worker: WorkerProcess) -> None:
        """After its test: freeze an alive, idle worker for the next test with the same key, else end it."""
        if not (_on_filesystem_broker() and worker.alive() and worker.wait_idle(timeout=2.0, polls=2)):
            worker.discard()
            return
        worker.proc.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]  # alive: it has a proc
        purge_broker()
        while len(self.idle) >= self.KEEP:
            self.idle.pop(next(iter(self.idle))).discard()
        self.idle[worker.key] = worker

    def close(self) -> None:
        for worker in self.idle.values():
            worker.discard()
        self.idle.clear()


def _on_filesystem_broker() -> bool:
    from django.conf import settings

    return str(settings.CELERY_BROKER_URL).startswith("filesystem://")


@pytest.fixture(scope="session")
def warm_workers(django_db_setup, django_db_blocker) -> Iterator[WarmWorkers]:
    """The process's idle workers, ended before the test database is dropped."""
    pool = WarmWorkers()
    yield pool
    pool.close()


def purge_broker() -> None:
    """Drop messages left by an earlier run, so a worker never sees another test's ids."""
    from cobbler_site.celery import app

    for queue in QUEUES:
        try:
            with app.connection_for_write() as conn:
                conn.default_channel.queue_purge(queue)
        except Exception:  # a queue that does not exist yet has nothing to purge
            pass


@pytest.fixture
def celery_worker_process(transactional_db, warm_workers) -> Iterator[WorkerProcess]:
    purge_broker()
    worker = warm_workers.start(queues="default,llm", concurrency=4)
    worker.wait_ready()
    yield worker
    warm_workers.release(worker)
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


@pytest.fixture(scope="session")
def _chromium():
    """One Chromium per test process: launching it per test cost about a second each.

    Playwright's sync API marks its event loop as running on this thread between calls, which
    Django reads as "inside async code" and refuses the ORM. The mark is kept only while a
    browser test runs (``browser`` sets and clears it), so every other test in the process
    runs as if no browser existed.
    """
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    loop = asyncio._get_running_loop()
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    asyncio._set_running_loop(None)
    yield chromium, loop
    asyncio._set_running_loop(loop)
    chromium.close()
    playwright.stop()


@pytest.fixture
def browser(_chromium, monkeypatch):
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser).

    Shared by the tests of one process; every context a test opens (``new_page`` opens one)
    is closed after it, so no cookie, storage or page outlives its test.
    """
    chromium, loop = _chromium
    # The ORM calls a browser test makes while Playwright's loop is marked running are still
    # plain synchronous code on this thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    asyncio._set_running_loop(loop)
    try:
        yield chromium
        for context in chromium.contexts:
            context.close()
    finally:
        asyncio._set_running_loop(None)


def wait_until(predicate, timeout: float = 60.0, interval: float = 0.2) -> bool:
    """Poll ``predicate`` until it is truthy or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
