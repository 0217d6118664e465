"""Building the batches a crowd study is answered in.

Two designs:
- ``generate_cobbler_batches``: the original human bias studies, reproduced exactly from the
  authors' sampling (25 instructions x 15 letter pairs x 2 presentations = 750 tasks).
- ``generate_batches``: a fresh, seeded, counterbalanced design for any study.
"""

from __future__ import annotations

import itertools
import json
import random
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.biases import CROWD_CUED, CueContext, Rewritten, cue_bias
from annotations.models import Batch, Condition, Instruction, Pair, Response, Study, Task
from annotations.quality import checks
from annotations.services.rewrites import missing_rewrites_message, rewrites_of
from annotations.services.rounds import Round, plan_round
from annotations.vocabulary import CrowdChoice
from cobbler_site.foundation import text_safety

# The conditions whose twins swap the answers' positions: order, plain, and cot (the order design
# with a written step-by-step reasoning before the choice, annotations.biases.cot).
SWAPPED = (Condition.ORDER, Condition.PLAIN, Condition.COT)
# Swapped positions and every cue bias the registry gives a crowd variant
# (annotations.biases: CoBBLEr's bandwagon and attentional, CALM's four and sentiment).
PAIRWISE_CONDITIONS = (Condition.ORDER, Condition.PLAIN, *CROWD_CUED, Condition.COT)
COBBLER_CONDITIONS = (Condition.ORDER, Condition.BANDWAGON, Condition.ATTENTIONAL)
COBBLER_SEED = 42
COBBLER_LETTERS = string.ascii_uppercase[:15]  # System A .. System O
LETTER_MAP_PATH = Path("human/batches/model_annotations/human_annotation_gt_formatted.json")


MAX_LETTER_MAP_BYTES = 1024 * 1024  # the CoBBLEr file is 23 KB


def parse_cobbler_letter_map(raw: bytes, name: str) -> list[dict[str, str]]:
    """The per-instruction {model_key: "System X"} map (human_annotation_gt_formatted.json) from a file's bytes.

    Anything else (too big, not UTF-8, not JSON, another shape) is a ValidationError
    naming ``name``, so the page, the API and the command answer it as a form error.
    """
    if len(raw) > MAX_LETTER_MAP_BYTES:
        raise ValidationError(
            f"{name} is larger than {MAX_LETTER_MAP_BYTES // 1024} KB: it is not {LETTER_MAP_PATH.name}."
        )
    try:
        # utf-8-sig: CoBBLEr's own file may carry a BOM; the rest is strict (cobbler_site.foundation.text_safety).
        data = text_safety.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ValidationError(f"{name} is not UTF-8 text: it is not {LETTER_MAP_PATH.name}.") from None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).") from None
    except text_safety.JSONProblem as exc:
        raise ValidationError(f"{name} is refused: {exc}.") from None
    except RecursionError:
        raise ValidationError(f"{name} is not valid JSON (nested too deeply).") from None
    if not (
        isinstance(data, list)
        and data
        and all(
            isinstance(item, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in item.items())
            for item in data
        )
    ):
        raise ValidationError(f"{name} is not a list of {{model: letter}} maps like {LETTER_MAP_PATH.name}.")
    return data


def _read_letter_map(path: Path, name: str) -> list[dict[str, str]]:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_LETTER_MAP_BYTES + 1)
    except OSError:
        raise ValidationError(f"{name} cannot be read.") from None
    return parse_cobbler_letter_map(raw, name)


def load_cobbler_letter_map(data_dir: Path) -> list[dict[str, str]]:
    """The letter map of a CoBBLEr data directory anywhere on the server: for the command line.

    The page and the API never take a server path (see confined_letter_map)."""
    path = Path(data_dir) / LETTER_MAP_PATH
    if not path.is_file():
        raise ValidationError(f"{path} not found: pass the CoBBLEr data directory.")
    return _read_letter_map(path, str(path))


