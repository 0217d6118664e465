"""The simulator as a tiny asyncio HTTP/1.1 server: hundreds of concurrent requests, no deps.

Endpoints: ``POST /v1/chat/completions`` (also under ``/sim/v1/``), ``GET /v1/stats`` (calls
per prompt hash, status counts, peak concurrency) and ``POST /v1/stats/reset``, plus the Batch
API (``/v1/files``, ``/v1/batches``: ``judging.simulator.batch``). Behaviour is described in
``judging.simulator.behaviour``. ``max_concurrency`` models an endpoint that
serves at most that many requests at once (the rest wait), which fixes the ideal throughput
at max_concurrency / latency. The ``rpm``/``tpm`` knobs make it a rate-limited provider:
requests beyond the model's limit get an immediate 429 with a Retry-After (``Limits``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from judging.prompts import prompt_hash
from judging.simulator import batch
from judging.simulator.behaviour import MAX_DELAY_MS, Decision, Knobs, decide, max_tokens_of, parse_knobs, usage

logger = logging.getLogger(__name__)
REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    504: "Gateway Timeout",
}
MAX_BODY_BYTES = 4 * 1024 * 1024  # a judge prompt is a few kB; refuse to buffer more
MAX_HEAD_BYTES = 64 * 1024
MAX_TRACKED_PROMPTS = 100_000  # per-prompt counters forget their oldest entries beyond this


class BoundedCounter(Counter):
    """A Counter that keeps at most ``max_keys`` keys, forgetting the oldest first."""

    def __init__(self, max_keys: int = MAX_TRACKED_PROMPTS) -> None:
        self.max_keys = max_keys
        super().__init__()

    def __setitem__(self, key: Any, value: int) -> None:
        if key not in self and len(self) >= self.max_keys:
            del self[next(iter(self))]
        super().__setitem__(key, value)

    def add(self, key: Any) -> None:  # set-like use (garbled prompt hashes)
        self[key] = 1


@dataclass
class Stats:
    calls: BoundedCounter = field(default_factory=BoundedCounter)  # prompt hash -> requests received
    answered: BoundedCounter = field(default_factory=BoundedCounter)  # prompt hash -> 200 answers sent
    garbled: BoundedCounter = field(default_factory=BoundedCounter)  # prompt hashes answered with garbage
    statuses: Counter = field(default_factory=Counter)  # a handful of status codes
    total_calls: int = 0
    rate_limited: int = 0  # 429s for the rpm/tpm knobs (statuses["429"] also counts drawn errors)
    in_flight: int = 0
    peak_in_flight: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls),
            "answered": dict(self.answered),
            "garbled": sorted(self.garbled),
            "statuses": {str(k): v for k, v in self.statuses.items()},
            "peak_in_flight": self.peak_in_flight,
            "total_calls": self.total_calls,
            "rate_limited": self.rate_limited,
        }


class Bucket:
    """Continuously refilled token bucket holding at most one second's worth."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.cap = max(1.0, self.rate)
        self.tokens, self.at = self.cap, time.monotonic()

    def take(self, cost: float) -> float:
        """0 when ``cost`` fits now (and takes it), else seconds until it would."""
        now = time.monotonic()
        self.tokens = min(self.cap, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= min(cost, self.cap):
            self.tokens -= cost
            return 0.0
        return max(0.01, (min(cost, self.cap) - self.tokens) / self.rate)


class Limits:
    """The ``rpm``/``tpm`` knobs, per model string (a provider limits per model and key)."""

    def __init__(self) -> None:
        self.buckets: dict[tuple[str, str, int], Bucket] = {}

    def _bucket(self, model: str, kind: str, per_minute: int) -> Bucket:
        key = (model, kind, per_minute)
        if key not in self.buckets:
            self.buckets[key] = Bucket(per_minute)
        return self.buckets[key]

    def admit(self, model: str, knobs: Knobs, messages: list[dict[str, Any]], text: str) -> float:
        wait = self._bucket(model, "rpm", knobs.rpm).take(1) if knobs.rpm else 0.0
        if not wait and knobs.tpm:
            wait = self._bucket(model, "tpm", knobs.tpm).take(sum(usage(messages, text)))
            if wait and knobs.rpm:  # refused after all: the request slot is given back
                self._bucket(model, "rpm", knobs.rpm).tokens += 1
        return wait


def completion_body(model: str, text: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    tokens_in, tokens_out = usage(messages, text)
    return {
        "id": f"simcmpl-{random.getrandbits(48):x}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out},
    }


def error_body(decision: Decision) -> dict[str, Any]:
    kinds = {429: "rate_limit_exceeded", 500: "server_error", 504: "timeout"}
    return {"error": {"message": f"simulated {decision.status}", "type": kinds.get(decision.status, "error")}}


class SimulatorServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        defaults: Knobs | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.defaults = defaults or Knobs()
        self.max_concurrency = max_concurrency
        self.stats = Stats()
        self.limits = Limits()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._slots: asyncio.Semaphore | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # --- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        if self.max_concurrency:
            self._slots = asyncio.Semaphore(self.max_concurrency)
        self._server = await asyncio.start_server(self._serve, self.host, self.port, backlog=2048, limit=MAX_HEAD_BYTES)
        self.port = self._server.sockets[0].getsockname()[1]

    def start_in_thread(self) -> SimulatorServer:
        """Run on a private event loop in a daemon thread (tests, benchmarks)."""
        ready = threading.Event()

        def main() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=main, name="simulator", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if not (self._loop and self._server):
            return
        server = self._server

        async def close() -> None:
            server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread:
            self._thread.join(5)

    def reset(self) -> None:
        self.stats = Stats()
        self.limits = Limits()

    # --- HTTP ----------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                try:
                    length = int(headers.get("content-length") or 0)
                except ValueError:
                    length = -1
                if not 0 <= length <= MAX_BODY_BYTES:
                    data = json.dumps({"error": {"message": "request body too large"}}).encode()
                    writer.write(
                        f"HTTP/1.1 413 {REASONS[413]}\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
                        + data
                    )
                    await writer.drain()
                    return
                body = await reader.readexactly(length)
                arrived = asyncio.get_running_loop().time()
                status, payload, extra = await self._route(method, path.split("?", 1)[0], body, arrived)
                # Batch output files are raw JSONL bytes; everything else is one JSON document.
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                content_type = extra.pop("Content-Type", "application/json")
                extra_lines = "".join(f"{k}: {v}\r\n" for k, v in extra.items())
                writer.write(
                    f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n"
                    f"Content-Type: {content_type}\r\nContent-Length: {len(data)}\r\n"
                    f"{extra_lines}\r\n".encode()
                    + data
                )
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return  # the client went away (a killed worker): nothing to answer
        except asyncio.CancelledError:
            return  # server shutdown; re-raising makes 3.11's stream callback log noise
        finally:
            writer.close()

    async def _route(self, method: str, path: str, body: bytes, arrived: float) -> tuple[int, dict, dict]:
        path = path.removeprefix("/sim")
        if path == "/v1/chat/completions" and method == "POST":
            return await self._complete(body, arrived)
        if path == "/v1/stats" and method == "GET":
            return 200, self.stats.as_json(), {}
        if path == "/v1/stats/reset" and method == "POST":
            self.reset()
            return 200, {"reset": True}, {}
        if path.startswith(("/v1/files", "/v1/batches")):  # the Batch API: judging.simulator.batch
            reply = await batch.store_for(self).route(method, path, body)
            if reply is not None:
                return reply
        return 404, {"error": {"message": "not found"}}, {}

    async def _complete(self, body: bytes, arrived: float | None = None) -> tuple[int, dict, dict]:
        # A batch line (judging.simulator.batch) arrives when the batch runs it: now.
        arrived = asyncio.get_running_loop().time() if arrived is None else arrived
        try:
            request = json.loads(body)
            messages = request["messages"]
            model = str(request.get("model", ""))
            knobs = parse_knobs(model, self.defaults)
        except (ValueError, KeyError, TypeError) as exc:
            return 400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}}, {}
        key = prompt_hash(messages)
        call_index = self.stats.calls[key]
        self.stats.calls[key] += 1
        self.stats.total_calls += 1
        try:
            decision = decide(knobs, messages, call_index, max_tokens=max_tokens_of(request))
        except ValueError as exc:
            return 400, {"error": {"message": f"bad prompt: {exc}", "type": "invalid_request_error"}}, {}
        wait = self.limits.admit(model, knobs, messages, decision.text if decision.status == 200 else "")
        if wait:  # over the model's rpm/tpm: answered at once, like a provider would
            self.stats.statuses[429] += 1
            self.stats.rate_limited += 1
            return (
                429,
                {"error": {"message": "rate limit reached", "type": "rate_limit_exceeded"}},
                {"Retry-After": f"{wait:.2f}"},
            )
        if self._slots:
            # A request that waits for a free slot is served from when it gets one.
            since = None if self._slots.locked() else arrived
            async with self._slots:
                await self._hold(knobs, decision, since)
        else:
            await self._hold(knobs, decision, arrived)
        self.stats.statuses[decision.status] += 1
        if decision.status == 429:
            return 429, error_body(decision), {"Retry-After": f"{decision.retry_after:g}"}
        if decision.status != 200:
            return decision.status, error_body(decision), {}
        self.stats.answered[key] += 1
        if decision.garbled:
            self.stats.garbled.add(key)
        return 200, completion_body(model, decision.text, messages), {}

    async def _hold(self, knobs: Knobs, decision: Decision, since: float | None) -> None:
        """Answer ``latency_ms`` (+ jitter, + the decision's hold) after ``since`` (the request's
        arrival; now if it waited for a slot): the time spent parsing and deciding is part of
        the latency, as at a provider, so an endpoint set to 200 ms answers in 200 ms."""
        self.stats.in_flight += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
        try:
            delay = knobs.latency_ms + (random.random() * knobs.jitter_ms if knobs.jitter_ms else 0)
            loop = asyncio.get_running_loop()
            start = loop.time() if since is None else since
            due = start + min(delay + decision.hold_ms, MAX_DELAY_MS) / 1000
            await asyncio.sleep(max(0.0, due - loop.time()))
        finally:
            self.stats.in_flight -= 1


def serve_forever(host: str, port: int, *, defaults: Knobs, max_concurrency: int | None) -> None:
    async def main() -> None:
        server = SimulatorServer(host, port, defaults=defaults, max_concurrency=max_concurrency)
        await server.start()
        logger.info("simulator listening on %s", server.base_url)
        await asyncio.Event().wait()

    asyncio.run(main())
