"""How fast the machine is while a benchmark runs.

The benchmark machines are VMs whose speed drifts by a fifth or more from minute to minute
(other tenants), so a latency or a wall time alone does not say whether the code or the
machine changed. Each benchmark records this probe beside its figures.
"""

from __future__ import annotations

import time


def speed_probe() -> float:
    """Seconds this machine takes for 10^7 additions in a pure-Python loop (in a function:
    about 0.4 s on a 2026 cloud core; a module-level loop, as in ``python -c``, is ~2.5x slower)."""
    started = time.perf_counter()
    total = 0
    for i in range(10**7):
        total += i
    return round(time.perf_counter() - started, 3)
