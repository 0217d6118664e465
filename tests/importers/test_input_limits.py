"""Importer input limits (issue 10, item 6): U+2028 inside JSON, deep nesting, over-long lines.

Lines end at b"\\n" only; a line nested too deeply or longer than IMPORT_MAX_LINE_BYTES is
the importer's one-line error naming file and line, with a non-zero exit and an unchanged
database, and the long line is refused after reading at most the limit.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotations.importers.base import BadInput, read_json_lines
from annotations.models import Response
from tests.conftest import PROJECT_ROOT, _worker_env
from tests.importers.conftest import table_counts

pytestmark = pytest.mark.django_db


def _conv(question: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def _row(**overrides) -> dict:
    row = {
        "question_id": 7,
        "model_a": "m1",
        "model_b": "m2",
        "winner": "model_a",
        "judge": "expert_9",
        "turn": 1,
        "conversation_a": _conv("Q?", "a1"),
        "conversation_b": _conv("Q?", "b1"),
    }
    return row | overrides


def _import(path: Path, slug: str = "limits") -> str:
    out = io.StringIO()
    call_command("import_mtbench", str(path), "--study", slug, stdout=out)
    return out.getvalue()


def test_a_line_with_u2028_and_u2029_imports(tmp_path):
    answer = "first line\u2028second line\u2029third\x0cfourth\x1cfifth\x85sixth"
    line = json.dumps(_row(conversation_a=_conv("Q?", answer)), ensure_ascii=False)
    assert "\u2028" in line and len(line.splitlines()) > 1  # what the old reader split on
    path = tmp_path / "u2028.jsonl"
    path.write_bytes((line + "\n" + json.dumps(_row(question_id=8)) + "\n").encode())
    assert "submissions: 2 (+2 new)" in _import(path)
    stored = Response.objects.get(instruction__study__slug="limits", instruction__external_id="7", candidate__key="m1")
    assert stored.text == answer


def test_crlf_blank_lines_and_no_final_newline_still_import(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(json.dumps(_row()).encode() + b"\r\n\r\n  \n" + json.dumps(_row(question_id=8)).encode())
    assert "submissions: 2 (+2 new)" in _import(path)


def test_a_byte_order_mark_is_refused_naming_file_and_line(tmp_path):
    """Issue 23: a BOM was dropped silently; now it is the one-line error (tests/foundation/test_hostile_input.py)."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_row()).encode() + b"\n")
    before = table_counts()
    with pytest.raises(CommandError) as caught:
        _import(path)
    assert str(caught.value).startswith(f"{path}:1: refused JSON: starts with a byte order mark")
    assert table_counts() == before


def test_deep_nesting_is_a_one_line_error_naming_file_and_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(_row()) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    before = table_counts()
    with pytest.raises(CommandError) as caught:
        _import(path)
    assert str(caught.value) == f"{path}:2: invalid JSON (nested too deeply)"
    assert table_counts() == before


def test_the_command_on_a_100k_deep_line_prints_one_line_and_exits_non_zero(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(_row()) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    before = table_counts()
    done = subprocess.run(
        [sys.executable, "manage.py", "import_mtbench", str(path), "--study", "deep"],
        cwd=PROJECT_ROOT,
        env=_worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert done.stderr.splitlines() == [f"BadInput: {path}:2: invalid JSON (nested too deeply)"]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert table_counts() == before


@pytest.mark.parametrize("newline", [b"\n", b""])
def test_a_line_over_the_limit_is_refused_one_at_the_limit_is_read(tmp_path, settings, newline):
    settings.IMPORT_MAX_LINE_BYTES = 1000
    line = json.dumps(_row()).encode()
    pad = b" " * (1000 - len(line))  # JSON allows trailing whitespace
    at_limit, over = line + pad, line + pad + b" "
    path = tmp_path / "limit.jsonl"
    path.write_bytes(at_limit + b"\n" + at_limit + newline)
    assert [where for where, _value in read_json_lines(path)] == [f"{path}:1", f"{path}:2"]
    path.write_bytes(at_limit + b"\n" + over + newline)
    before = table_counts()
    with pytest.raises(CommandError) as caught:
        _import(path)
    assert str(caught.value) == f"{path}:2: line longer than 1000 bytes (the IMPORT_MAX_LINE_BYTES limit)"
    assert table_counts() == before


def test_a_long_line_is_refused_without_reading_it_into_memory(tmp_path):
    """A 60 MB line against a 1 MiB limit: peak allocation stays a few MiB, far below the line."""
    path = tmp_path / "long.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"question_id": 7, "conversation_a": [{"role": "user", "content": "')
        block = b"x" * (1 << 20)
        for _ in range(60):
            handle.write(block)
        handle.write(b'"}]}\n')
    tracemalloc.start()
    try:
        with pytest.raises(BadInput, match=r"long\.jsonl:1: line longer than 1048576 bytes"):
            list(read_json_lines(path, limit=1 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * (1 << 20), f"peak {peak / 2**20:.1f} MiB"


def test_the_default_limit_is_8_mib_and_configurable(settings):
    from annotations.importers.base import max_line_bytes

    assert max_line_bytes() == 8 * 1024 * 1024
    settings.IMPORT_MAX_LINE_BYTES = 42
    assert max_line_bytes() == 42


def test_invalid_utf8_is_a_one_line_error(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(_row()).encode() + b"\n" + '{"a": "caf\xe9"}'.encode("latin-1") + b"\n")
    with pytest.raises(CommandError, match=rf"^{path}:2: not UTF-8"):
        _import(path)


def test_deep_nesting_in_a_cobbler_json_file_is_a_one_line_error(tmp_path):
    from annotations.importers.base import read_json

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(BadInput) as caught:
        read_json(path, tmp_path)
    assert str(caught.value) == "deep.json: invalid JSON (nested too deeply)"
