"""A tiny made-up study in the generic format (docs/study-format.md), zipped for the upload page.

Made up here, in code, so it may be handed to anyone (never built from ../shared, whose data may
not be redistributed). It imports cleanly (``tests/studyformat/test_upload_friction.py``): two
instructions, three models, votes in four conditions with a tie, rankings, and, when the judge
outputs' extension is registered (``judging``), one imported judge with its calls.
"""

from __future__ import annotations

import io
import json
import zipfile

from annotations.importers.study_extensions import extension_files
from annotations.vocabulary import Condition

FOLDER = "example-study"

INSTRUCTIONS: list[dict] = [
    {
        "id": "q1",
        "instruction": "Is 221 a prime number? Explain briefly.",
        "reference": "No: 221 = 13 x 17.",
        "category": "math",
    },
    {"id": "q2", "instruction": "Suggest a name for a grey cat.", "category": "creative"},
]
RESPONSES: list[dict] = [
    {"instruction_id": "q1", "model": "owl-7b", "text": "Yes, 221 is prime."},
    {"instruction_id": "q1", "model": "heron-13b", "text": "No. 221 = 13 x 17, so it is composite."},
    {"instruction_id": "q1", "model": "wren-3b", "text": "No, it has the factors 13 and 17."},
    {"instruction_id": "q2", "model": "owl-7b", "text": "Cat."},
    {"instruction_id": "q2", "model": "heron-13b", "text": "Ash, Smoky or Pebble."},
    {"instruction_id": "q2", "model": "wren-3b", "text": "How about Earl Grey?"},
]
_PAIR = {"instruction_id": "q1", "model_a": "owl-7b", "model_b": "heron-13b"}
VOTES: list[dict] = [
    # the order condition's twins: the same pair, positions swapped
    _PAIR | {"winner": "model_b", "annotator": "rater-1", "condition": Condition.ORDER, "presented_first": "model_a"},
    _PAIR | {"winner": "model_b", "annotator": "rater-1", "condition": Condition.ORDER, "presented_first": "model_b"},
    {
        "instruction_id": "q1",
        "model_a": "heron-13b",
        "model_b": "wren-3b",
        "winner": "tie",
        "annotator": "rater-2",
        "condition": Condition.PLAIN,
    },
    _PAIR | {"winner": "model_a", "annotator": "rater-3", "condition": Condition.BANDWAGON, "cued": "model_a"},
    {
        "instruction_id": "q2",
        "model_a": "owl-7b",
        "model_b": "wren-3b",
        "winner": "model_b",
        "annotator": "rater-2",
        "condition": Condition.PLAIN,
    },
]
RANKINGS: list[dict] = [
    {
        "instruction_id": "q1",
        "annotator": "rater-1",
        "ranking": ["heron-13b", "wren-3b", "owl-7b"],
        "acceptable_count": 2,
    },
    {"instruction_id": "q2", "annotator": "rater-2", "ranking": ["wren-3b", "heron-13b", "owl-7b"]},
]


def judge_files(judge: str) -> dict[str, list[dict]]:
    """judges.jsonl and judgments.jsonl (judging's part of the format) for one made-up judge."""
    second_better = "\n\nMy final verdict is: Assistant B is better: [[B>A]]"
    first_better = "\n\nMy final verdict is: Assistant A is better: [[A>B]]"
    return {
        "judges.jsonl": [{"name": judge, "model": "made-up-judge-1", "verdict_format": "arena-hard"}],
        "judgments.jsonl": [
            _PAIR
            | {
                "judge": judge,
                "condition": Condition.ORDER,
                "presented_first": "model_a",
                "output": "Assistant B gives the factors." + second_better,
            },
            _PAIR
            | {
                "judge": judge,
                "condition": Condition.ORDER,
                "presented_first": "model_b",
                "output": "Assistant A gives the factors." + first_better,
            },
            {"judge": judge, "instruction_id": "q2", "model_a": "owl-7b", "model_b": "wren-3b", "winner": "model_b"},
        ],
    }


README = """A made-up study in the generic study format (docs/study-format.md).

Upload the files on Studies > Import a study from files (JSONL), or run
  python manage.py import_study example-study --study my-example
One JSON object per line; instructions.jsonl and responses.jsonl are required,
the others optional. judges.jsonl / judgments.jsonl hold outputs of judges you
already ran elsewhere.
"""


def example_files(*, judge: str = "example-judge") -> dict[str, bytes]:
    """File name -> content, in the format's order."""
    files: dict[str, list[dict]] = {
        "instructions.jsonl": INSTRUCTIONS,
        "responses.jsonl": RESPONSES,
        "votes.jsonl": VOTES,
        "rankings.jsonl": RANKINGS,
    }
    registered = extension_files()
    files |= {name: lines for name, lines in judge_files(judge).items() if name in registered}
    return {name: "".join(json.dumps(line) + "\n" for line in lines).encode() for name, lines in files.items()}


def example_zip(*, judge: str = "example-judge") -> bytes:
    """The example as a zip of one folder, ``example-study/``, with a README."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{FOLDER}/README.txt", README)
        for name, content in example_files(judge=judge).items():
            archive.writestr(f"{FOLDER}/{name}", content)
    return out.getvalue()
