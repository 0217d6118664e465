"""Load test of the crowd-worker flow: 100 concurrent workers, each doing a 30-task batch.

Run:   .venv/bin/python -m benchmarks.annotation_load [--workers 100] [--batches 100] [--think-ms 0]
Needs: PostgreSQL at BENCH_PG (default postgres://postgres@127.0.0.1:5432) and Redis at
BENCH_REDIS (default redis://127.0.0.1:6379/11) for the cache the throttles count in, as deployed.

What it does:
1. creates a scratch PostgreSQL database ``cobbler_bench_ann`` (+ BENCH_DB_SUFFIX), migrates it and builds a study
   of >= 100 batches x 30 pairwise tasks (15 pairs x 2 presentations, overlap 3);
2. starts gunicorn on 127.0.0.1 (a free port; gthread, 3 processes x 4 threads, sized for a
   2-core machine that also runs the load generator) with the deployed settings: DEBUG off,
   HTTPS redirect, Secure cookies and HSTS on, trusting X-Forwarded-Proto/-For from one proxy;
   the clients send those headers as a TLS-terminating proxy would (``behind_proxy``);
3. runs N simulated workers at once (threads; one httpx client and cookie jar each): enter
   by link, consent, pass the qualification, then load and submit 30 tasks; ``--think-ms``
   adds a pause between loading a task and submitting it (uniform 0.5x-1.5x, seeded per
   worker), and the workers then arrive spread over one mean pause rather than all at once. Real crowd workers read for a minute per task; with no pause at all, 100 clients
   on the same 2 cores as the server measure queueing on the CPU, not the application;
4. reports throughput and p50/p95/p99 latency of task load (GET) and submit (POST), errors,
   then checks in the database that every answer is stored exactly once and that no batch
   has more live workers than its overlap; writes benchmarks/results/annotation_load.json.
Target (the paced run, ``--think-ms 3000``): p95 < 50 ms for load and submit, zero errors,
zero lost or duplicated answers. Without a pause the run is a stress run (``"run": "stress"``
in the JSON): latency is queueing on the two cores and is reported, not judged; only wrong
work (lost, duplicated or unfinished answers) makes it exit non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psycopg

from benchmarks.machine import speed_probe

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "benchmarks" / "results"
TARGET_P95_MS = 50
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/11")
# Lets two people benchmark on one server without dropping each other's scratch database.
DB_NAME = "cobbler_bench_ann" + os.environ.get("BENCH_DB_SUFFIX", "")
SLUG = "bench"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _recreate_database() -> str:
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB_NAME}")
    return f"{PG}/{DB_NAME}"


def _setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cobbler_site.settings")
    os.environ.setdefault("DATA_DIR", str(ROOT / "var" / "bench"))
    import django

    django.setup()


def _build_study(batches: int) -> dict[int, str]:
    """A study of `batches` instructions x 6 candidates: C(6,2) = 15 pairs, so 30 tasks a batch."""
    from django.core.management import call_command

    from annotations import services
    from annotations.models import Candidate, Instruction, QualificationItem, Response, Study

    call_command("migrate", verbosity=0)
    study = Study.objects.create(slug=SLUG, name="Load test", overlap=3, lease_minutes=60)
    cands = [Candidate.objects.create(study=study, key=f"m{i}", position=i) for i in range(6)]
    instructions = Instruction.objects.bulk_create(
        Instruction(study=study, index=i, text=f"Question {i}: why is the sky blue?", reference="Rayleigh scattering.")
        for i in range(batches)
    )
    Response.objects.bulk_create(
        Response(instruction=ins, candidate=c, text=f"Answer of {c.key} to {ins.index}. " * 20)
        for ins in instructions
        for c in cands
    )
    services.generate_batches(study=study, condition="bandwagon", seed=1, pairs_per_batch=15)
    return {item.pk: item.gold for item in QualificationItem.for_study(study)}


class Worker(threading.Thread):
    def __init__(self, n: int, base: str, gold: dict[int, str], barrier: threading.Barrier, think_ms: int):
        super().__init__(daemon=True)
        self.n, self.base, self.gold, self.barrier = n, base, gold, barrier
        self.think_s = think_ms / 1000
        self.rng = random.Random(n)
        self.loads: list[float] = []
        self.submits: list[float] = []
        self.errors: list[str] = []
        self.answered = 0

    def _post(self, client: httpx.Client, url: str, data: dict) -> httpx.Response:
        return client.post(url, data=data, headers={"X-CSRFToken": client.cookies.get("csrftoken", "")})

    def run(self) -> None:
        with behind_proxy(self.base, client_ip=f"10.{self.n // 200}.{self.n % 200}.7") as client:
            try:
                self.barrier.wait()
                # A paced crowd trickles in: arrivals spread over one mean pause, not one burst
                # of 100 entries at the same instant (the closed loop, think 0, keeps the burst).
                time.sleep(self.think_s * self.rng.uniform(0, 1))
                r = client.get(f"/s/{SLUG}/start", params={"code": f"bench-{self.n}"})
                r = client.get(_location(r))  # -> consent page (sets the CSRF cookie)
                r = client.get(_location(r)) if r.status_code == 302 else r
                self._post(client, f"/s/{SLUG}/consent", {"agree": "yes"})
                client.get(f"/s/{SLUG}/qualify")
                r = self._post(client, f"/s/{SLUG}/qualify", {f"q{pk}": g for pk, g in self.gold.items()})
                url = _location(client.get(_location(r)))  # /work -> first task
                while "/a/" in url:
                    t0 = time.perf_counter()
                    page = client.get(url)
                    self.loads.append(time.perf_counter() - t0)
                    if page.status_code != 200:
                        raise RuntimeError(f"load {url}: {page.status_code}")
                    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
                    if self.think_s:
                        time.sleep(self.think_s * self.rng.uniform(0.5, 1.5))
                    t0 = time.perf_counter()
                    r = self._post(client, url, {"token": token, "choice": "AB"[self.answered % 2], "client_ms": "900"})
                    self.submits.append(time.perf_counter() - t0)
                    if r.status_code != 302:
                        raise RuntimeError(f"submit {url}: {r.status_code}")
                    self.answered += 1
                    url = _location(r)
                if not url.endswith("/done"):
                    raise RuntimeError(f"ended at {url}")
            except Exception as e:  # every failure is counted and reported
                self.errors.append(f"worker {self.n}: {type(e).__name__}: {e}")


def _location(response: httpx.Response) -> str:
    """Where a redirect points; anything else is an error that says which request and status."""
    if "location" not in response.headers:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: {response.status_code}, no redirect"
        )
    return response.headers["location"]


class _TlsTerminatingProxy(httpx.BaseTransport):
    """Stands where the deployed TLS proxy does: takes the client's https request and passes it
    on to gunicorn over plain http, saying X-Forwarded-Proto: https and X-Forwarded-For.

    Like nginx's default upstream (HTTP/1.0, no keep-alive) it asks for the connection to be
    closed after each reply: kept open through a reader's pause, it outlives gunicorn's 2 s
    keep-alive and the next request can meet a connection the server is closing (reset by peer).
    """

    def __init__(self, *, client_ip: str) -> None:
        self.client_ip = client_ip
        self.upstream = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(scheme="http")
        request.headers["X-Forwarded-Proto"] = "https"
        request.headers["X-Forwarded-For"] = self.client_ip
        request.headers["Connection"] = "close"
        return self.upstream.handle_request(request)

    def close(self) -> None:
        self.upstream.close()


def behind_proxy(base: str, *, client_ip: str) -> httpx.Client:
    """A client that reaches the server at `base` (http) as a browser does through the TLS proxy.

    The server runs with its deployed security settings (HTTPS redirect, Secure cookies,
    HSTS) and SECURE_PROXY_SSL_HEADER. The client speaks https, so it keeps and sends the
    Secure session and CSRF cookies as a browser would, and sends the https Origin that
    Django's CSRF check compares against; the proxy hop adds the forwarded headers. Each
    simulated worker comes from its own /24 (X-Forwarded-For, TRUSTED_PROXY_COUNT=1), as a
    real crowd does, so the per-address throttles and lease caps stay on at their deployed values.
    """
    https_base = "https://" + base.split("://", 1)[1]
    return httpx.Client(
        base_url=https_base,
        timeout=60,
        follow_redirects=False,
        headers={"Origin": https_base},
        transport=_TlsTerminatingProxy(client_ip=client_ip),
    )


def _wait_until_serving(server: subprocess.Popen, base: str) -> None:
    """Return once /healthz answers; a server that exits or never answers stops the run here,
    not as 100 workers' connection errors."""
    for _ in range(100):
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode} before serving (see its log above)")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer {base}/healthz within 20 s")


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def _summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50_ms": _pct(values, 0.50),
        "p95_ms": _pct(values, 0.95),
        "p99_ms": _pct(values, 0.99),
        "mean_ms": round(1000 * statistics.fmean(values), 1) if values else None,
    }


