"""CoBBLEr study content: the study, 18 candidates, 50 instructions, 800 responses, 6,000 pairs.

Files: the eval set (50 instructions with references) and the response files (one list of
50 answers per model key). The candidate order is the response file's key order; it fixes
which response of a pair is canonical ``response_a`` and therefore which one sits in the
first slot of presentation 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from annotations.importers.base import BadInput, check_slug, read_json, rel, upsert
from annotations.models import Candidate, Instruction, Pair, Response, Study

STUDY_NAME = "CoBBLEr (Koo et al.)"
# The 15 original candidates in the order of full_n15_model_generations.json (it fixes response_a).
CANONICAL_KEYS = (
    "vicuna",
    "baize",
    "koala",
    "wizardlm",
    "chatgpt",
    "instructgpt",
    "gpt4",
    "cohere",
    "dolly",
    "openassist",
    "redpajama",
    "mpt",
    "alpaca",
    "falcon",
    "llama",
)
# llamav2 has responses (16 candidates); mistral and olmo appear only as ACL evaluators
# and candidates in model_annotations/new/, without any generations.
RESPONDING_KEYS = (*CANONICAL_KEYS, "llamav2")
ALL_KEYS = (*RESPONDING_KEYS, "mistral", "olmo")

EVALSET = Path("datasets/llm_preference_evalset.json")
RESPONSES = Path("n15_responses/full_n15_model_generations_llamav2.json")
RESPONSES_15 = Path("n15_responses/full_n15_model_generations.json")


@dataclass
class CobblerContent:
    """What the later import steps need: the study and id lookups by natural key."""

    root: Path
    study: Study
    candidate_ids: dict[str, int] = field(default_factory=dict)
    instruction_ids: dict[int, int] = field(default_factory=dict)  # eval-set index -> pk
    index_by_text: dict[str, int] = field(default_factory=dict)
    response_ids: dict[tuple[int, str], int] = field(default_factory=dict)
    response_texts: dict[tuple[int, str], str] = field(default_factory=dict)
    pair_ids: dict[tuple[int, str, str], int] = field(default_factory=dict)  # canonical keys

    def where(self, path: Path) -> str:
        return rel(path, self.root)

    def canonical_pair(self, index: int, key_1: str, key_2: str) -> tuple[int, bool]:
        """(pair pk, whether key_1 is the pair's response_a)."""
        position = {key: pos for pos, key in enumerate(ALL_KEYS)}
        first_is_a = position[key_1] < position[key_2]
        keys = (key_1, key_2) if first_is_a else (key_2, key_1)
        return self.pair_ids[(index, *keys)], first_is_a


def _instruction_kind(reference: str) -> str:
    # StrategyQA references are the yes/no answer followed by the explanation; the others are ELI5.
    return "strategyqa" if reference.startswith(("Yes. ", "No. ")) else "eli5"


def _load_evalset(root: Path) -> list[dict[str, str]]:
    data = read_json(root / EVALSET, root)
    if not isinstance(data, list) or not data:
        raise BadInput(str(EVALSET), "expected a non-empty JSON array of {instruction, reference}")
    for number, item in enumerate(data):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("instruction"), str)
            and isinstance(item.get("reference"), str)
            and item["instruction"].strip()
        ):
            raise BadInput(f"{EVALSET}: element {number}", "needs string 'instruction' and 'reference'")
    return data


