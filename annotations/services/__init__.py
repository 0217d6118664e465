"""Workflows that span models (Styleguide services): keyword-only, typed, verb-first."""

from __future__ import annotations

from annotations.services.crowd import (
    claim_batch,
    claim_order,
    enter_study,
    entry_code_allowed,
    first_open_task,
    give_consent,
    grade_qualification,
    next_step,
    parse_entry,
    qualification_layout,
    resume_open_assignment,
    session_assignment,
    shown_order,
    sign_entry_code,
    submit_task,
)
from annotations.services.design import (
    cobbler_instruction_ids,
    cobbler_letter_pairs,
    confined_letter_map,
    generate_batches,
    generate_cobbler_batches,
    generate_design,
    load_cobbler_letter_map,
    parse_cobbler_letter_map,
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
    "claim_order",
    "cobbler_instruction_ids",
    "cobbler_letter_pairs",
    "confined_letter_map",
    "create_study",
    "enter_study",
    "entry_code_allowed",
    "first_open_task",
    "generate_batches",
    "generate_cobbler_batches",
    "generate_design",
    "give_consent",
    "grade_qualification",
    "load_cobbler_letter_map",
    "next_step",
    "parse_cobbler_letter_map",
    "parse_entry",
    "qualification_layout",
    "review_assignment",
    "resume_open_assignment",
    "session_assignment",
    "shown_order",
    "sign_entry_code",
    "submission_rows",
    "submissions_csv",
    "submit_task",
)
