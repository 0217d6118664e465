"""Chain of thought (CALM): the same pairs judged with and without reasoning step by step first.

Not a cue: the procedure changes, not the pair. A judge's cot run is the order run with the
prompt asking it to think step by step (``judging.prompts.cot``). People's is the crowd order
design (each pair twice, the positions swapped, answered by one worker) drawn from the order
run's seeded stream, so with the same seed it holds the same pairs
(``annotations.services.design``), and the page asks for the reasoning before the choice: a
written, required explanation of at least ``MIN_REASONING_CHARS`` characters, whatever the
study's own rationale setting. The outcome (consistency and accuracy on gold pairs, with minus
without) is ``analysis.metrics.cot``'s, for judges and people alike.
"""

from __future__ import annotations

from annotations.vocabulary import Condition

CONDITION = Condition.COT
# A sentence or two: "A" or "ok" is no reasoning. Counted after trimming the ends.
MIN_REASONING_CHARS = 40
# What the worker page shows above the pair and on the reasoning box.
WORKER_INSTRUCTION = (
    "Think it through step by step before you choose: write down what each answer gets right and what it "
    "gets wrong, then decide which is better."
)
REASONING_LABEL = "Your reasoning, step by step"
# The simulated crowd's guess (annotations.simulation.behaviour): writing the reasoning down first
# scales a worker's habit of picking System A unread by (1 - knob) and sharpens how reliably the
# quality gap decides by (1 + knob).
SIMULATED_FOCUS = 0.5
