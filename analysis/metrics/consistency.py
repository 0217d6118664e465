"""``position_consistency``: the share of order pairs judged the same way in both presentations.

A pair is *consistent* when the same response was chosen in both presentations (its slot
moved with it), or a tie was given both times. It is the complement of everything a position
effect can produce: the same slot twice (``order_first``, ``order_last``) and a choice in one
presentation with a tie in the other. With no ties, consistency = 1 - order_first - order_last.
Descriptive: no test, no claim (docs/methods.md "Bias rates").

- Judges (the order run's ``pair_frame``): a tie is the verdict formats' ``tie`` (stored with
  ``valid`` False, since it chose no slot, and ``verdict`` "tie"). n follows the profile's
  denominator like every bias row: ``valid`` = pairs where both prompts gave a verdict (a slot
  or a tie), ``all`` = every pair of the run, where an output with no verdict, or a missing
  call, makes the pair inconsistent. The slot rows (order_first, position_preference...) keep
  their own n, both prompts choosing a slot, so the identity above holds on pairs without ties.
- Humans (a rater's twin tasks in the order condition): a tie vote is ``T``; every counted
  answer is valid, so n = the rater's answered pairs.
"""

from __future__ import annotations

import pandas as pd

from annotations.vocabulary import Condition, CrowdChoice

BIAS = "position_consistency"


def judge_consistent(pairs: pd.DataFrame) -> pd.Series:
    """Per pair row of ``bias.pair_frame``: the same response chosen in both prompts, or a tie in both."""
    same_response = pairs["both_valid"] & (pairs["chosen_is_a1"] == pairs["chosen_is_a2"])
    return same_response | (pairs["tie1"] & pairs["tie2"])


def human_consistency_records(twins: pd.DataFrame) -> pd.DataFrame:
    """Per rater x batch x instruction of the order condition: ``hits`` (consistent pairs), ``mirror`` 0, ``n``.

    ``twins``: ``human_bias.twin_frame`` (the two answers of one rater on one pair side by side).
    The columns are ``human_bias_records``'s, so the rows join its records.
    """
    cols = ["rater", "batch", "instruction", "bias", "hits", "mirror", "n"]
    order = twins[twins["condition"] == Condition.ORDER]
    if order.empty:
        return pd.DataFrame(columns=cols)
    # chose_a is <NA> for a tie: <NA> == anything is not a consistent choice.
    same_response = (order["chose_a1"] == order["chose_a2"]).fillna(False).astype(bool)
    tie_twice = (order["choice1"] == CrowdChoice.TIE) & (order["choice2"] == CrowdChoice.TIE)
    keys = ["rater", "batch", "instruction"]
    records = order[keys].assign(hits=(same_response | tie_twice).astype(int), mirror=0, n=1)
    return records.groupby(keys, sort=True).sum().reset_index().assign(bias=BIAS)[cols]
