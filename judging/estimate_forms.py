"""The "Preview estimate" step of the job forms (judge jobs and generation jobs).

The form posts with its ``preview`` button (or, once an estimate is shown, by htmx whenever a
field changes); the view answers with the same form, the estimate (judging.estimates) and the
budget field set to the proposal. A budget the researcher typed is theirs and is kept: only a
blank budget, or the proposal shown last time (carried back in the hidden ``proposed_budget``
field), is replaced by the new proposal.
"""

from __future__ import annotations

from django.http import QueryDict

from judging.estimates import Estimate

PREVIEW = "preview"  # the name of the form's "Preview estimate" button
LAST_PROPOSAL = "proposed_budget"  # the hidden field with the budget proposed last time
BUDGET = "budget_usd"


def wants_preview(data: QueryDict) -> bool:
    return PREVIEW in data


def with_proposed_budget(data: QueryDict, estimate: Estimate) -> QueryDict:
    """The posted data with the budget pre-filled from ``estimate`` (see the module docstring)."""
    data = data.copy()
    typed = data.get(BUDGET, "").strip()
    if not typed or typed == data.get(LAST_PROPOSAL, "").strip():
        proposal = estimate.proposed_budget_usd
        data[BUDGET] = "" if proposal is None else str(proposal)
    return data