def _postgres_cpu_seconds() -> float | None:
    """CPU seconds of every PostgreSQL process on this machine, exited backends included (the
    postmaster's reaped children); None where /proc cannot tell (another OS, another host)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, seen = 0, False
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # the process ended while we looked
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
        if name.startswith("postgres"):
            seen = True
            # utime, stime, cutime, cstime: fields 14-17 of proc_pid_stat(5)
            total += sum(int(x) for x in fields[11:15])
    return total / tick if seen else None


# gunicorn's access log, one line per request: method, path, status, microseconds in the app.
ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s"


def _server_side(access_log: Path) -> dict:
    """Task load and submit latency as gunicorn measured it (from reading the request to the
    last byte sent): what a worker on another machine waits for, without this machine's
    simulated browsers, which share the two cores and the GIL of one process."""
    loads, submits = [], []
    for line in access_log.read_text().splitlines():
        method, path, _status, micros = line.split()
        if "/a/" in path:
            (loads if method == "GET" else submits).append(int(micros) / 1e6)
    return {"task_load": _summary(loads), "submit": _summary(submits)}


def _verify(workers: int) -> dict:
    from django.db.models import Count

    from annotations.models import Assignment, Batch, Submission

    per_assignment = list(
        Assignment.objects.filter(batch__study__slug=SLUG).annotate(n=Count("submissions")).values_list("n", flat=True)
    )
    duplicates = Submission.objects.values("assignment", "task").annotate(n=Count("pk")).filter(n__gt=1).count()
    over = [
        b.pk
        for b in Batch.objects.filter(study__slug=SLUG)
        if Assignment.objects.live().filter(batch=b).count() > b.target_overlap
    ]
    return {
        "assignments": len(per_assignment),
        "submitted_assignments": Assignment.objects.filter(batch__study__slug=SLUG, status="submitted").count(),
        "submissions": Submission.objects.filter(assignment__batch__study__slug=SLUG).count(),
        "expected_submissions": 30 * workers,
        "assignments_not_30": sum(1 for n in per_assignment if n != 30),
        "duplicate_answers": duplicates,
        "batches_over_overlap": len(over),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--gunicorn-workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--think-ms", type=int, default=0, help="mean pause before each submit")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()

    database_url = _recreate_database()
    _setup_django(database_url)
    gold = _build_study(args.batches)
    port = _free_port()
    access_log = ROOT / "var" / "bench" / "annotation_load-access.log"
    access_log.parent.mkdir(parents=True, exist_ok=True)
    access_log.unlink(missing_ok=True)
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "0",
        "REDIS_URL": REDIS,
        "SECRET_KEY": "bench-only-secret-key-not-for-deployment-" + "x" * 40,  # >= 50 characters
        # As deployed behind a TLS-terminating proxy (docs/security.md), whatever `make bench` sets.
        "SECURE_SSL_REDIRECT": "1",
        "SESSION_COOKIE_SECURE": "1",
        "CSRF_COOKIE_SECURE": "1",
        "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
        "TRUSTED_PROXY_COUNT": "1",
        "ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "cobbler_site.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(args.gunicorn_workers),
            "--threads",
            str(args.threads),
            "--log-level",
            "warning",
            "--access-logfile",
            str(access_log),
            "--access-logformat",
            ACCESS_FORMAT,
        ],
        cwd=ROOT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(server, base)
        barrier = threading.Barrier(args.workers)
        workers = [Worker(i, base, gold, barrier, args.think_ms) for i in range(args.workers)]
        load_at_start = os.getloadavg()  # other work on the machine shows in the latencies
        speed_at_start = speed_probe()
        times_at_start, postgres_at_start = os.times(), _postgres_cpu_seconds()
        started = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    # Where the two cores went: this process (the simulated browsers), gunicorn (its exited
    # workers are counted in the children's times once the master has waited for them; their
    # start-up is in it) and PostgreSQL (gunicorn's backends have exited by now).
    cpu = [b - a for a, b in zip(times_at_start, os.times(), strict=True)]
    postgres_at_end = _postgres_cpu_seconds()

    loads = [x for w in workers for x in w.loads]
    submits = [x for w in workers for x in w.submits]
    errors = [e for w in workers for e in w.errors]
    check = _verify(args.workers)
    result = {
        "benchmark": "annotation_load",
        "conditions": {
            "workers": args.workers,
            "batches": args.batches,
            "tasks_per_batch": 30,
            "overlap": 3,
            "server": f"gunicorn gthread {args.gunicorn_workers}x{args.threads}, DEBUG off, PostgreSQL + Redis",
            "proxy": "simulated TLS-terminating proxy: X-Forwarded-Proto: https, X-Forwarded-For, no upstream keep-alive",
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_start": load_at_start,
            "load_average_at_end": os.getloadavg(),
            # benchmarks.machine: seconds for 10^7 Python additions, before and after the run
            "speed_probe_s": [speed_at_start, speed_probe()],
            "client": "threads + httpx, same machine",
            "think_ms_mean": args.think_ms,
        },
        "wall_seconds": round(wall, 2),
        "cpu_seconds": {
            "clients": round(cpu[0] + cpu[1], 1),
            "server": round(cpu[2] + cpu[3], 1),
            "postgres": None
            if postgres_at_start is None or postgres_at_end is None
            else round(postgres_at_end - postgres_at_start, 1),
        },
        "throughput_submits_per_s": round(len(submits) / wall, 1),
        "throughput_requests_per_s": round((len(loads) + len(submits)) / wall, 1),
        "task_load": _summary(loads),
        "submit": _summary(submits),
        # The same requests timed by gunicorn: the client's figures minus the simulated browsers'
        # own waits (their GIL and their share of the cores) and the loopback hop.
        "server_side": _server_side(access_log),
        "errors": len(errors),
        "error_samples": errors[:5],
        "verification": check,
        # With no pause the run is a stress test: the two cores saturate and latency is
        # queueing, so only correctness decides its exit code; the p95 target is the paced run's.
        "run": "target" if args.think_ms else "stress",
        "target_p95_ms": TARGET_P95_MS,
    }
    result["correct"] = (
        not errors
        and check["submissions"] == check["expected_submissions"]
        and not check["duplicate_answers"]
        and not check["batches_over_overlap"]
        and not check["assignments_not_30"]
    )
    result["meets_p95_target"] = max(result["task_load"]["p95_ms"], result["submit"]["p95_ms"]) < TARGET_P95_MS
    result["ok"] = result["correct"] and (result["run"] == "stress" or result["meets_p95_target"])
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    suffix = f"-think{args.think_ms}" if args.think_ms else ""
    (RESULTS_DIR / f"annotation_load{suffix}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if not args.keep_db:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
