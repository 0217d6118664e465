"""Workflows that span models (Styleguide services): keyword-only, typed, verb-first."""
from __future__ import annotations

from annotations.services.crowd import (
    claim_batch,
    enter_study,
    first_open_task,
    give_consent,
    grade_qualification,
    next_step,
    parse_entry,
    session_assignment,
    shown_order,
    submit_task,
)
from annotations.services.design import (
    cobbler_instruction_ids,
    cobbler_letter_pairs,
    generate_batches,
    generate_cobbler_batches,
    generate_design,
    load_cobbler_letter_map,
)
from annotations.services.studies import (
    batch_progress,
    create_study,
    review_assignment,
    submission_rows,
    submissions_csv,
)

__all__ = (
    "batch_progress",
    "claim_batch",
    "cobbler_instruction_ids",
    "cobbler_letter_pairs",
    "create_study",
    "enter_study",
    "first_open_task",
    "generate_batches",
    "generate_cobbler_batches",
    "generate_design",
    "give_consent",
    "grade_qualification",
    "load_cobbler_letter_map",
    "next_step",
    "parse_entry",
    "review_assignment",
    "session_assignment",
    "shown_order",
    "submission_rows",
    "submissions_csv",
    "submit_task",
)
