"""Shared plumbing for the importers: one-line input errors, file readers, bulk upserts, counts.

Every importer follows the same contract (issue 2, item 3): it runs inside one
transaction, raises ``BadInput`` (a ``CommandError``) naming the file and the
line, row or element that is wrong, and is re-runnable: rows are written with
``bulk_create`` upserts on their natural keys, so a second run adds nothing.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.management.base import CommandError

from cobbler_site.foundation import text_safety

if TYPE_CHECKING:
    from annotations.models import Study
from django.db import models

# Rows per INSERT; SQLite's variable limit is handled by Django, this bounds PostgreSQL statements.
BATCH_SIZE = 2000
csv.field_size_limit(50_000_000)  # Answer.taskAnswers cells hold whole JSON documents.
DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024  # settings.IMPORT_MAX_LINE_BYTES overrides it


class BadInput(CommandError):
    """Input that cannot be imported. The message is one line: where, and what is wrong."""

    def __init__(self, where: str, problem: str) -> None:
        one_line = " ".join(f"{where}: {problem}".split())
        super().__init__(one_line[:500])


def check_slug(slug: str) -> str:
    """The --study argument must be a slug that fits Study.slug, or nothing is written."""
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,64}", slug or ""):
        raise BadInput(f"--study {slug!r}", "must be a slug: 1-64 letters, digits, '-' or '_'")
    return slug


def rel(path: Path, root: Path | None) -> str:
    """The path as shown in messages and stored in ``source_file``: relative to the import root."""
    if root is not None:
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
    return str(path)


def read_json(path: Path, root: Path | None = None) -> Any:
    shown = rel(path, root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(shown, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(shown, f"cannot read: {exc}") from None
    try:
        return text_safety.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{shown}:{exc.lineno}", f"invalid JSON ({exc.msg})") from None
    except text_safety.JSONProblem as exc:
        raise BadInput(shown, f"refused JSON: {exc}") from None
    except RecursionError:
        raise BadInput(shown, "invalid JSON (nested too deeply)") from None


def max_line_bytes() -> int:
    """The longest JSONL line an importer reads (bytes, without the newline)."""
    return int(getattr(settings, "IMPORT_MAX_LINE_BYTES", DEFAULT_MAX_LINE_BYTES))


@dataclass(frozen=True)
class BadLine:
    """A JSONL line that could not be read (too long, not UTF-8, not JSON); see ``scan_json_lines``."""

    problem: str


def read_json_lines(path: Path, shown: str | None = None, *, limit: int | None = None) -> Iterator[tuple[str, Any]]:
    """('file:line', value) for every non-blank line of a JSONL file, in order.

    Lines end at b"\\n" only: U+2028, U+2029, form feeds and the other characters
    ``str.splitlines`` also splits on are valid inside a JSON string. Memory stays
    bounded: each line is read with ``readline(limit + 1)``, so a line longer than
    ``limit`` bytes is refused after reading at most that much. A line that cannot
    be decoded or parsed, nests too deeply or is too long is a one-line BadInput, and
    so is one ``cobbler_site.foundation.text_safety.loads`` refuses: a byte order mark, a duplicate
    key, an integer over 18 digits, a NUL character or a lone surrogate in a string.
    """
    for where, value in scan_json_lines(path, shown, limit=limit):
        if isinstance(value, BadLine):
            raise BadInput(where, value.problem)
        yield where, value


def scan_json_lines(path: Path, shown: str | None = None, *, limit: int | None = None) -> Iterator[tuple[str, Any]]:
    """``read_json_lines`` that goes on past a bad line: such a line comes out as ('file:line',
    BadLine(problem)) and the next one is read (a too-long line is skipped to its end in
    ``limit``-sized reads), so a preview can list every bad line. A file that cannot be opened
    or read is still a BadInput."""
    shown = shown or str(path)
    limit = max_line_bytes() if limit is None else limit
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise BadInput(shown, "file not found") from None
    except OSError as exc:
        raise BadInput(shown, f"cannot read: {exc}") from None
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline(limit + 1)
            except OSError as exc:
                raise BadInput(f"{shown}:{number + 1}", f"cannot read: {exc}") from None
            if not raw:
                return
            number += 1
            where = f"{shown}:{number}"
            if len(raw) > limit and not raw.endswith(b"\n"):
                yield where, BadLine(f"line longer than {limit} bytes (the IMPORT_MAX_LINE_BYTES limit)")
                _skip_to_line_end(handle, shown, number, limit)
                continue
            if not raw.strip(b" \t\r\n"):
                continue
            yield where, _parse_line(raw)


def _skip_to_line_end(handle: Any, shown: str, number: int, limit: int) -> None:
    while True:
        try:
            rest = handle.readline(limit + 1)
        except OSError as exc:
            raise BadInput(f"{shown}:{number}", f"cannot read: {exc}") from None
        if not rest or rest.endswith(b"\n"):
            return


def _parse_line(raw: bytes) -> Any:
    """One line's JSON value, or the BadLine saying why it has none."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadLine(f"not UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        return text_safety.loads(text)
    except json.JSONDecodeError as exc:
        return BadLine(f"invalid JSON ({exc.msg})")
    except text_safety.JSONProblem as exc:
        return BadLine(f"refused JSON: {exc}")
    except RecursionError:
        return BadLine("invalid JSON (nested too deeply)")


