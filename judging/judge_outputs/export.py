"""``judges.jsonl`` and ``judgments.jsonl`` for a study: the judge calls its reports count.

What counts is the re-run rule's default (``JudgeJob.objects.latest_completed``): for each judge
and condition, its latest completed job. Lines are ordered by judge name, instruction, pair,
condition and presentation, with ``model_a`` the answer shown first, so export -> import ->
export gives the same bytes.

A call is written with its raw ``output`` when the import would read that output back to the
verdict stored; otherwise (a verdict that came without text, or text read by another reader, e.g.
the paper parser or a prompt whose labels the file cannot carry) with the stored ``winner``, so a
re-import always gives the same verdicts, hence the same report rows.
"""

from __future__ import annotations

from pathlib import Path

from annotations.models import Study
from annotations.vocabulary import JudgeSlot
from judging.judge_outputs.rows import read_output
from judging.models import JudgeJob, Judgment, RegisteredModel
from judging.vocabulary import TIE, Parser, VerdictFormat

FILES = ("judges.jsonl", "judgments.jsonl")


def export(study: Study, out: Path, *, instruction_ids: dict[int, str], write) -> dict[str, int]:
    counted = {(job, condition) for (_judge, condition), job in JudgeJob.objects.latest_completed(study).items()}
    jobs = JudgeJob.objects.select_related("judge").in_bulk({job for job, _condition in counted})
    # One line per judge: its latest counted job's format reads every output (_output_or_winner).
    latest = {job.judge_id: job for job in sorted(jobs.values(), key=lambda j: j.pk)}
    judges = [_judge_line(job) for job in sorted(latest.values(), key=lambda j: j.judge.name)]
    judgments = _judgment_lines(counted, jobs, latest, instruction_ids)
    counts = {}
    for name, rows in zip(FILES, (judges, judgments), strict=True):
        path = out / name
        if rows:
            counts[name] = write(path, rows)
        elif path.exists():
            path.unlink()  # a stale file from an earlier export would be read back in
    return counts


def _judge_line(job: JudgeJob) -> dict:
    line = {"name": job.judge.name}
    model = job.judge.model or (job.judge.baseline if job.judge.kind == RegisteredModel.Kind.BASELINE else "")
    if model:
        line["model"] = model
    if job.verdict_format != VerdictFormat.COBBLER:
        line["verdict_format"] = job.verdict_format
    if job.verdict_format == VerdictFormat.REGEX:
        line["verdict_spec"] = job.verdict_spec
    if job.self_candidate_key:
        line["self_model"] = job.self_candidate_key
    return line


def _judgment_lines(
    counted: set[tuple[int, str]], jobs: dict[int, JudgeJob], latest: dict[int, JudgeJob], ids: dict[int, str]
) -> list[dict]:
    rows = (
        Judgment.objects.filter(job__in=list(jobs), status=Judgment.Status.DONE)
        .select_related("pair__instruction", "pair__response_a__candidate", "pair__response_b__candidate")
        .order_by(
            "job__judge__name",
            "pair__instruction__index",
            "pair__response_a__candidate__position",
            "pair__response_b__candidate__position",
            "condition",
            "presentation",
            "pk",
        )
    )
    lines = []
    for row in rows.iterator(chunk_size=2000):
        if (row.job_id, row.condition) not in counted:
            continue
        job, pair = jobs[row.job_id], row.pair
        first, second = (
            (pair.response_a, pair.response_b)
            if row.slot1_response_id == pair.response_a_id
            else (pair.response_b, pair.response_a)
        )
        line: dict[str, object] = {
            "judge": job.judge.name,
            "instruction_id": ids[pair.instruction_id],
            "model_a": first.candidate.key,
            "model_b": second.candidate.key,
            "presented_first": "model_a",
            "condition": row.condition,
        }
        slot = row.cue.get("cue_slot") if isinstance(row.cue, dict) else None
        if slot in (JudgeSlot.FIRST, JudgeSlot.SECOND):
            line["cued"] = "model_a" if slot == JudgeSlot.FIRST else "model_b"
        reader = latest[job.judge_id]
        echo = [pair.instruction.text, pair.instruction.reference, first.text, second.text, *_prompt_lines(row)]
        line |= _output_or_winner(row, job, reader, echo=echo)
        if row.imported_prompt:
            line["prompt"] = row.imported_prompt
        tokens = {k: v for k, v in (("input", row.tokens_in), ("output", row.tokens_out)) if v}
        if tokens:
            line["tokens"] = tokens
        if row.cost_usd:
            line["cost"] = float(row.cost_usd)
        if row.latency_ms is not None:
            line["latency_ms"] = row.latency_ms
        lines.append(line)
    return lines


def _prompt_lines(row: Judgment) -> list[str]:
    return [line.strip() for line in row.imported_prompt.splitlines() if line.strip()]


def _stored_slot(row: Judgment, job: JudgeJob) -> str:
    """first / second / tie / "" from the row; older imported rows (MT-Bench) have no verdict field."""
    if row.verdict:
        return row.verdict
    if row.valid:
        return row.choice
    return TIE if job.parser == Parser.IMPORTED and row.raw_text.startswith(TIE) else ""


def _output_or_winner(row: Judgment, job: JudgeJob, reader: JudgeJob, *, echo: list[str]) -> dict:
    slot = _stored_slot(row, job)
    if row.raw_text or not slot:
        again = read_output(reader.verdict_format, reader.verdict_spec, row.raw_text, echo=echo)
        if (again.slot or "") == slot and (again.strength or "") == row.strength:
            return {"output": row.raw_text}
    if not slot:
        return {"output": ""}  # no verdict, and the text would read as one: an empty output reads as none
    if slot == TIE:
        return {"winner": TIE}
    return {"winner": "model_a" if slot == JudgeSlot.FIRST else "model_b"} | (
        {"strength": row.strength} if row.strength else {}
    )
