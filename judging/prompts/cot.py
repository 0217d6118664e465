"""The cot run's one change to a prompt: a step-by-step instruction (CALM's chain-of-thought bias).

The cot run is the order run's twin: the same pairs in the same two arrangements, and this
sentence in place of the CoBBLEr prompt's "do not explain" (or after a template's own
instructions), so ``analysis.metrics.cot`` compares the two runs pair by pair. It is code, not a
version file: it defines the condition, the same in every version, and it is part of every cot
prompt's hash.
"""

from __future__ import annotations

COT_INSTRUCTION = (
    "Think step by step: first explain your reasoning, then give your verdict on the last line in the format above."
)
