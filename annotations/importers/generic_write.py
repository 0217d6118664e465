"""Apply a checked generic-study plan (annotations.importers.generic) to the database.

One transaction. The files are the study's imported content: a re-import with the same
files stores the same content (a second run adds nothing), and changed files replace
the previous import cleanly:

- instructions, models and responses are matched by their natural keys (instruction id,
  model name); rows no longer in the files are deleted with their pairs and any
  judgments of them, except responses generated on the platform (``Response.provenance``);
- pairs: every pair of models that answered an instruction (n models: n(n-1)/2 pairs),
  so judges can be run on all of them and judge rankings cover every model;
- human work: the batches an earlier import made (label ``import: ...``) are replaced.
  One batch per (annotator, condition) and one ranking batch per annotator, each with one
  submitted, approved assignment. Batches have overlap 1, so crowd workers are never
  offered them. Annotators are stored as a keyed hash (annotations.pseudonyms) and the
  pseudonym ``annotator-N`` (N: order of first appearance, votes then rankings).
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from django.db import IntegrityError, transaction
from django.db.models import F

from annotations.biases import CROWD_CUED
from annotations.importers.base import (
    BadInput,
    ImportReport,
    RowCounter,
    check_slug,
    content_counters,
    record_source_files,
    stable_key,
    upsert,
)
from annotations.importers.generic import read_study
from annotations.importers.generic_plan import RankingRow, StudyPlan, VoteRow
from annotations.importers.generic_settings import apply_extras
from annotations.importers.human_work import (
    AssignmentRow,
    BatchKey,
    BatchRow,
    HumanWork,
    OnConflict,
    SubmissionRow,
    TaskRow,
    WorkerRow,
    write_human_work,
)
from annotations.importers.study_extensions import extensions
from annotations.models import Candidate, Condition, Instruction, Pair, Participant, Response, Study, Task
from annotations.vocabulary import CrowdChoice

IMPORT_LABEL = "import: "  # batches this importer owns (and replaces on a re-import)
PSEUDONYM = "annotator-"
INDEX_OFFSET = 1_000_000  # moved instructions pass through here: (study, index) is unique
CHOICE = {"model_a": CrowdChoice.A, "model_b": CrowdChoice.B, "tie": CrowdChoice.TIE}


def check_target(study: Study | None, slug: str) -> None:
    """Only a study of source 'manual' (what this importer and the UI create) may be replaced."""
    if study is not None and study.source != Study.Source.MANUAL:
        raise BadInput(
            f"--study {slug}",
            f"study exists with source '{study.source}'; import_study only replaces studies of source 'manual'",
        )


def import_study(*, root: Path, slug: str, name: str = "", created_by=None) -> ImportReport:
    """Import the generic files in ``root`` into study ``slug``, all or nothing.

    A new study is owned by ``created_by``; an existing one must be of source manual (the
    caller checks who may replace it). Raises BadInput, one line naming file and line.
    """
    check_slug(slug)
    plan = read_study(root)
    plan.raise_first()
    check_target(Study.objects.filter(slug=slug).first(), slug)
    counter = RowCounter(content_counters(slug))
    try:
        with transaction.atomic():
            study = _get_study(slug, name, created_by)
            apply_plan(plan, study, created_by=created_by)
            record_source_files(study=study, root=root, paths=[root / file for file in plan.digests])
    except IntegrityError:
        # Only a concurrent import of the same slug gets here (the plan was checked).
        raise BadInput(f"--study {slug}", "another import wrote this study at the same time; run it again") from None
    report = counter.report()
    by_condition = ", ".join(f"{c} {n}" for c, n in plan.votes_by_condition().items())
    if by_condition:
        report.details.append(f"votes by condition: {by_condition}")
    report.extension_lines += [f"{name}: {n}" for name, n in plan.extension_counts.items()]
    report.details += report.extension_lines
    return report


def _get_study(slug: str, name: str, created_by) -> Study:
    study = Study.objects.select_for_update().filter(slug=slug).first()
    if study is None:
        return Study.objects.create(
            slug=slug, name=name or f"Imported study ({slug})", source=Study.Source.MANUAL, created_by=created_by
        )
    check_target(study, slug)
    if name and study.name != name:
        study.name = name
        study.save(update_fields=["name"])
    return study


def apply_plan(plan: StudyPlan, study: Study, *, created_by=None) -> None:
    """Write the plan into ``study`` (inside the caller's transaction); ``created_by`` is who
    imports (an extension may make rows owned by them)."""
    instruction_ids = _instructions(plan, study)
    candidate_ids = _candidates(plan, study, instruction_ids)
    response_ids = _responses(plan, study, instruction_ids, candidate_ids)
    pair_ids = _pairs(plan, study, instruction_ids, response_ids)
    apply_extras(plan, study, response_ids)
    _human_work(plan, study, instruction_ids, response_ids, pair_ids)
    for extension in extensions():
        extension.apply(plan, study, response_ids=response_ids, created_by=created_by)


def _instructions(plan: StudyPlan, study: Study) -> dict[str, int]:
    """Instruction id -> pk; index = line order in instructions.jsonl."""
    stored: dict[str, tuple[int, int, str, str, str]] = {}
    gone, ids = [], {row.id for row in plan.instructions}
    for pk, ext, index, text, reference, kind in study.instructions.values_list(
        "pk", "external_id", "index", "text", "reference", "kind"
    ):
        if ext in stored or ext not in ids:
            gone.append(pk)
        else:
            stored[ext] = (pk, index, text, reference, kind)
    Instruction.objects.filter(pk__in=gone).delete()  # cascades to responses, pairs, judgments
    wanted = {row.id: (n, row) for n, row in enumerate(plan.instructions)}
    moved = [stored[key][0] for key, (n, _row) in wanted.items() if key in stored and stored[key][1] != n]
    Instruction.objects.filter(pk__in=moved).update(index=F("index") + INDEX_OFFSET)
    changed, new = [], []
    for key, (n, row) in wanted.items():
        values = (n, row.text, row.reference, row.category)
        if key not in stored:
            new.append(
                Instruction(
                    study=study, index=n, external_id=key, text=row.text, reference=row.reference, kind=row.category
                )
            )
        elif stored[key][1:] != values or stored[key][0] in moved:
            changed.append(
                Instruction(pk=stored[key][0], index=n, text=row.text, reference=row.reference, kind=row.category)
            )
    Instruction.objects.bulk_update(changed, ["index", "text", "reference", "kind"])
    Instruction.objects.bulk_create(new)
    return dict(study.instructions.values_list("external_id", "pk"))


def _candidates(plan: StudyPlan, study: Study, instruction_ids: dict[str, int]) -> dict[str, int]:
    models = plan.models()
    wanted = {(instruction_ids[r.instruction_id], r.model) for r in plan.responses}
    # Imported responses no longer in the files go; generated ones stay (they are not ours).
    stale = [
        pk
        for pk, ins, key in Response.objects.filter(instruction__study=study, provenance={}).values_list(
            "pk", "instruction_id", "candidate__key"
        )
        if (ins, key) not in wanted
    ]
    Response.objects.filter(pk__in=stale).delete()
    study.candidates.exclude(key__in=models).filter(responses__isnull=True).delete()
    others = list(study.candidates.exclude(key__in=models).order_by("position", "key").values_list("key", flat=True))
    positions = {key: n for n, key in enumerate([*models, *others])}
    upsert(
        Candidate,
        (Candidate(study=study, key=key, name=key, position=pos) for key, pos in positions.items()),
        unique_fields=("study", "key"),
        update_fields=("position",),
    )
    return dict(study.candidates.values_list("key", "pk"))


def _responses(
    plan: StudyPlan, study: Study, instruction_ids: dict[str, int], candidate_ids: dict[str, int]
) -> dict[tuple[str, str], int]:
    """(instruction id, model) -> response pk."""
    upsert(
        Response,
        (
            Response(
                instruction_id=instruction_ids[r.instruction_id],
                candidate_id=candidate_ids[r.model],
                text=r.text,
                conversation=None,
                provenance={},
            )
            for r in plan.responses
        ),
        unique_fields=("instruction", "candidate"),
        update_fields=("text", "conversation", "provenance"),
    )
    ext = {pk: key for key, pk in instruction_ids.items()}
    return {
        (ext[ins], key): pk
        for pk, ins, key in Response.objects.filter(instruction__study=study).values_list(
            "pk", "instruction_id", "candidate__key"
        )
    }


def _pairs(
    plan: StudyPlan, study: Study, instruction_ids: dict[str, int], response_ids: dict[tuple[str, str], int]
) -> dict[tuple[int, int], int]:
    """Every pair of an instruction's imported responses, canonical order; {(resp_a, resp_b): pair pk}."""
    wanted = {
        (response_ids[(ins, a)], response_ids[(ins, b)]): instruction_ids[ins]
        for ins, models in plan.models_of().items()
        for a, b in combinations(models, 2)
    }
    ours = {response_ids[(r.instruction_id, r.model)] for r in plan.responses}
    stale = [
        pk
        for pk, a, b in Pair.objects.filter(instruction__study=study).values_list(
            "pk", "response_a_id", "response_b_id"
        )
        if a in ours and b in ours and (a, b) not in wanted
    ]
    Pair.objects.filter(pk__in=stale).delete()  # e.g. the model order changed: the pair is re-made canonically
    upsert(
        Pair,
        (Pair(instruction_id=ins, response_a_id=a, response_b_id=b) for (a, b), ins in wanted.items()),
        unique_fields=("instruction", "response_a", "response_b"),
    )
    return {
        (a, b): pk
        for pk, a, b in Pair.objects.filter(instruction__study=study).values_list(
            "pk", "response_a_id", "response_b_id"
        )
    }


def _human_work(
    plan: StudyPlan,
    study: Study,
    instruction_ids: dict[str, int],
    response_ids: dict[tuple[str, str], int],
    pair_ids: dict[tuple[int, int], int],
) -> None:
    study.batches.filter(label__startswith=IMPORT_LABEL).delete()  # cascades to tasks, assignments, answers
    study.participants.filter(label__startswith=PSEUDONYM, assignments__isnull=True).delete()
    annotators = plan.annotators()
    if not annotators:
        return
    labels = {a: f"{PSEUDONYM}{n}" for n, a in enumerate(annotators, 1)}
    work = HumanWork(platform=Participant.Platform.CODE)
    work.workers = [WorkerRow(a, labels[a], qualified=True) for a in annotators]

    # Batches in order of first appearance (votes, then rankings): their pk order is the export's order.
    groups: dict[tuple[str, str], list[VoteRow | RankingRow]] = {}
    for vote in plan.votes:
        groups.setdefault((vote.annotator, vote.condition), []).append(vote)
    for ranking in plan.rankings:
        groups.setdefault((ranking.annotator, Condition.RANKING.value), []).append(ranking)
    next_index: dict[str, int] = {}
    for condition, index in study.batches.values_list("condition", "index"):
        next_index[condition] = max(next_index.get(condition, 0), index + 1)
    models_of = plan.models_of()
    for (annotator, condition), rows in groups.items():
        index = next_index.get(condition, 0)
        next_index[condition] = index + 1
        label = f"{IMPORT_LABEL}{labels[annotator]} {condition}"
        work.batches.append(BatchRow(condition, index, label, overlap=1))
        work.assignments.append(AssignmentRow((condition, index), annotator))
        for position, row in enumerate(rows):
            batch, key = (condition, index), stable_key("generic", study.slug, label, position)
            if isinstance(row, RankingRow):
                canonical = [response_ids[(row.instruction_id, m)] for m in models_of[row.instruction_id]]
                work.tasks.append(
                    TaskRow(
                        batch,
                        position,
                        Task.Kind.RANKING,
                        instruction_ids[row.instruction_id],
                        response_ids=canonical,
                        show_threshold_bar=row.acceptable_count is not None,
                    )
                )
                work.submissions.append(
                    SubmissionRow(
                        batch,
                        annotator,
                        position,
                        key,
                        display_order=canonical,
                        ranking=[response_ids[(row.instruction_id, m)] for m in row.ranking],
                        bar_position=row.acceptable_count,
                    )
                )
            else:
                task, answer = _vote_rows(row, batch, position, key, instruction_ids, response_ids, pair_ids)
                work.tasks.append(task)
                work.submissions.append(answer)
    # The batches were deleted above, so every row is new; a clash is a concurrent import (IntegrityError).
    write_human_work(study=study, work=work, on_conflict=OnConflict.FAIL, relabel=True)


def _vote_rows(
    vote: VoteRow,
    batch: BatchKey,
    position: int,
    key: str,
    instruction_ids: dict[str, int],
    response_ids: dict[tuple[str, str], int],
    pair_ids: dict[tuple[int, int], int],
) -> tuple[TaskRow, SubmissionRow]:
    """A vote's pairwise task (slot A: the model shown first) and its answer."""
    slot_a, slot_b = (response_ids[(vote.instruction_id, m)] for m in (vote.first_model, vote.second_model))
    pair = pair_ids.get((slot_a, slot_b)) or pair_ids[(slot_b, slot_a)]
    cue = {}
    if vote.condition in CROWD_CUED:
        cue = {"cue_slot": CrowdChoice.A if getattr(vote, vote.cued) == vote.first_model else CrowdChoice.B}
    task = TaskRow(
        batch,
        position,
        Task.Kind.PAIRWISE,
        instruction_ids[vote.instruction_id],
        pair_id=pair,
        arrangement=Task.Arrangement.AB if (slot_a, slot_b) in pair_ids else Task.Arrangement.BA,
        cue=cue,
    )
    choice = (
        CrowdChoice.TIE
        if vote.winner == "tie"
        else (CrowdChoice.A if getattr(vote, vote.winner) == vote.first_model else CrowdChoice.B)
    )
    answer = SubmissionRow(
        batch,
        vote.annotator,
        position,
        key,
        display_order=[slot_a, slot_b],
        choice=choice,
        chosen_response_id={CrowdChoice.A: slot_a, CrowdChoice.B: slot_b}.get(choice),
    )
    return task, answer
