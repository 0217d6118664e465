"""Per-model limits: a token bucket shared by every worker process, and adaptive concurrency.

``SharedBucket`` spaces request starts (and tokens) of one model across every process and
machine: in Redis through one atomic Lua script (production), or through a file lock under
DATA_DIR in embedded mode (SQLite + filesystem broker: one machine, so a lock file is shared
by all its processes). A caller *reserves* what it is about to spend and sleeps the wait it
is told, so N callers queue up at exactly the rate, never polling and never bursting.

``AdaptiveConcurrency`` is per process, like Inspect's adaptive connections: halve on a 429
(at most once per cool-down, since one overload answers many calls at once), grow by one
per window of successes, honour Retry-After by holding every new call until then.
"""

from __future__ import annotations

import fcntl
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

# KEYS[1] bucket; ARGV: rate per second, capacity, cost. Returns the wait in microseconds.
# Tokens may go negative: the debt is the queue of callers already promised a slot.
_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local rate, cap, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens, ts = tonumber(state[1]), tonumber(state[2])
if tokens == nil then tokens, ts = cap, now end
tokens = math.min(cap, tokens + (now - ts) * rate) - cost
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
local wait = 0
if tokens < 0 then wait = -tokens / rate end
redis.call('PEXPIRE', KEYS[1], math.ceil((wait + cap / rate) * 1000) + 60000)
return math.floor(wait * 1e6)
"""


def _reserve_local(state: dict[str, float], rate: float, cap: float, cost: float, now: float) -> float:
    tokens = state.get("tokens", cap)
    ts = state.get("ts", now)
    tokens = min(cap, tokens + (now - ts) * rate) - cost
    state["tokens"], state["ts"] = tokens, now
    return -tokens / rate if tokens < 0 else 0.0


class SharedBucket:
    """``per_minute`` units a minute for one key, shared by every process using ``key``."""

    def __init__(self, key: str, per_minute: int) -> None:
        self.key = key
        self.rate = per_minute / 60.0
        # No burst: one unit at a time, evenly spaced. A provider's own bucket (which holds
        # some burst) then stays nearly full and absorbs the jitter of our send times; had we
        # burst first, we would drain it and run at its very edge, where any jitter is a 429.
        self.cap = 1.0

    def reserve(self, cost: float = 1.0) -> float:
        """Take ``cost`` units now (negative: give back); returns seconds to wait before using them."""
        if self.rate <= 0:
            return 0.0
        if settings.REDIS_URL:
            return _redis_script()(keys=[self.key], args=[self.rate, self.cap, cost]) / 1e6
        return self._reserve_file(cost)

    def _reserve_file(self, cost: float) -> float:
        folder = Path(settings.DATA_DIR) / "ratelimits"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (self.key.replace(":", "_") + ".json")
        with open(path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            handle.seek(0)
            try:
                state = json.loads(handle.read() or "{}")
            except ValueError:
                state = {}
            wait = _reserve_local(state, self.rate, self.cap, cost, time.time())
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(state))
        return wait

    def acquire(self, cost: float = 1.0) -> float:
        wait = self.reserve(cost)
        if wait > 0:
            time.sleep(wait)
        return wait


_script_lock = threading.Lock()
_script = None


def _redis_script():  # a redis Script object
    global _script
    with _script_lock:
        if _script is None:
            import redis

            _script = redis.Redis.from_url(settings.REDIS_URL).register_script(_LUA)
        return _script


class AdaptiveConcurrency:
    """AIMD limit on the calls of one model in flight in this process."""

    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = float(self.maximum)
        self.in_flight = 0
        self.hold_until = 0.0  # Retry-After: nothing starts before this (monotonic)
        self.last_cut = 0.0
        self.cond = threading.Condition()

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> bool:
        """Wait for a slot; False when ``should_stop()`` turned true meanwhile."""
        with self.cond:
            while True:
                if should_stop is not None and should_stop():
                    return False
                wait = self.hold_until - time.monotonic()
                if wait <= 0 and self.in_flight < int(self.limit):
                    self.in_flight += 1
                    return True
                self.cond.wait(timeout=min(0.2, wait) if wait > 0 else 0.2)

    def release(self, *, rate_limited: bool = False, retry_after: float | None = None) -> None:
        with self.cond:
            self.in_flight -= 1
            now = time.monotonic()
            if rate_limited:
                if now - self.last_cut > 1.0:
                    self.limit = max(1.0, self.limit / 2)
                    self.last_cut = now
                if retry_after:
                    self.hold_until = max(self.hold_until, now + min(retry_after, 60.0))
            else:
                self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
            self.cond.notify_all()


class ModelLimits:
    """What one process needs to respect one model's limits."""

    def __init__(self, model_id: int, max_concurrency: int, rpm: int, tpm: int) -> None:
        self.concurrency = AdaptiveConcurrency(max_concurrency)
        self.requests = SharedBucket(f"cobbler:rl:{model_id}:rpm:{rpm}", rpm)
        self.tokens = SharedBucket(f"cobbler:rl:{model_id}:tpm:{tpm}", tpm)
        self.tpm = tpm


