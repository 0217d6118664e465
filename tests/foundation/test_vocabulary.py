"""One vocabulary: the values of conditions, arrangements, slots, judge kinds, transports,
parsers, baselines and job statuses are spelled in annotations/vocabulary.py and
judging/vocabulary.py only; everywhere else names the member (``Condition.ORDER``).

The scan reads the product's Python (not tests, not migrations) for string constants with one
of these values. Docstrings, f-string parts and subscripts (``row["baseline"]`` is a field, not
a judge kind) are not uses. The few remaining strings that spell the same word for something
else are listed in ``OTHER_MEANINGS`` with what they mean; a new literal fails here.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from annotations.models import Task
from annotations.vocabulary import AS_CROWD_CHOICE, AS_JUDGE_SLOT, Arrangement, Condition, CrowdChoice, JudgeSlot
from judging.models import JudgeJob, Judgment, RegisteredModel
from judging.vocabulary import (
    Baseline,
    JobStatus,
    ModelKind,
    Parser,
    Presentation,
    RowStatus,
    Strength,
    Transport,
    Verdict,
)

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotations", "judging", "analysis", "cobbler_site")
HOMES = {"annotations/vocabulary.py", "judging/vocabulary.py"}
# The simulator stands in for an outside model: it reads prompts as text and must not share
# the product's names. The settings name a log formatter "plain".
NOT_SCANNED = ("judging/simulator/", "cobbler_site/settings.py")

# Words that are unambiguous enough to scan the whole product for. "ranking" is also the
# Submission.ranking field; "running"/"completed"/"failed"/"pending"/"done" are also the states
# of report runs, batches, assignments and job counters; "first"/"second" also name the
# length-control frame's columns. They are checked where they can only be vocabulary (below).
CHECKED = {
    *(c.value for c in Condition if c != Condition.RANKING),
    *Arrangement.values,
    *ModelKind.values,
    *Transport.values,
    *Parser.values,
    *(b for b in Baseline.values if b != Baseline.RANDOM),  # "random" is also Python's module name
    JobStatus.QUEUED,
    JobStatus.PAUSED,
    JobStatus.CANCELLED,
    JobStatus.BUDGET_EXHAUSTED,
}
CROWD_LETTERS = {*CrowdChoice.values}
SLOTS = {*JudgeSlot.values}
# Where the crowd's letters and the judges' slots can only be vocabulary.
LETTERS_CHECKED_IN = ("annotations/", "analysis/loaders/", "analysis/metrics/", "analysis/sections/")
SLOTS_CHECKED_IN = (
    "judging/conditions.py",
    "judging/parsers.py",
    "judging/connection_test.py",
    "judging/runner/",
    "analysis/loaders/",
    "analysis/sections/",
)

# (path, value): how many times, and what the word means there instead.
OTHER_MEANINGS = {
    # The report's "paper" section and the profiles' "paper" rule (the authors' definition).
    ("analysis/api.py", "paper"): 2,
    ("analysis/exporters/tidy_tables.py", "paper"): 3,
    ("analysis/metrics/bias.py", "paper"): 3,
    ("analysis/profiles.py", "paper"): 2,
    ("analysis/report.py", "paper"): 1,
    ("analysis/summary/work.py", "paper"): 1,
    ("analysis/exporters/column_words.py", "paper"): 1,  # the paper table's readable name
    # The report's "cot" section (its key, table and no-data entry), named after the run it reads.
    ("analysis/exporters/column_words.py", "cot"): 1,
    ("analysis/exporters/tidy_tables.py", "cot"): 5,
    ("analysis/summary/work.py", "cot"): 1,
    # The CoBBLEr files' run names ("order", "bandwagon", "distraction") and the cue key
    # {"order": "first"|"last"} that marks which of an order task's twins a task is.
    ("analysis/sections/agreement.py", "order"): 2,
    ("analysis/sections/paper.py", "order"): 2,
    ("annotations/importers/cobbler_bias.py", "order"): 3,
    ("annotations/importers/cobbler_bias.py", "bandwagon"): 1,
    ("annotations/services/design.py", "order"): 3,
    ("cobbler_site/wiring/cobbler_import.py", "order"): 2,
    # An imported agreement's source.
    ("analysis/summary/cards.py", "imported"): 1,
    # The "baseline" field of a judge and of a summary card (the no-bias value), and form,
    # admin and serializer field lists naming it.
    ("analysis/summary/claims.py", "baseline"): 3,
    ("analysis/summary/headline.py", "baseline"): 2,
    ("judging/admin.py", "baseline"): 1,
    ("judging/forms.py", "baseline"): 4,
    ("judging/models/judges.py", "baseline"): 1,
    ("judging/serializers.py", "baseline"): 1,
    ("judging/services.py", "baseline"): 1,
    # URL schemes (and Django's assume_scheme), not the lean transport.
    ("judging/admin.py", "http"): 1,
    ("judging/endpoints.py", "http"): 1,
    ("judging/forms.py", "http"): 2,
    ("judging/services.py", "http"): 1,
    # The OpenAI preset's key; OpenAI's own batch statuses.
    ("judging/presets.py", "openai"): 1,
    ("judging/batch/client.py", "cancelled"): 1,
    # pandas' keep="first".
    ("analysis/sections/agreement.py", "first"): 1,
    # The report run's own states (analysis.models.ReportRun.Status).
    ("analysis/models.py", "queued"): 2,
}


def _sources():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel or rel in HOMES or rel.startswith(NOT_SCANNED):
                continue
            yield rel, ast.parse(path.read_text(), filename=rel)


def _string_uses(tree: ast.AST):
    """String constants that are values in code: not docstrings, f-string parts or subscripts."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skip.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in ast.walk(node))
        if isinstance(node, ast.Subscript):
            skip.add(id(node.slice))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.value