def read_csv(path: Path, root: Path | None = None, *, required: Sequence[str]) -> list[dict[str, str]]:
    """CSV rows as dicts; a missing column is an error on the header line."""
    shown = rel(path, root)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [name for name in required if name not in (reader.fieldnames or [])]
            if missing:
                raise BadInput(f"{shown}:1", f"missing column(s) {', '.join(missing)}")
            rows = list(reader)
    except FileNotFoundError:
        raise BadInput(shown, "file not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise BadInput(shown, f"cannot read CSV: {exc}") from None
    for number, row in enumerate(rows, 1):
        # The cells go to text columns; see cobbler_site.foundation.text_safety.
        if problem := text_safety.find_text_problem(list(row.items())):
            raise BadInput(csv_where(path, root, number), f"a cell {problem}")
    return rows


def csv_where(path: Path, root: Path | None, row_number: int) -> str:
    """'file: row N' with N counted from 1 after the header (the header is line 1)."""
    return f"{rel(path, root)}: row {row_number}"


def stable_key(*parts: object) -> str:
    """A deterministic idempotency key for an imported submission (64 hex chars)."""
    return hashlib.sha256("|".join(str(part) for part in parts).encode()).hexdigest()


_MTURK_ZONES = {"PDT": -7, "PST": -8, "UTC": 0, "GMT": 0}


def parse_mturk_time(raw: str) -> datetime | None:
    """MTurk's 'Wed Sep 06 10:52:31 PDT 2023'; None when absent or in an unknown zone."""
    parts = (raw or "").split()
    if len(parts) != 6 or parts[4] not in _MTURK_ZONES:
        return None
    try:
        naive = datetime.strptime(" ".join(parts[:4] + parts[5:]), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None
    return naive.replace(tzinfo=timezone(timedelta(hours=_MTURK_ZONES[parts[4]])))


def upsert(
    model: type[models.Model],
    objs: Iterable[models.Model],
    *,
    unique_fields: Sequence[str],
    update_fields: Sequence[str] = (),
) -> None:
    """Insert rows, or update ``update_fields`` where the natural key already exists.

    One statement per BATCH_SIZE rows: a re-import costs the same as the first
    import and never duplicates (the key must be a unique constraint).
    """
    rows = list(objs)
    if not rows:
        return
    if update_fields:
        model._default_manager.bulk_create(  # the model's ``objects``, for any model class
            rows,
            batch_size=BATCH_SIZE,
            update_conflicts=True,
            unique_fields=list(unique_fields),
            update_fields=list(update_fields),
        )
    else:
        model._default_manager.bulk_create(rows, batch_size=BATCH_SIZE, ignore_conflicts=True)


def sync_rows(
    existing: models.QuerySet,
    rows: Iterable[tuple],
    *,
    key_fields: Sequence[str],
    value_fields: Sequence[str],
    constants: dict[str, Any] | None = None,
) -> None:
    """Like ``upsert`` for big tables: read the stored rows once, write only what differs.

    ``rows`` are plain tuples of ``key_fields + value_fields`` (attnames such as
    ``judge_id``); model instances are built only for rows that must be written,
    since building ~78,000 of them costs more than the SQL. ON CONFLICT upserts would
    make PostgreSQL rewrite every row on a re-import; here a re-import of unchanged
    data is one SELECT. Plain INSERTs are safe inside the caller's transaction: a
    concurrent import of the same study fails on the unique constraint, never duplicates.
    """
    n_keys = len(key_fields)
    stored = {row[:n_keys]: row[n_keys:] for row in existing.values_list(*key_fields, "pk", *value_fields)}
    model, fields = existing.model, (*key_fields, *value_fields)
    new, changed = [], []
    for row in rows:
        key, values = tuple(row[:n_keys]), tuple(row[n_keys:])
        if key not in stored:
            new.append(model(**constants or {}, **dict(zip(fields, row, strict=True))))
            stored[key] = (None, *values)  # a repeated key in the input is inserted once
        elif stored[key][0] is not None and stored[key][1:] != values:
            changed.append(model(pk=stored[key][0], **constants or {}, **dict(zip(fields, row, strict=True))))
    model.objects.bulk_create(new, batch_size=BATCH_SIZE)
    if changed:
        model.objects.bulk_update(changed, [name.removesuffix("_id") for name in value_fields], batch_size=BATCH_SIZE)


@dataclass
class ImportReport:
    """Row counts per table after an import, with how many rows this run added."""

    lines: list[tuple[str, int, int]] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # breakdowns printed as they are
    notes: list[str] = field(default_factory=list)  # skipped or inconsistent input
    extension_lines: list[str] = field(default_factory=list)  # "judge calls: 240", from study extensions

    def add(self, table: str, before: int, after: int) -> None:
        self.lines.append((table, after, after - before))

    def counts(self) -> dict[str, int]:
        return {table: total for table, total, _new in self.lines}

    def render(self) -> list[str]:
        out = [f"{table}: {total} (+{new} new)" for table, total, new in self.lines]
        return out + self.details + [f"note: {note}" for note in self.notes]


def content_counters(slug: str) -> dict[str, models.QuerySet]:
    """A study's content and human work, table by table, for RowCounter (every importer)."""
    from annotations.models import (
        Assignment,
        Batch,
        Candidate,
        Instruction,
        Pair,
        Participant,
        Response,
        Submission,
        Task,
    )

    return {
        "instructions": Instruction.objects.filter(study__slug=slug),
        "candidates": Candidate.objects.filter(study__slug=slug),
        "responses": Response.objects.filter(instruction__study__slug=slug),
        "pairs": Pair.objects.filter(instruction__study__slug=slug),
        "batches": Batch.objects.filter(study__slug=slug),
        "tasks": Task.objects.filter(batch__study__slug=slug),
        "participants": Participant.objects.filter(study__slug=slug),
        "assignments": Assignment.objects.filter(batch__study__slug=slug),
        "submissions": Submission.objects.filter(assignment__batch__study__slug=slug),
    }


class RowCounter:
    """Counts rows of named querysets before and after an import (one COUNT per table)."""

    def __init__(self, querysets: dict[str, models.QuerySet]) -> None:
        self.querysets = querysets
        self.before = {name: qs.count() for name, qs in querysets.items()}

    def report(self) -> ImportReport:
        report = ImportReport()
        for name, qs in self.querysets.items():
            report.add(name, self.before[name], qs.count())
        return report


def record_source_files(*, study: Study, root: Path | None, paths: list[Path]) -> None:
    """Store the sha256 of every source file on the study (for the reports' manifest)."""
    digests = {}
    for path in sorted(paths):
        sha = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(functools.partial(handle.read, 1 << 20), b""):
                sha.update(chunk)
        name = str(path.relative_to(root)) if root and path.is_relative_to(root) else path.name
        digests[name] = sha.hexdigest()
    if study.source_files != digests:
        study.source_files = digests
        study.save(update_fields=["source_files"])
