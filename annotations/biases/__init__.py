"""The bias battery: one plugin module per cue bias, and the registry every layer reads.

A cue bias (``base.CueBias``) declares its perturbation (seeded, stored with the cue), where it
goes (a sentence in the prompt's ``{cue}`` insertion point, or the cued answer's own text), the
outcome counted (the cued answer chosen both times against the other both times), its null, its
claim words and plot label, and its simulator knob. The judge planner and renderers
(``judging.conditions``, ``judging.prompts``), the simulator, the crowd task designer and worker
page (``annotations.services.design``, ``annotations.shown``), the counts, tests and claims
(``analysis.metrics``, ``analysis.summary``) and the battery table read this registry, so a new
bias is a new module here plus its ``Condition`` value (ARCHITECTURE.md, "Add a bias").

CoBBLEr's other biases are read off the runs whose two showings swap the answers (order,
compassion): position, self-preference (egocentric, and egocentric_comp in the named run) and
length (salience). Each is a ``swap.SwapBias`` in its own module, listed in ``SWAP_REGISTRY``:
the claims, headlines, leaderboard, the bias table's nulls and coin values and the reference rows
read it; their counting is the report's (``analysis.metrics.bias``).
"""

from __future__ import annotations

from annotations.biases.attentional import ATTENTIONAL
from annotations.biases.authority import AUTHORITY
from annotations.biases.bandwagon import BANDWAGON
from annotations.biases.base import ANSWER, PROMPT, CueBias, CueContext, Rewritten, Words
from annotations.biases.egocentric import EGOCENTRIC, EGOCENTRIC_COMP
from annotations.biases.identity import IDENTITY
from annotations.biases.order import POSITION
from annotations.biases.refinement import REFINEMENT
from annotations.biases.salience import SALIENCE
from annotations.biases.selective import SELECTIVE
from annotations.biases.sentiment import SENTIMENT
from annotations.biases.swap import CLAIMED, CONFOUNDED, SwapBias
from annotations.biases.verbosity import VERBOSITY

# In report order: CoBBLEr's first, then CALM's.
REGISTRY: dict[str, CueBias] = {
    b.condition: b for b in (BANDWAGON, ATTENTIONAL, SELECTIVE, AUTHORITY, VERBOSITY, REFINEMENT, IDENTITY, SENTIMENT)
}
CUE_CONDITIONS: tuple[str, ...] = tuple(REGISTRY)
# Crowd conditions whose tasks cue one slot.
CROWD_CUED: tuple[str, ...] = tuple(c for c, b in REGISTRY.items() if not b.judge_only)
# The biases added beside CoBBLEr's (the battery table lists every cue bias) whose perturbation
# is seeded and needs no model, so any study can run them at once.
CALM = (AUTHORITY.condition, VERBOSITY.condition, REFINEMENT.condition, IDENTITY.condition)
# CALM's biases whose perturbation a model writes first (a rewrite job): a pair shows them only
# when both answers have a stored rewrite of the bias's ``rewrite_kind``.
REWRITTEN = tuple(c for c, b in REGISTRY.items() if b.rewrite_kind)
# The biases read off the swapped runs, by report row, in report order.
SWAP_REGISTRY: dict[str, SwapBias] = {b.row: b for b in (POSITION, EGOCENTRIC, EGOCENTRIC_COMP, SALIENCE)}
# Rows whose own test claims, and rows claimed only against a reference on the same pairs.
SWAP_CLAIMED: tuple[str, ...] = tuple(r for r, b in SWAP_REGISTRY.items() if b.role == CLAIMED)
SWAP_CONFOUNDED: tuple[str, ...] = tuple(r for r, b in SWAP_REGISTRY.items() if b.role == CONFOUNDED)

__all__ = [
    "ANSWER",
    "CALM",
    "CROWD_CUED",
    "CUE_CONDITIONS",
    "PROMPT",
    "REGISTRY",
    "REWRITTEN",
    "SWAP_CLAIMED",
    "SWAP_CONFOUNDED",
    "SWAP_REGISTRY",
    "CueBias",
    "CueContext",
    "Rewritten",
    "SwapBias",
    "Words",
    "cue_bias",
]


def cue_bias(condition: str) -> CueBias | None:
    """The plugin of a cue condition, or None for a condition that is not one."""
    return REGISTRY.get(condition)
