"""Compare two report snapshots (benchmarks/report_snapshot.sh): the files that differ beyond the
fields that change on every run (timestamps, commit, data_version).

    python -m benchmarks.report_diff OLD_DIR NEW_DIR   (exit 1 when any report differs)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# What differs on every run: when it was computed, from which commit, on which data version.
VOLATILE = re.compile(
    r'("(?:generated_at|computed_at|commit|data_version|created_at)":\s*"[^"]*")'
    r"|(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"
    r"|(\b[0-9a-f]{40}\b)"
    r"|(data version [0-9a-f]{16})"
)


def normalised(path: Path) -> str:
    return VOLATILE.sub("<volatile>", path.read_text(encoding="utf-8"))


def main(old: str, new: str) -> int:
    old_dir, new_dir = Path(old), Path(new)
    names = sorted({p.name for p in old_dir.iterdir()} | {p.name for p in new_dir.iterdir()})
    differ = []
    for name in names:
        a, b = old_dir / name, new_dir / name
        if not a.exists() or not b.exists() or normalised(a) != normalised(b):
            differ.append(name)
    print(
        f"{len(names) - len(differ)} of {len(names)} reports identical"
        + (f"; differ: {', '.join(differ)}" if differ else "")
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