def confined_letter_map(design_dir: str) -> list[dict[str, str]]:
    """The letter map of a design directory named relative to settings.DESIGNS_DIR (DATA_DIR/designs).

    For the API: an absolute path, '..', or a symlink leading out of DESIGNS_DIR gets one
    and the same refusal whether or not the path exists, and no message shows a server path.
    """
    refusal = ValidationError(
        "cobbler_design_dir must name a directory under DATA_DIR/designs, relative to it "
        "(no absolute path, no '..'); copy the CoBBLEr data there, or use manage.py generate_batches."
    )
    relative = Path(design_dir.strip())
    if not design_dir.strip() or relative.is_absolute() or ".." in relative.parts or "\x00" in design_dir:
        raise refusal
    root = Path(settings.DESIGNS_DIR).resolve()
    try:
        path = (root / relative / LETTER_MAP_PATH).resolve()
        found = path.is_relative_to(root) and path.is_file()
    except OSError:  # a name too long for the file system (ENAMETOOLONG) is no directory either
        raise refusal from None
    if not path.is_relative_to(root):
        raise refusal
    shown = f"designs/{relative.as_posix()}/{LETTER_MAP_PATH.as_posix()}"
    if not found:
        raise ValidationError(f"{shown} not found under DATA_DIR.")
    return _read_letter_map(path, shown)


def cobbler_instruction_ids() -> list[int]:
    """The authors' instructions: Python's random.seed(42); random.sample(range(50), 25)."""
    return random.Random(COBBLER_SEED).sample(range(50), 25)


def cobbler_letter_pairs() -> list[tuple[str, str]]:
    """The authors' letter pairs: the seed is reset to 42 per instruction, so every instruction gets these 15."""
    return random.Random(COBBLER_SEED).sample(list(itertools.combinations(COBBLER_LETTERS, 2)), 15)


def crowd_cue(condition: str, slot: str, rng: random.Random, percent: int, *, rewrite: Rewritten | None = None) -> dict:
    """The stored cue of a crowd task cued on ``slot`` ("A"/"B"): the plugin's seeded details.

    Stored with the task (bandwagon's percent, the distractor, authority's citation, verbosity's
    padding, identity's persona, sentiment's rewrite of the answer in ``slot``), so the page,
    review and the preview show the same text again (annotations.shown). The draws are the
    plugin's alone: bandwagon and sentiment draw nothing and attentional draws what the
    hard-coded distractor list drew, so earlier designs are unchanged.
    """
    bias = cue_bias(condition)
    assert bias is not None and not bias.judge_only, condition  # callers check PAIRWISE_CONDITIONS
    other = CrowdChoice.B if slot == CrowdChoice.A else CrowdChoice.A
    ctx = CueContext(label=f"System {slot}", other=f"System {other}", percent=percent, rewrite=rewrite)
    return bias.cue(rng, slot, ctx)


def _design_rewrites(condition: str, responses: Iterable[Response]) -> dict[int, Rewritten] | None:
    """Per response id, its stored rewrite for a condition that shows a model's rewrite
    (sentiment), or None for a condition that needs none."""
    bias = cue_bias(condition)
    if bias is None or not bias.rewrite_kind:
        return None
    return rewrites_of((r.pk for r in responses), bias.rewrite_kind)


def _rewritten(pair: tuple[Response, Response], rewrites: Mapping[int, Rewritten] | None) -> bool:
    """Whether the condition can show ``pair``: always, or with both answers rewritten (as
    annotations.services.rewrites.showable says of a stored Pair)."""
    return rewrites is None or all(r.pk in rewrites for r in pair)


class _PairBook:
    """Finds or creates the canonical Pair of two responses (response_a = earlier candidate)."""

    def __init__(self, study: Study):
        self.known = {(p.response_a_id, p.response_b_id): p for p in Pair.objects.filter(instruction__study=study)}

    def get(self, first: Response, second: Response) -> tuple[Pair, str]:
        """The pair and the arrangement that puts ``first`` in slot A."""
        a, b = sorted((first, second), key=lambda r: (r.candidate.position, r.candidate.key))
        pair = self.known.get((a.pk, b.pk))
        if pair is None:
            pair = Pair.objects.create(instruction_id=a.instruction_id, response_a=a, response_b=b)
            self.known[(a.pk, b.pk)] = pair
        return pair, (Task.Arrangement.AB if first.pk == a.pk else Task.Arrangement.BA)


def _twin_tasks(
    *,
    condition: str,
    pair_index: int,
    first: Response,
    second: Response,
    book: _PairBook,
    percent: int,
    rng: random.Random,
    rewrites: Mapping[int, Rewritten] | None = None,
) -> list[Task]:
    """The two tasks of one pair: swapped positions (order, plain, cot) or the cue on each side.

    Both cued tasks show ``first`` in slot A, so a rewritten condition's cue on A carries
    ``first``'s rewrite and the cue on B ``second``'s (``rewrites``: response id -> rewrite).
    """
    pair, forward = book.get(first, second)
    _, backward = book.get(second, first)
    common = {
        "kind": Task.Kind.PAIRWISE,
        "condition": condition,
        "instruction_id": first.instruction_id,
        "pair": pair,
        "pair_index": pair_index,
    }
    if condition in SWAPPED:
        return [
            Task(arrangement=forward, cue={"order": "first"}, **common),
            Task(arrangement=backward, cue={"order": "last"}, **common),
        ]
    shown = {CrowdChoice.A: first, CrowdChoice.B: second}
    cues = [
        crowd_cue(condition, slot, rng, percent, rewrite=rewrites[shown[slot].pk] if rewrites is not None else None)
        for slot in shown
    ]
    return [Task(arrangement=forward, cue=cue, **common) for cue in cues]


