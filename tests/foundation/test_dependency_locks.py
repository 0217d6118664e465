"""The dependency locks: the image gets the runtime lock only, and every pin is hashed.

``requirements/runtime.txt`` and ``dev.txt`` are written by ``make lock`` (pip-compile) and
installed with ``--require-hashes --no-deps``: a lock line without a hash, or a loose pin,
would fail that install, and a test tool in the runtime lock would ship in the image.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.smoke

REQUIREMENTS = PROJECT_ROOT / "requirements"
DEV_ONLY = ("pytest", "pytest-django", "pytest-xdist", "playwright", "schemathesis", "hypothesis", "ruff", "mypy")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def lock_entries(name: str) -> dict[str, str]:
    """Each requirement of a lock (its continuation lines joined) by package name."""
    text = (REQUIREMENTS / name).read_text().replace("\\\n", " ")
    entries = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"{name}: not an exact pin: {line.strip()[:80]}"
        entries[match[1].lower()] = line
    return entries


@pytest.mark.parametrize("name", ["runtime.txt", "dev.txt"])
def test_every_locked_requirement_is_pinned_and_hashed(name):
    entries = lock_entries(name)
    assert entries
    unhashed = [pkg for pkg, line in entries.items() if "--hash=sha256:" not in line]
    assert unhashed == []


def test_the_dev_lock_has_the_runtime_versions_and_the_runtime_lock_no_tools():
    runtime, dev = lock_entries("runtime.txt"), lock_entries("dev.txt")
    assert set(runtime) <= set(dev)
    version = {pkg: PIN.match(line)[2] for pkg, line in runtime.items()}
    assert {pkg: PIN.match(dev[pkg])[2] for pkg in runtime} == version
    assert [tool for tool in DEV_ONLY if tool in runtime] == []
    assert all(tool in dev for tool in DEV_ONLY)


def test_the_image_installs_the_runtime_lock_only_and_make_the_dev_lock():
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text()
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert installs == [line for line in installs if "--require-hashes" in line and "requirements/runtime.txt" in line]
    assert len(installs) == 1
    assert "dev.txt" not in dockerfile
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    assert "--require-hashes --no-deps -r requirements/dev.txt" in makefile