def _load_responses(root: Path, n_instructions: int) -> dict[str, list[str]]:
    data = read_json(root / RESPONSES, root)
    if not isinstance(data, dict):
        raise BadInput(str(RESPONSES), "expected a JSON object {model_key: [responses]}")
    if tuple(data)[: len(RESPONDING_KEYS)] != RESPONDING_KEYS or len(data) != len(RESPONDING_KEYS):
        raise BadInput(str(RESPONSES), f"expected the keys {', '.join(RESPONDING_KEYS)} in this order")
    for key, texts in data.items():
        if not isinstance(texts, list) or len(texts) != n_instructions:
            raise BadInput(f"{RESPONSES}: {key}", f"expected a list of {n_instructions} responses")
        for number, text in enumerate(texts):
            if not isinstance(text, str):
                raise BadInput(f"{RESPONSES}: {key}[{number}]", "response is not a string")
    original = read_json(root / RESPONSES_15, root)
    if not isinstance(original, dict):
        raise BadInput(str(RESPONSES_15), "expected a JSON object {model_key: [responses]}")
    for key in CANONICAL_KEYS:
        if original.get(key) != data[key]:
            raise BadInput(str(RESPONSES_15), f"the {key} responses differ from {RESPONSES}")
    return data


def _get_study(slug: str) -> Study:
    study = Study.objects.filter(slug=check_slug(slug)).first()
    if study is not None and study.source != Study.Source.COBBLER:
        raise BadInput(f"--study {slug}", f"study exists with source '{study.source}', not cobbler")
    if study is None:
        study = Study(slug=slug, source=Study.Source.COBBLER)
    study.name = STUDY_NAME
    study.overlap = 3
    study.bandwagon_percent = 85
    if not study.description:
        study.description = "Imported from the CoBBLEr repository data (minnesotanlp/cobbler)."
    study.save()
    return study


def import_cobbler_content(*, root: Path, slug: str) -> CobblerContent:
    """Upsert the study, candidates, instructions, responses and all pairs.

    Idempotent on the natural keys; raises BadInput (nothing written by the
    caller's transaction) when a file is missing or malformed.
    """
    evalset = _load_evalset(root)
    responses = _load_responses(root, len(evalset))
    content = CobblerContent(root=root, study=_get_study(slug))
    study = content.study

    upsert(
        Candidate,
        (Candidate(study=study, key=key, name=key, position=pos) for pos, key in enumerate(ALL_KEYS)),
        unique_fields=("study", "key"),
        update_fields=("position",),
    )
    upsert(
        Instruction,
        (
            Instruction(
                study=study,
                index=index,
                external_id="",
                turn=1,
                text=item["instruction"],
                reference=item["reference"],
                kind=_instruction_kind(item["reference"]),
            )
            for index, item in enumerate(evalset)
        ),
        unique_fields=("study", "index"),
        update_fields=("text", "reference", "kind"),
    )
    content.candidate_ids = dict(study.candidates.values_list("key", "pk"))
    content.instruction_ids = dict(study.instructions.values_list("index", "pk"))
    content.index_by_text = {item["instruction"]: index for index, item in enumerate(evalset)}

    upsert(
        Response,
        (
            Response(
                instruction_id=content.instruction_ids[index],
                candidate_id=content.candidate_ids[key],
                text=responses[key][index],
            )
            for key in RESPONDING_KEYS
            for index in range(len(evalset))
        ),
        unique_fields=("instruction", "candidate"),
        update_fields=("text",),
    )
    for pk, index, key, text in Response.objects.filter(instruction__study=study).values_list(
        "pk", "instruction__index", "candidate__key", "text"
    ):
        content.response_ids[(index, key)] = pk
        content.response_texts[(index, key)] = text

    upsert(
        Pair,
        (
            Pair(
                instruction_id=content.instruction_ids[index],
                response_a_id=content.response_ids[(index, key_a)],
                response_b_id=content.response_ids[(index, key_b)],
            )
            for index in range(len(evalset))
            for key_a, key_b in combinations(RESPONDING_KEYS, 2)
        ),
        unique_fields=("instruction", "response_a", "response_b"),
    )
    key_of = {pk: key for (_index, key), pk in content.response_ids.items()}
    for pk, index, a_id, b_id in Pair.objects.filter(instruction__study=study).values_list(
        "pk", "instruction__index", "response_a_id", "response_b_id"
    ):
        content.pair_ids[(index, key_of[a_id], key_of[b_id])] = pk
    return content