def _save_batch(*, study: Study, condition: str, index: int, seed: int, label: str, tasks: list[Task]) -> Batch:
    batch = Batch.objects.create(study=study, condition=condition, index=index, seed=seed, label=label)
    for position, task in enumerate(tasks):
        task.batch = batch
        task.position = position
    Task.objects.bulk_create(tasks)
    return batch


def _responses_by_key(instruction: Instruction) -> dict[str, Response]:
    return {r.candidate.key: r for r in instruction.responses.select_related("candidate")}


@transaction.atomic
def generate_cobbler_batches(
    *, study: Study, condition: str, letter_map: Sequence[dict[str, str]], new_round: bool = False
) -> list[Batch]:
    """Reproduce the CoBBLEr human bias batches for ``condition`` exactly (the authors' sampling).

    ``letter_map`` is the data's human_annotation_gt_formatted.json (load_cobbler_letter_map).
    The study must hold the 50 CoBBLEr instructions (index 0-49) and their responses.
    Things the original left unseeded (the within-batch shuffle, the distractor draw) are
    seeded here and the seed stored on each batch. Not idempotent: a condition that already
    has a generated design raises ValidationError unless ``new_round`` (annotations.services.rounds;
    imported batches never block it), and so does missing content (nothing is stored).
    """
    plan = plan_round(study=study, condition=condition, new_round=new_round)
    if condition not in COBBLER_CONDITIONS:
        raise ValidationError(f"The CoBBLEr design exists for {', '.join(COBBLER_CONDITIONS)} only.")
    instructions = {i.index: i for i in study.instructions.all()}
    letter_pairs = cobbler_letter_pairs()
    batches = []
    for k, index in enumerate(cobbler_instruction_ids(), start=1):
        instruction = instructions.get(index)
        if instruction is None or index >= len(letter_map):
            raise ValidationError(f"Instruction {index} is missing: import the CoBBLEr data first.")
        model_of = {letter.removeprefix("System ").strip(): key for key, letter in letter_map[index].items()}
        responses = _responses_by_key(instruction)
        shuffle_seed = COBBLER_SEED * 1000 + k
        rng = random.Random(shuffle_seed)
        book = _PairBook(study)
        tasks: list[Task] = []
        for pair_index, (x, y) in enumerate(letter_pairs):
            try:
                first, second = responses[model_of[x]], responses[model_of[y]]
            except KeyError:
                raise ValidationError(f"Instruction {index}: no response for System {x} or {y}.") from None
            tasks += _twin_tasks(
                condition=condition,
                pair_index=pair_index,
                first=first,
                second=second,
                book=book,
                percent=study.bandwagon_percent,
                rng=rng,
            )
        rng.shuffle(tasks)
        batches.append(
            _save_batch(
                study=study,
                condition=condition,
                index=plan.first_index + k - 1,
                seed=shuffle_seed,
                label=plan.label(f"CoBBLEr k={k}, instruction {index}"),
                tasks=tasks,
            )
        )
    return batches


def _spread_twins(tasks: list[Task], rng: random.Random) -> None:
    """Shuffle in place, retrying a few times so that no twin follows its own twin."""
    for _ in range(50):
        rng.shuffle(tasks)
        if all(a.pair_index != b.pair_index for a, b in itertools.pairwise(tasks)):
            return


