"""What the simulated crowd did in one run, as the crowd loop records it and the timeline rewrites it."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotations.models import Assignment
from annotations.simulation.behaviour import SimWorker


@dataclass
class Sitting:
    """One batch a simulated worker answered in this run, in the order the tasks were answered."""

    worker: SimWorker
    assignment: Assignment
    submissions: list[tuple[int, bool]] = field(default_factory=list)  # (submission id, is ranking)
