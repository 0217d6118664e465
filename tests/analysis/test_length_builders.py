"""Builders for length-control tests: an MT-Bench-shaped study written straight into the DB,
in the representation the importer uses (issue 6 "Data model facts"). No tests here."""

from __future__ import annotations

import itertools

from annotations.models import (
    Assignment,
    Batch,
    Candidate,
    Instruction,
    Pair,
    Participant,
    Response,
    Study,
    Submission,
    Task,
)
from judging.models import JudgeJob, Judgment, RegisteredModel

_ids = itertools.count()


def mtbench_study(
    *,
    slug: str,
    answers: dict[tuple[int, str], str],
    votes: list[tuple[int, str, str, str, str]],
    verdicts: list[tuple[int, str, str, str]],
    second_turn: dict[tuple[int, str], str] | None = None,
) -> Study:
    """answers[(qid, model)] = judged-turn answer (turn 1); second_turn adds the turn-2 answer
    to the stored conversation. votes: (qid, model_a, model_b, winner, human judge);
    verdicts: (qid, model_a, model_b, winner) of the imported judge "gpt-4"; winner is
    "model_a" / "model_b" / "tie" / "tie (inconsistent)" as in the dataset."""
    second_turn = second_turn or {}
    study = Study.objects.create(slug=slug, name=slug, source=Study.Source.MTBENCH)
    models = sorted({m for _, m in answers})
    cands = {m: Candidate.objects.create(study=study, key=m, position=i) for i, m in enumerate(models)}
    instructions, responses = {}, {}
    for index, qid in enumerate(sorted({q for q, _ in answers})):
        instructions[qid] = Instruction.objects.create(
            study=study, index=index, external_id=str(qid), turn=1, text=f"q{qid}"
        )
    for (qid, model), text in answers.items():
        conversation = [
            {"role": "user", "content": "question"},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "follow-up"},
            {"role": "assistant", "content": second_turn.get((qid, model), "")},
        ]
        responses[qid, model] = Response.objects.create(
            instruction=instructions[qid], candidate=cands[model], text=text, conversation=conversation
        )

    def pair_of(qid: int, m1: str, m2: str) -> Pair:
        a, b = sorted([m1, m2], key=lambda m: cands[m].position)
        return Pair.objects.get_or_create(
            instruction=instructions[qid], response_a=responses[qid, a], response_b=responses[qid, b]
        )[0]

    batch = Batch.objects.create(study=study, condition="plain", index=0)
    for position, (qid, ma, mb, winner, rater) in enumerate(votes):
        pair = pair_of(qid, ma, mb)
        presentation = "ab" if pair.response_a_id == responses[qid, ma].pk else "ba"
        task = Task.objects.create(
            batch=batch,
            position=position,
            kind="pairwise",
            condition="plain",
            instruction=instructions[qid],
            pair=pair,
            arrangement=presentation,
        )
        participant, _ = Participant.objects.get_or_create(
            study=study, platform="code", external_hash=rater, label=rater
        )
        # Approved, as import_mtbench stores human votes (only approved work counts by default).
        assignment, _ = Assignment.objects.get_or_create(
            batch=batch, participant=participant, defaults={"status": "submitted", "review": "approved"}
        )
        choice = {"model_a": "A", "model_b": "B", "tie": "T"}[winner]
        chosen = {"A": responses[qid, ma], "B": responses[qid, mb], "T": None}[choice]
        Submission.objects.create(
            assignment=assignment,
            task=task,
            choice=choice,
            chosen_response=chosen,
            idempotency_key=f"k{next(_ids)}",
            source="import",
        )
    judge, _ = RegisteredModel.objects.get_or_create(name="gpt-4", defaults={"kind": RegisteredModel.Kind.IMPORTED})
    job = JudgeJob.objects.create(study=study, judge=judge, conditions=["plain"], status="completed")
    for qid, ma, mb, winner in verdicts:
        decisive = winner in ("model_a", "model_b")
        chosen = responses[qid, ma] if winner == "model_a" else responses[qid, mb]
        Judgment.objects.create(
            job=job,
            pair=pair_of(qid, ma, mb),
            condition="plain",
            presentation=1,
            slot1_response=responses[qid, ma],
            raw_text=winner,
            valid=decisive,
            status="done",
            choice={"model_a": "first", "model_b": "second"}.get(winner, ""),
            chosen_response=chosen if decisive else None,
        )
    return study


# The worked example of test_length_section.py (every number computed there by hand).
# Judged-turn lengths: Q1 x=100 y=50 (d=.5), Q2 x=100 z=95 (d=.05), Q3 y=80 z=100 (d=.2),
# Q4 x=60 y=60 (d=0), Q5 x=100 z=98 (d=.02), Q6 y=50 z=40 (d=.2).
WORKED_ANSWERS = {
    (1, "x"): "a" * 100,
    (1, "y"): "b" * 50,
    (2, "x"): "a" * 100,
    (2, "z"): "c" * 95,
    (3, "y"): "b" * 80,
    (3, "z"): "c" * 100,
    (4, "x"): "a" * 60,
    (4, "y"): "b" * 60,
    (5, "x"): "a" * 100,
    (5, "z"): "c" * 98,
    (6, "y"): "b" * 50,
    (6, "z"): "c" * 40,
}
# Whole-conversation scope: Q1 gets turn-2 answers x=10, y=60, so both total 110 (d=0).
WORKED_SECOND_TURN = {(1, "x"): "a" * 10, (1, "y"): "b" * 60}
WORKED_VOTES = [
    (1, "x", "y", "model_a", "e1"),
    (1, "y", "x", "model_b", "e2"),
    (1, "x", "y", "tie", "e3"),
    (2, "x", "z", "model_b", "e1"),
    (2, "z", "x", "model_a", "e2"),
    (3, "y", "z", "model_a", "e1"),
    (3, "y", "z", "model_b", "e2"),
    (3, "z", "y", "model_b", "e3"),
    (4, "x", "y", "model_a", "e1"),
    (5, "z", "x", "model_b", "e1"),
    (6, "z", "y", "model_a", "e1"),
]
WORKED_VERDICTS = [
    (1, "x", "y", "model_a"),
    (2, "x", "z", "model_b"),
    (3, "z", "y", "model_a"),
    (4, "x", "y", "tie"),
    (5, "x", "z", "tie (inconsistent)"),
    (6, "y", "z", "model_b"),
]