@transaction.atomic
def generate_batches(
    *,
    study: Study,
    condition: str,
    seed: int,
    pairs_per_batch: int = 15,
    instructions: Iterable[Instruction] | None = None,
    rankings_per_batch: int = 5,
    new_round: bool = False,
) -> list[Batch]:
    """A fresh, seeded, counterbalanced design: one batch per instruction for pair conditions.

    Pairwise: ``pairs_per_batch`` pairs drawn per instruction; each appears twice, with the
    positions swapped (order, plain, cot) or the cue on each side (every crowd cue bias: bandwagon,
    attentional, authority, verbosity, refinement, identity, sentiment; ``crowd_cue``); which
    candidate sits in slot A first is balanced half/half over the batch; the 2n tasks are
    shuffled so twins are not adjacent. cot draws from the order run's stream (``_draw_stream``):
    the same seed gives it the order design's pairs and arrangements. Sentiment shows a model's stored rewrite
    (``ResponseRewrite``): its pairs are drawn from those whose two answers both have one, an
    instruction without such a pair gets no batch, and a study without any is refused
    (``missing_rewrites_message``). With ``study.attention_check_rate`` / ``gold_rate``
    above 0 each pairwise batch also gets attention checks and gold items at seeded
    positions (``_with_checks``); at 0 (the default) nothing changes. Ranking:
    ``rankings_per_batch`` instructions per batch, all responses, with the threshold bar.
    Same seed, same design. Raises ValidationError (nothing stored) if the condition is
    unknown, a rate is outside 0-1, a rewritten condition has no rewritten pair, or the
    condition already has a generated design and this is not a ``new_round``
    (annotations.services.rounds: a round continues the batch indexes and labels its batches
    ``round N: ``; imported batches never block a design).
    """
    plan = plan_round(study=study, condition=condition, new_round=new_round)
    chosen = list(instructions) if instructions is not None else list(study.instructions.all())
    if not chosen:
        raise ValidationError(f"Study {study.slug} has no instructions.")
    if condition == Condition.RANKING:
        return _ranking_batches(study=study, seed=seed, instructions=chosen, per_batch=rankings_per_batch, plan=plan)
    if condition not in PAIRWISE_CONDITIONS:
        raise ValidationError(f"Crowd batches exist for ranking and {', '.join(PAIRWISE_CONDITIONS)} only.")
    if pairs_per_batch < 1:
        raise ValidationError("pairs_per_batch must be at least 1.")
    _check_rates(study)
    pairs_of = {instruction: _pairs_of(instruction) for instruction in sorted(chosen, key=lambda i: i.index)}
    rewrites = _design_rewrites(condition, (r for pairs in pairs_of.values() for pair in pairs for r in pair))
    showable = {instruction: [p for p in pairs if _rewritten(p, rewrites)] for instruction, pairs in pairs_of.items()}
    if rewrites is not None and not any(showable.values()):  # refused before anything is written
        raise ValidationError(missing_rewrites_message(condition, study.slug))
    book = _PairBook(study)
    gold_pairs = list(Pair.objects.filter(instruction__study=study, gold_response__isnull=False))
    batches: list[Batch] = []
    for instruction, all_pairs in pairs_of.items():
        if not showable[instruction]:
            continue  # no pair of this instruction has both answers rewritten
        rng = random.Random(f"{seed}:{_draw_stream(condition)}:{instruction.index}")
        # A seeded condition draws from every pair, as it did before rewritten conditions existed.
        drawn = rng.sample(showable[instruction], min(pairs_per_batch, len(showable[instruction])))
        flips = [i % 2 == 1 for i in range(len(drawn))]
        rng.shuffle(flips)  # half the pairs show the earlier candidate in slot A first
        tasks: list[Task] = []
        for pair_index, ((r1, r2), flip) in enumerate(zip(drawn, flips, strict=True)):
            first, second = (r2, r1) if flip else (r1, r2)
            tasks += _twin_tasks(
                condition=condition,
                pair_index=pair_index,
                first=first,
                second=second,
                book=book,
                percent=study.bandwagon_percent,
                rng=rng,
                rewrites=rewrites,
            )
        _spread_twins(tasks, rng)
        tasks = _with_checks(
            study=study,
            condition=condition,
            seed=seed,
            instruction=instruction,
            items=tasks,
            pairs=all_pairs,
            book=book,
            gold_pairs=gold_pairs,
        )
        batches.append(
            _save_batch(
                study=study,
                condition=condition,
                index=plan.first_index + len(batches),  # no gap where an instruction was skipped
                seed=seed,
                label=plan.label(f"instruction {instruction.index}"),
                tasks=tasks,
            )
        )
    return batches


def _draw_stream(condition: str) -> str:
    """The name of the seeded stream a condition draws its pairs and first arrangements from.

    cot draws the order run's: with the same seed its batches hold the order design's pairs, each
    first shown the same way, so the two runs compare pair by pair (analysis.metrics.cot).
    """
    return Condition.ORDER if condition == Condition.COT else condition


