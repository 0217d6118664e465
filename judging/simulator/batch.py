"""The simulator's OpenAI Batch API: ``/v1/files`` and ``/v1/batches``, files kept in memory.

A batch moves ``validating`` -> ``in_progress`` -> ``finalizing`` -> ``completed`` (or
``failed`` when the input file is unusable, ``cancelling`` -> ``cancelled`` on cancel).
Every input line is answered by the server's own ``/v1/chat/completions`` handler, so a
line gets exactly what a synchronous call with the same body would get (knobs, error rate,
garbage, call counters): 200 answers go to the output file, anything else to the error file,
as OpenAI does. A batch completes no sooner than ``delay_s`` after it was created
(``BatchStore.delay_s``, default ``$SIMULATOR_BATCH_DELAY_S`` or 1 s; tests set it), which is
what a poller has to wait out. ``BatchStore.enabled = False`` answers 404 like an endpoint
without a Batch API.

Bounded: at most ``MAX_FILES`` files and ``MAX_STORED_BYTES`` bytes are kept (the oldest go
first), and at most ``MAX_BATCHES`` batches.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

MAX_FILES = 500
MAX_STORED_BYTES = 256 * 1024 * 1024
MAX_BATCHES = 1000
MAX_LINES = 50_000  # OpenAI's per-batch limit
ENDPOINT = "/v1/chat/completions"
LINE_CONCURRENCY = 64

Answer = Callable[[bytes], Awaitable[tuple[int, dict, dict]]]
Reply = tuple[int, Any, dict]


def _id(prefix: str) -> str:
    return f"{prefix}-sim{random.getrandbits(64):016x}"


def _error(status: int, message: str, kind: str = "invalid_request_error") -> Reply:
    return status, {"error": {"message": message, "type": kind}}, {}


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class SimBatch:
    id: str
    input_file_id: str
    metadata: dict[str, str] | None
    created_at: float = field(default_factory=time.time)
    status: str = "validating"
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] | None = None
    stamps: dict[str, int] = field(default_factory=dict)  # in_progress_at, completed_at...
    cancel_requested: bool = False

    def set_status(self, status: str) -> None:
        self.status = status
        self.stamps[f"{status}_at"] = int(time.time())

    def as_json(self) -> dict[str, Any]:
        stamps = {
            name: self.stamps.get(name)
            for name in (
                "in_progress_at",
                "finalizing_at",
                "completed_at",
                "failed_at",
                "expired_at",
                "cancelling_at",
                "cancelled_at",
            )
        }
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": ENDPOINT,
            "completion_window": "24h",
            "input_file_id": self.input_file_id,
            "status": self.status,
            "created_at": int(self.created_at),
            "expires_at": int(self.created_at) + 24 * 3600,
            **stamps,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "request_counts": {"total": self.total, "completed": self.completed, "failed": self.failed},
            "metadata": self.metadata,
        }


class BatchStore:
    """Files and batches of one simulator server, answering lines with ``answer``."""

    def __init__(self, answer: Answer, *, delay_s: float = 1.0, validate_s: float = 0.1) -> None:
        self.answer = answer
        self.delay_s = delay_s  # earliest completion, seconds after creation
        self.validate_s = validate_s  # time spent "validating"
        self.enabled = True  # False: answer 404 like an endpoint without a Batch API
        self.files: OrderedDict[str, StoredFile] = OrderedDict()
        self.batches: OrderedDict[str, SimBatch] = OrderedDict()
        self.lines_answered = 0
        self._tasks: set[asyncio.Task] = set()

    # --- routing -------------------------------------------------------------------
    async def route(self, method: str, path: str, body: bytes) -> Reply | None:
        """The reply for a Batch API path, or None when the path is not one of ours."""
        if not self.enabled:
            return None
        parts = path.strip("/").split("/")  # ["v1", "files", id, "content"]
        if parts[:2] == ["v1", "files"]:
            if len(parts) == 2 and method == "POST":
                return self.upload(body)
            if len(parts) == 3 and method == "GET":
                stored = self.files.get(parts[2])
                return (200, stored.as_json(), {}) if stored else _error(404, "no such file")
            if len(parts) == 4 and parts[3] == "content" and method == "GET":
                stored = self.files.get(parts[2])
                if not stored:
                    return _error(404, "no such file")
                return 200, stored.content, {"Content-Type": "application/octet-stream"}
            return None
        if parts[:2] == ["v1", "batches"]:
            if len(parts) == 2 and method == "POST":
                return self.create(body)
            batch = self.batches.get(parts[2]) if len(parts) >= 3 else None
            if len(parts) == 3 and method == "GET":
                return (200, batch.as_json(), {}) if batch else _error(404, "no such batch")
            if len(parts) == 4 and parts[3] == "cancel" and method == "POST":
                return self.cancel(batch) if batch else _error(404, "no such batch")
        return None

    # --- files -----------------------------------------------------------------------
    def upload(self, body: bytes) -> Reply:
        try:
            fields = parse_multipart(body)
        except ValueError as exc:
            return _error(400, f"bad multipart upload: {exc}")
        if "file" not in fields or "purpose" not in fields:
            return _error(400, "an upload needs the fields 'file' and 'purpose'")
        filename, content = fields["file"]
        purpose = fields["purpose"][1].decode(errors="replace")
        if purpose != "batch":
            return _error(400, f"the simulator stores only purpose 'batch' files, not {purpose!r}")
        return 200, self._keep(filename or "upload.jsonl", purpose, content).as_json(), {}

    def _keep(self, filename: str, purpose: str, content: bytes) -> StoredFile:
        stored = StoredFile(_id("file"), filename, purpose, content)
        self.files[stored.id] = stored
        while len(self.files) > MAX_FILES or (
            len(self.files) > 1 and sum(len(f.content) for f in self.files.values()) > MAX_STORED_BYTES
        ):
            self.files.popitem(last=False)
        return stored

    # --- batches ---------------------------------------------------------------------
    def create(self, body: bytes) -> Reply:
        try:
            request = json.loads(body)
            input_file_id = str(request["input_file_id"])
        except (ValueError, KeyError, TypeError):
            return _error(400, "a batch needs a JSON body with input_file_id")
        if request.get("endpoint") != ENDPOINT:
            return _error(400, f"the simulator batches only {ENDPOINT}")
        if request.get("completion_window") != "24h":
            return _error(400, "completion_window must be '24h'")
        if input_file_id not in self.files:
            return _error(404, f"no such file {input_file_id!r}")
        metadata = request.get("metadata")
        batch = SimBatch(_id("batch"), input_file_id, metadata if isinstance(metadata, dict) else None)
        self.batches[batch.id] = batch
        while len(self.batches) > MAX_BATCHES:
            self.batches.popitem(last=False)
        task = asyncio.get_running_loop().create_task(self._run(batch))
        self._tasks.add(task)  # a reference, or the loop may drop the task
        task.add_done_callback(self._tasks.discard)
        return 200, batch.as_json(), {}

    def cancel(self, batch: SimBatch) -> Reply:
        if batch.status in ("validating", "in_progress", "finalizing"):
            batch.cancel_requested = True
            batch.set_status("cancelling")
        return 200, batch.as_json(), {}

    async def _run(self, batch: SimBatch) -> None:
        await asyncio.sleep(self.validate_s)
        stored = self.files.get(batch.input_file_id)
        lines, problems = validate_lines(stored.content if stored else b"")
        if problems:
            batch.errors = problems
            batch.set_status("failed")
            return
        batch.total = len(lines)
        if batch.cancel_requested:
            return self._finish(batch, [], [])
        batch.set_status("in_progress")
        slots = asyncio.Semaphore(LINE_CONCURRENCY)
        outputs: list[bytes] = []
        errors: list[bytes] = []

        async def one(line: dict[str, Any]) -> None:
            async with slots:
                if batch.cancel_requested:
                    return
                status, payload, _ = await self.answer(json.dumps(line["body"]).encode())
            self.lines_answered += 1
            ok = status == 200
            record = {
                "id": _id("batch_req"),
                "custom_id": line["custom_id"],
                "response": {"status_code": status, "request_id": _id("req"), "body": payload},
                "error": None,
            }
            (outputs if ok else errors).append(json.dumps(record).encode())
            if ok:
                batch.completed += 1
            else:
                batch.failed += 1

        await asyncio.gather(*(one(line) for line in lines))
        if not batch.cancel_requested:
            await asyncio.sleep(max(0.0, batch.created_at + self.delay_s - time.time()))
        self._finish(batch, outputs, errors)

    def _finish(self, batch: SimBatch, outputs: list[bytes], errors: list[bytes]) -> None:
        if not batch.cancel_requested:
            batch.set_status("finalizing")
        if outputs:
            batch.output_file_id = self._keep(
                f"{batch.id}_output.jsonl", "batch_output", b"\n".join(outputs) + b"\n"
            ).id
        if errors:
            batch.error_file_id = self._keep(f"{batch.id}_error.jsonl", "batch_output", b"\n".join(errors) + b"\n").id
        batch.set_status("cancelled" if batch.cancel_requested else "completed")

    def as_json(self) -> dict[str, Any]:
        return {
            "files": len(self.files),
            "batches": {b.id: b.status for b in self.batches.values()},
            "lines_answered": self.lines_answered,
        }


def validate_lines(content: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The input file's requests, or the problems that fail the whole batch (as OpenAI does)."""
    lines: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            custom_id = str(line["custom_id"])
            body = line["body"]
        except (ValueError, KeyError, TypeError):
            problems.append({"code": "invalid_json_line", "message": "not a JSON request line", "line": number})
            continue
        if line.get("method") != "POST" or line.get("url") != ENDPOINT or not isinstance(body, dict):
            problems.append({"code": "invalid_request", "message": f"must be POST {ENDPOINT}", "line": number})
        elif custom_id in seen:
            problems.append(
                {"code": "duplicate_custom_id", "message": f"custom_id {custom_id!r} repeats", "line": number}
            )
        seen.add(custom_id)
        lines.append({"custom_id": custom_id, "body": body})
    if not lines and not problems:
        problems.append({"code": "empty_file", "message": "the input file has no requests", "line": None})
    if len(lines) > MAX_LINES:
        problems.append({"code": "too_many_requests", "message": f"more than {MAX_LINES} requests", "line": None})
    return lines, problems[:100]