def _stray_literals() -> Counter:
    found: Counter = Counter()
    for rel, tree in _sources():
        letters = rel.startswith(LETTERS_CHECKED_IN)
        slots = rel.startswith(SLOTS_CHECKED_IN)
        for value in _string_uses(tree):
            if value in CHECKED or (letters and value in CROWD_LETTERS) or (slots and value in SLOTS):
                found[(rel, value)] += 1
    return found


def test_no_vocabulary_value_is_spelled_outside_its_module():
    found = _stray_literals()
    unexplained = {key: n for key, n in found.items() if n > OTHER_MEANINGS.get(key, 0)}
    assert not unexplained, (
        "name the member (annotations.vocabulary / judging.vocabulary) instead of the string, "
        f"or list another meaning of the word in OTHER_MEANINGS: {sorted(unexplained.items())}"
    )
    # An entry nobody needs any more goes too, so the list stays true.
    stale = {key: n for key, n in OTHER_MEANINGS.items() if found.get(key, 0) < n}
    assert not stale, f"OTHER_MEANINGS lists more than the code holds: {stale}"


def test_the_scan_finds_a_stray_literal():
    tree = ast.parse('"""a docstring: order"""\nx = row["baseline"] == "order"\ny = f"{z}plain"\n')
    assert list(_string_uses(tree)) == ["order"]


def test_the_models_name_the_vocabulary_classes():
    assert (
        RegisteredModel.Kind is ModelKind
        and RegisteredModel.Baseline is Baseline
        and RegisteredModel.Transport is Transport
    )
    assert JudgeJob.Status is JobStatus and Judgment.Status is RowStatus
    assert Task.Arrangement is Arrangement
    assert Judgment._meta.get_field("presentation").choices == Presentation.choices
    assert {f.name: f.choices for f in Judgment._meta.fields if f.name in ("choice", "verdict", "strength")} == {
        "choice": JudgeSlot.choices,
        "verdict": Verdict.choices,
        "strength": Strength.choices,
    }
    assert RegisteredModel._meta.get_field("kind").choices == ModelKind.choices
    assert JudgeJob._meta.get_field("parser").default == Parser.ROBUST


def test_one_translation_between_crowd_letters_and_judge_slots():
    assert AS_JUDGE_SLOT == {"A": "first", "B": "second", "first": "first", "second": "second"}
    assert AS_CROWD_CHOICE == {"A": "A", "B": "B", "first": "A", "second": "B"}
    assert CrowdChoice.TIE not in AS_JUDGE_SLOT  # a tie is never read as a slot