def _pairs_of(instruction: Instruction) -> list[tuple[Response, Response]]:
    """Every pair of the instruction's responses, in the study's candidate order."""
    responses = sorted(_responses_by_key(instruction).values(), key=lambda r: (r.candidate.position, r.candidate.key))
    pairs = list(itertools.combinations(responses, 2))
    if not pairs:
        raise ValidationError(f"Instruction {instruction.index} has fewer than two responses.")
    return pairs


def _check_cue(condition: str, percent: int) -> checks.CueMaker:
    """Cues for check tasks drawn as for the batch's items, so a banner never gives a check away.

    Sentiment's check cues carry no rewrite (``rewrite`` None, ``rewritten`` ""), so a check
    shows both answers in their original tone (the plugin falls back): the rewrite replaces the
    whole answer, so on a catch pair it would hide the broken text the check is about, and a
    check's pair (any pair of the instruction, or a gold pair) need not have rewrites.
    """

    def cue(rng: random.Random) -> dict:
        if condition in SWAPPED:
            return {"order": "first"}
        return crowd_cue(condition, rng.choice("AB"), rng, percent)

    return cue


def _check_rates(study: Study) -> None:
    for name in ("attention_check_rate", "gold_rate"):
        rate = getattr(study, name)
        if not 0 <= rate <= 1:
            raise ValidationError(f"{name} must be between 0 and 1 (got {rate}).")


def _with_checks(
    *,
    study: Study,
    condition: str,
    seed: int,
    instruction: Instruction,
    items: list[Task],
    pairs: list[tuple[Response, Response]],
    book: _PairBook,
    gold_pairs: list[Pair],
) -> list[Task]:
    """The batch's item tasks with its attention checks and gold items at seeded positions
    (docs/methods.md "Crowd quality"). Both rates 0: the items, untouched, and no random draw."""
    n_attention = checks.check_count(study.attention_check_rate, len(items))
    own_gold = [p for p in gold_pairs if p.instruction_id == instruction.pk] or gold_pairs
    n_gold = checks.check_count(study.gold_rate, len(items)) if own_gold else 0
    if not n_attention and not n_gold:
        return items
    # Its own stream, so the items' draws (pairs, flips, distractors, shuffle) stay as without checks.
    rng = random.Random(f"{seed}:{condition}:{instruction.index}:checks")
    extra = checks.build_check_tasks(
        condition=condition,
        pairs=pairs,
        pair_of=book.get,
        gold_pairs=own_gold,
        n_attention=n_attention,
        n_gold=n_gold,
        cue=_check_cue(condition, study.bandwagon_percent),
        rng=rng,
    )
    return checks.interleave(items, extra, rng)


def _ranking_batches(
    *, study: Study, seed: int, instructions: list[Instruction], per_batch: int, plan: Round
) -> list[Batch]:
    rng = random.Random(f"{seed}:ranking")
    ordered = sorted(instructions, key=lambda i: i.index)
    rng.shuffle(ordered)
    batches = []
    for index, start in enumerate(range(0, len(ordered), max(1, per_batch))):
        group = ordered[start : start + max(1, per_batch)]
        tasks = [
            Task(
                kind=Task.Kind.RANKING,
                condition=Condition.RANKING,
                instruction=instruction,
                response_ids=sorted(r.pk for r in instruction.responses.all()),
                show_threshold_bar=True,
            )
            for instruction in group
        ]
        batches.append(
            _save_batch(
                study=study,
                condition=Condition.RANKING,
                index=plan.first_index + index,
                seed=seed,
                label=plan.label(", ".join(f"#{i.index}" for i in group)),
                tasks=tasks,
            )
        )
    return batches


def generate_design(
    *,
    study: Study,
    condition: str,
    seed: int | None,
    pairs_per_batch: int = 15,
    cobbler_design_dir: str = "",
    letter_map: Sequence[dict[str, str]] | None = None,
    new_round: bool = False,
) -> list[Batch]:
    """The one entry point of the page and the API: the paper's exact design when a CoBBLEr
    letter map is given (uploaded: ``letter_map``; or ``cobbler_design_dir``, a directory under
    DATA_DIR/designs), otherwise a fresh design, which needs a seed. ``new_round`` adds it beside a
    design the condition already has (annotations.services.rounds). Raises ValidationError."""
    if letter_map is None and cobbler_design_dir:
        letter_map = confined_letter_map(cobbler_design_dir)
    if letter_map is not None:
        return generate_cobbler_batches(study=study, condition=condition, letter_map=letter_map, new_round=new_round)
    if seed is None:
        raise ValidationError("A fresh design needs a seed.")
    return generate_batches(
        study=study, condition=condition, seed=seed, pairs_per_batch=pairs_per_batch, new_round=new_round
    )
