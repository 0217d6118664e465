"""Analysis fixtures: the demo exactly as `make run` leaves it, people and judges included."""

from __future__ import annotations

import fcntl
import io
import pickle
from dataclasses import dataclass

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import AutoField, Model
from django.test.utils import override_settings

from annotations.models import Study

# The judges' retries wait milliseconds, not seconds, while seeding and in the tests after it.
FAST_BACKOFF = {"JUDGING_BACKOFF_BASE": 0.01, "JUDGING_BACKOFF_CAP": 0.2}


def run_in_process(job) -> None:
    """What the worker does with a judge job: run chunks until no row is left pending."""
    from judging import runner

    for _ in range(20):
        pending = list(job.judgments.filter(status="pending").values_list("pk", flat=True))
        if not pending:
            break
        runner.run_chunk("judge", job.pk, pending)


@dataclass(frozen=True)
class DemoSnapshot:
    """Every row the seeding wrote, per model, and the simulator URL the demo judge was seeded with."""

    rows: list[tuple[type[Model], list[Model]]]
    simulator_base_url: str

    def restore(self) -> None:
        # One transaction: the foreign keys are deferred (PostgreSQL and SQLite alike), so the
        # order of the tables does not matter, and a transactional test commits it all at once.
        with transaction.atomic():
            for model, objs in self.rows:
                # The rows keep their ids; a row already there (written by a fixture that ran
                # before this one) would collide, so say so instead of an IntegrityError.
                assert not model._base_manager.exists(), f"{model._meta.label} has rows: request demo_study first"
                fields = model._meta.local_concrete_fields
                size = min(connection.ops.bulk_batch_size(fields, objs), 1000)
                for start in range(0, len(objs), size):
                    # raw=True, as loaddata saves: the values as stored. bulk_create would stamp
                    # the auto_now_add times anew, which the simulated crowd's timeline had set
                    # (Participant.created_at, Assignment.started_at, Submission.created_at).
                    model._base_manager._insert(objs[start : start + size], fields=fields, raw=True)
            if connection.vendor == "postgresql":
                # Explicit ids do not move a sequence: make the next id pass them. Never move one
                # back (GREATEST), so an id is never handed out twice in a run, as without this
                # fixture. SQLite's AUTOINCREMENT counter follows explicit ids by itself.
                with connection.cursor() as cursor:
                    for model, _objs in self.rows:
                        table, pk = model._meta.db_table, model._meta.pk.column
                        top = f"SELECT MAX({connection.ops.quote_name(pk)}) FROM {connection.ops.quote_name(table)}"
                        cursor.execute(
                            f"SELECT setval(s, GREATEST(pg_sequence_last_value(s), ({top}))) "
                            "FROM (SELECT pg_get_serial_sequence(%s, %s)::regclass AS s) AS q",
                            [table, pk],
                        )


def _seed_and_judge() -> str:
    """The demo as `make run` seeds it, with its judge jobs answered by the simulator over real
    HTTP, in-process, as the worker would run them. Returns the (now stopped) simulator's URL."""
    from judging.models import JudgeJob
    from judging.simulator.server import SimulatorServer

    server = SimulatorServer(max_concurrency=64).start_in_thread()
    try:
        # seed_demo points the demo judge at SIMULATOR_BASE_URL, as `make run` does with its port.
        with override_settings(SIMULATOR_BASE_URL=server.base_url, **FAST_BACKOFF):
            # The report is computed by the tests that want one, after the judges ran.
            call_command("seed_demo", "--no-report", stdout=io.StringIO())
            for job in JudgeJob.objects.filter(study__slug="demo"):
                run_in_process(job)
                assert not job.judgments.filter(status="pending").exists()
    finally:
        server.stop()
    return server.base_url


@pytest.fixture(scope="session")
def demo_snapshot(request, django_db_setup, django_db_blocker, tmp_path_factory) -> DemoSnapshot:
    """The seeding once per ``make test`` run: the first xdist process that needs it seeds and
    leaves the snapshot in the run's shared temporary folder; the others wait for it and read
    it (rows pointing only at each other: they restore into any process's database)."""
    if not hasattr(request.config, "workerinput"):  # one process: nobody to share with
        return _seeded_snapshot(django_db_blocker)
    shared = tmp_path_factory.getbasetemp().parent / "demo-snapshot.pickle"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if shared.is_file():
            return pickle.loads(shared.read_bytes())
        snapshot = _seeded_snapshot(django_db_blocker)
        shared.write_bytes(pickle.dumps(snapshot))
        return snapshot


def _seeded_snapshot(django_db_blocker) -> DemoSnapshot:
    """The seeding (about a minute: 2,400 judge calls), kept in memory.

    It runs in a transaction that is rolled back, so the test database is empty again for every
    other test. Inside a transaction the seeding behaves as it did in a ``db`` test before: a
    judge job starts RUNNING and the on_commit callbacks (the chunk messages for a worker, the
    QUEUED -> RUNNING step) never run. In a ``transactional_db`` test they used to run: the job
    went QUEUED -> RUNNING -> COMPLETED (the same rows in the end: every job COMPLETED, every
    judgment done), and some 50 chunk messages for rows already answered were left in the
    broker, which no test read (celery_worker_process purges the broker first). Nothing else
    leaves the database: no file but the rate-limit bucket of the demo judge (DATA_DIR, or
    Redis), which no test reads, and no cache key.
    """
    models = [m for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]
    with django_db_blocker.unblock(), transaction.atomic():
        before = {m: m._base_manager.count() for m in models}
        _restart_empty_sequences([m for m in models if not before[m]])
        simulator_base_url = _seed_and_judge()
        written = [m for m in models if m._base_manager.count() != before[m]]
        # Only tables that were empty (migrations fill auth's and contenttypes' only): their
        # rows are exactly what the seeding wrote, and none of them points outside the demo.
        assert not [m for m in written if before[m]], "the seeding wrote to a table that had rows"
        rows = [(m, list(m._base_manager.order_by("pk"))) for m in written]
        transaction.set_rollback(True)
    return DemoSnapshot(rows, simulator_base_url)


def _restart_empty_sequences(models: list[type[Model]]) -> None:
    """PostgreSQL: the ids a fresh database hands out. A rolled-back test does not roll its
    sequences back, so without this the demo's ids would depend on what ran before it in this
    process, and so would every draw keyed on an id (a judge job's cue slots are seeded by the
    pair's id): the same test could see other data in another run. SQLite reuses the ids of
    rolled-back rows by itself. Only empty tables: no id of a row that exists is handed out again."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in models:
            if isinstance(model._meta.pk, AutoField):
                cursor.execute(
                    "SELECT setval(pg_get_serial_sequence(%s, %s), 1, false)",
                    [model._meta.db_table, model._meta.pk.column],
                )


@pytest.fixture
def demo_study(settings, demo_snapshot) -> Study:
    """The demo as `make run` seeds it (content, simulated crowd, judge jobs), with its judge jobs
    answered by the simulator over real HTTP: seeded once per make test run (demo_snapshot) and
    restored here with the same ids, in a ``db`` or a ``transactional_db`` test."""
    # The settings the seeding ran with stay on for the test, as when it seeded here.
    for name, value in FAST_BACKOFF.items():
        setattr(settings, name, value)
    settings.SIMULATOR_BASE_URL = demo_snapshot.simulator_base_url
    demo_snapshot.restore()
    return Study.objects.get(slug="demo")