_registry_lock = threading.Lock()
_limits: dict[tuple, ModelLimits] = {}


def for_model(model_id: int, max_concurrency: int, rpm: int, tpm: int) -> ModelLimits:
    key = (model_id, max_concurrency, rpm, tpm)
    with _registry_lock:
        if key not in _limits:
            _limits[key] = ModelLimits(model_id, max_concurrency, rpm, tpm)
        return _limits[key]


class ChunkSlots:
    """How many chunks of one model may run at once in this process (the rest wait in the queue).

    One model's chunks then never take every worker slot, so a slow or failing endpoint
    cannot starve the jobs of other models. A message refused while a chunk of its own job
    runs here is left to that chunk, and noted under the same lock: the job's last chunk to
    leave learns so from ``give_back`` and re-sends what is still pending. Deciding and noting
    in one step is what keeps a message from being lost between a chunk's last look for rows
    and its leaving.
    """

    TAKEN, LEFT, FULL = "taken", "left", "full"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[int, int] = {}
        self.jobs: dict[tuple, int] = {}  # (kind, job id) -> chunks of it running here
        self.left: set[tuple] = set()  # jobs with messages left to their running chunks
        self.refused: dict[int, float] = {}  # model id -> when another job was last refused (monotonic)

    def take(self, model_id: int, cap: int, job_key: tuple) -> str:
        """TAKEN: a slot is this message's. LEFT: a chunk of its job runs here and the job's
        last chunk to leave sees to its rows. FULL: the model is at its cap with other jobs."""
        with self.lock:
            if self.running.get(model_id, 0) < cap:
                self.running[model_id] = self.running.get(model_id, 0) + 1
                self.jobs[job_key] = self.jobs.get(job_key, 0) + 1
                return self.TAKEN
            if job_key in self.jobs:
                self.left.add(job_key)
                return self.LEFT
            self.refused[model_id] = time.monotonic()
            return self.FULL

    def wanted_since(self, model_id: int, since: float) -> bool:
        """Whether a message of another job was refused for this model's cap since ``since``
        (monotonic): a chunk past its turn then makes way for it."""
        with self.lock:
            return self.refused.get(model_id, float("-inf")) >= since

    def give_back(self, model_id: int, job_key: tuple) -> bool:
        """Free the slot; True for the job's last chunk here when messages were left to it."""
        with self.lock:
            self.running[model_id] -= 1
            self.jobs[job_key] -= 1
            if self.jobs[job_key]:
                return False
            del self.jobs[job_key]
            if job_key in self.left:
                self.left.discard(job_key)
                return True
            return False


chunk_slots = ChunkSlots()
