"""Settings for the test suite (pytest.ini): the production defaults of cobbler_site.settings,
with what the tests need switched on explicitly.

The environment is set here, before the settings module is read, so the Celery worker and
``manage.py`` subprocesses the tests start inherit exactly the same configuration.
"""

from __future__ import annotations

import os

TEST_ENV = {
    # Not the development key nor the .env.example one: those are refused with DEBUG off.
    "SECRET_KEY": "tests-only-secret-key-not-for-deployment-0123456789abcdefghij",
    # The tests call the simulator mounted at /sim/v1 and judges served over loopback http.
    "SIMULATOR_ENABLED": "1",
    "JUDGE_ALLOWED_HOSTS": "public-https,loopback",
    # The test client and the live server speak plain http.
    "SECURE_SSL_REDIRECT": "0",
    "SECURE_HSTS_SECONDS": "0",
    "SESSION_COOKIE_SECURE": "0",
    "CSRF_COOKIE_SECURE": "0",
    # Many tests enter studies and log in from 127.0.0.1; the throttle tests set low rates.
    "THROTTLE_START": "100000/min",
    "THROTTLE_LOGIN": "100000/min",
    "THROTTLE_TOKEN": "100000/min",
    # Every test worker claims from 127.0.0.1; the lease-cap tests switch the caps on.
    "CROWD_MAX_LEASES_PER_IP": "0",
    "CROWD_MAX_LEASES_PER_NETWORK": "0",
    # Logins fail on purpose in many tests (the counts live in a shared cache); the lockout test lowers it.
    "LOGIN_ACCOUNT_MAX_FAILURES": "100000",
}
for _name, _value in TEST_ENV.items():
    os.environ.setdefault(_name, _value)


def _isolate_xdist_worker() -> None:
    """Give each pytest-xdist worker (gw0, gw1, ...) its own files, broker and cache.

    pytest-django already suffixes the test database per worker. Everything else the tests
    share through the environment is split here, so the Celery workers and ``manage.py``
    children a test starts inherit their own worker's slice: the data directory (SQLite file,
    filesystem broker, cache, media) and the Redis database number (broker queues, cache,
    shared rate-limit buckets), which would otherwise let one worker's Celery process run
    another's tasks against the wrong database.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or os.environ.get("COBBLER_TEST_ISOLATED") == worker:
        return
    n = int(worker[2:])
    data_dir = os.environ.get("DATA_DIR") or os.path.join(os.path.dirname(os.path.dirname(__file__)), "var")
    os.environ["DATA_DIR"] = os.path.join(data_dir, worker)
    if redis_url := os.environ.get("REDIS_URL"):
        base, _, db = redis_url.rpartition("/")
        offset = int(db) if db.isdigit() else 0
        os.environ["REDIS_URL"] = f"{base}/{(offset + 1 + n) % 16}"
    os.environ["COBBLER_TEST_ISOLATED"] = worker  # children re-read these settings: split once


_isolate_xdist_worker()

from cobbler_site.settings import *  # noqa: E402, F403

# About 170 tests create users; Django's default PBKDF2 costs ~0.3 s each and tests no hash.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