def parse_multipart(body: bytes) -> dict[str, tuple[str, bytes]]:
    """``multipart/form-data`` fields -> {name: (filename, content)}.

    The boundary is read from the body's first line (the server does not pass headers down);
    RFC 7578 bodies start with it.
    """
    first, sep, _ = body.partition(b"\r\n")
    if not sep or not first.startswith(b"--") or len(first) < 3:
        raise ValueError("no boundary")
    delimiter = b"\r\n" + first
    fields: dict[str, tuple[str, bytes]] = {}
    for part in (b"\r\n" + body).split(delimiter)[1:]:
        if part.startswith(b"--"):
            break  # the closing delimiter
        head, sep, content = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        if not sep:
            raise ValueError("a part without headers")
        disposition = next(
            (line for line in head.decode("latin-1").split("\r\n") if line.lower().startswith("content-disposition:")),
            "",
        )
        params = _disposition_params(disposition)
        if "name" not in params:
            raise ValueError("a part without a name")
        fields[params["name"]] = (params.get("filename", ""), content)
    return fields


def _disposition_params(header: str) -> dict[str, str]:
    params = {}
    for item in header.split(";")[1:]:
        key, _, value = item.strip().partition("=")
        params[key.lower()] = value.strip().strip('"')
    return params


def store_for(server: Any) -> BatchStore:
    """The server's batch store, made on first use (answers lines with its own handler)."""
    store = getattr(server, "batch_store", None)
    if store is None:
        # ``manage.py run_simulator`` takes the delay from the environment (default 1 s).
        delay = float(os.environ.get("SIMULATOR_BATCH_DELAY_S") or 1.0)
        store = server.batch_store = BatchStore(server._complete, delay_s=delay)
    return store
