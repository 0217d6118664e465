"""import_cobbler on the full CoBBLEr data: counts, fidelity to the derived files, privacy."""

from __future__ import annotations

import csv
import glob
import io
import json
from collections import Counter, defaultdict
from statistics import mean

import pytest
from django.apps import apps
from django.core import serializers
from django.core.management import call_command

from annotations.importers.cobbler_content import CANONICAL_KEYS
from annotations.models import Assignment, Batch, Participant, Response, Study, Submission, Task
from judging.models import AggregateJudgment, RegisteredModel
from tests.conftest import COBBLER_DIR
from tests.importers.conftest import COBBLER_SLUG, table_counts

pytestmark = pytest.mark.django_db
BATCHES = COBBLER_DIR / "human" / "batches"
EXPECTED_LINES = [
    "instructions: 50",
    "candidates: 18",
    "responses: 800",
    "pairs: 6000",
    "batches: 80",  # 5 ranking rounds + 3 x 25 bias batches
    "tasks: 2300",  # 50 ranking + 3 x 750 pairwise
    "participants: 184",
    "assignments: 288",  # 36 ranking sittings + 85 + 82 + 85 bias rows
    "submissions: 7424",
    "judges: 19",  # 15 + llamav2, mistral, olmo (ACL) + random (frequency run)
    "aggregate judgments: 77540",
    "submissions (ranking): 300 approved, 30 rejected",
    "submissions (order): 2250 approved, 87 rejected",
    "submissions (bandwagon): 2250 approved, 116 rejected",
    "submissions (attentional): 2250 approved, 141 rejected",
]


def _study() -> Study:
    return Study.objects.get(slug=COBBLER_SLUG)


def _key_of() -> dict[int, str]:
    return dict(Response.objects.filter(instruction__study__slug=COBBLER_SLUG).values_list("pk", "candidate__key"))


def _annotator_rankings(k: int) -> dict[int, list[str]]:
    key_of = _key_of()
    subs = Submission.objects.filter(
        assignment__participant__label=f"annotator-{k}", assignment__batch__study__slug=COBBLER_SLUG
    ).values_list("task__instruction__index", "ranking", "assignment__review")
    assert {review for _i, _r, review in subs} == {Assignment.Review.APPROVED}
    return {index: [key_of[pk] for pk in ranking] for index, ranking, _review in subs}


@pytest.mark.smoke
def test_it_prints_the_exact_counts(cobbler_import):
    lines = cobbler_import.splitlines()
    for expected in EXPECTED_LINES:
        assert any(line.startswith(expected) for line in lines), (expected, lines)
    study = _study()
    assert (study.name, study.source, study.overlap, study.bandwagon_percent) == (
        "CoBBLEr (Koo et al.)",
        "cobbler",
        3,
        85,
    )
    keys = list(study.candidates.order_by("position").values_list("key", flat=True))
    assert keys == [*CANONICAL_KEYS, "llamav2", "mistral", "olmo"]
    kinds = Counter(study.instructions.values_list("kind", flat=True))
    assert kinds == {"strategyqa": 25, "eli5": 25}
    assert list(study.instructions.filter(kind="strategyqa").values_list("index", flat=True)[:5]) == [0, 2, 4, 10, 12]


def test_ranking_submissions_equal_the_model_annot_csvs(cobbler_import):
    for k in range(6):
        with (BATCHES / "AMT" / f"model_annot{k}.csv").open(newline="") as handle:
            expected = [list(row.values()) for row in csv.DictReader(handle)]
        got = _annotator_rankings(k)
        assert [got[i] for i in range(50)] == expected, f"annotator-{k}"


def test_borda_counts_equal_human_annotations(cobbler_import):
    for k in range(6):
        stored = json.loads((BATCHES / "human_annotations" / f"annot_{k + 1}.json").read_text())
        got = _annotator_rankings(k)
        for index in range(50):
            below = {key: 14 - pos for pos, key in enumerate(got[index])}
            assert below == stored[index], (k, index)


def test_ranking_keeps_the_bar_and_the_canonical_display_order(cobbler_import):
    tasks = Task.objects.filter(batch__study__slug=COBBLER_SLUG, kind=Task.Kind.RANKING)
    assert tasks.count() == 50 and all(t.show_threshold_bar and len(t.response_ids) == 15 for t in tasks)
    key_of = _key_of()
    bars = defaultdict(list)
    for sub in Submission.objects.filter(task__in=tasks).select_related("assignment__participant"):
        assert [key_of[pk] for pk in sub.display_order] == list(CANONICAL_KEYS)
        assert sorted(sub.ranking) == sorted(sub.task.response_ids)
        bars[sub.assignment.participant.label].append(sub.bar_position)
    means = sorted(round(mean(bars[f"annotator-{k}"]), 1) for k in range(6))
    assert (means[0], means[-1]) == (5.7, 11.5)  # per annotator, mean answers above the bar
    rejected = Assignment.objects.filter(
        batch__study__slug=COBBLER_SLUG, batch__condition="ranking", review=Assignment.Review.REJECTED
    )
    assert rejected.count() == 6 and all(a.review_note for a in rejected)
    assert rejected.filter(review_note__startswith="dropped").count() == 1  # the pilot worker


def test_bias_batches_have_three_approved_raters_and_all_raw_rows(cobbler_import):
    valid_workers = set()
    for condition, raw, valid, workers in (
        ("order", 85, 75, 60),
        ("bandwagon", 82, 75, 61),
        ("attentional", 85, 75, 60),
    ):
        batches = Batch.objects.filter(study__slug=COBBLER_SLUG, condition=condition)
        assert batches.count() == 25
        assignments = Assignment.objects.filter(batch__in=batches)
        assert (assignments.count(), assignments.filter(review="approved").count()) == (raw, valid)
        approved_workers = set(assignments.filter(review="approved").values_list("participant_id", flat=True))
        assert len(approved_workers) == workers  # distinct valid workers per study
        valid_workers |= approved_workers
        for batch in batches:
            assert batch.assignments.filter(review="approved").count() == 3, batch
            assert batch.tasks.count() == 30
        approved = Submission.objects.filter(assignment__in=assignments.filter(review="approved"))
        assert approved.count() == 2250 and set(approved.values_list("choice", flat=True)) == {"A", "B"}
    assert len(valid_workers) == 149
    ranking_workers = Participant.objects.filter(study__slug=COBBLER_SLUG, label__startswith="annotator-")
    assert ranking_workers.count() == 6 and not valid_workers & set(ranking_workers.values_list("pk", flat=True))


def test_bias_tasks_show_the_json_texts_in_their_slots(cobbler_import):
    for condition, folder in (("order", "order"), ("bandwagon", "bandwagon"), ("attentional", "distraction")):
        for k in (1, 16, 25):
            items = json.loads(
                (BATCHES / "human_bias" / folder / "real" / f"random_sampled_examples_{folder}_{k}.json").read_text()
            )
            batch = Batch.objects.get(study__slug=COBBLER_SLUG, condition=condition, index=k - 1)
            for task, item in zip(
                batch.tasks.select_related("pair__response_a", "pair__response_b"), items, strict=True
            ):
                slot_a, slot_b = task.slot_responses()
                assert (slot_a.text, slot_b.text) == (item["System A"], item["System B"])
                assert task.pair_index == item["pair_idx"]
                if condition == "order":
                    assert task.cue == {"order": item["order"]}
                elif condition == "bandwagon":
                    assert task.cue["cue_slot"] == item["bandwagon_order"] and task.cue["percent"] == 85
                    assert (
                        task.cue["text"]
                        == f"Note: 85% of people believe that System {item['bandwagon_order']} is better."
                    )
                else:
                    assert task.cue["distractor"] == item["distractor"]
                    assert f"System {task.cue['cue_slot']}" in item["distractor"]


def _rater_rates(condition: str, k: int) -> list[dict[str, float]]:
    """Per approved rater (in CSV order) the authors' per-rater bias rates, recomputed from the stored rows."""
    batch = Batch.objects.get(study__slug=COBBLER_SLUG, condition=condition, index=k - 1)
    tasks = list(batch.tasks.all())
    rates = []
    for assignment in batch.assignments.filter(review="approved").order_by("pk"):
        choice = dict(assignment.submissions.values_list("task__position", "choice"))
        twins = defaultdict(list)
        for task in tasks:
            twins[task.pair_index].append(task)
        counts = Counter()
        for first, second in twins.values():
            c1, c2 = choice[first.position], choice[second.position]
            counts["first"] += c1 == c2 == "A"
            counts["last"] += c1 == c2 == "B"
            counts["cued"] += (c1, c2) == (first.cue.get("cue_slot"), second.cue.get("cue_slot"))
        rates.append({name: round(value / 15, 3) for name, value in counts.items()})
    return rates


def test_stored_rows_reproduce_the_authors_per_rater_bias_rates(cobbler_import):
    folders = {"order": "order", "bandwagon": "bandwagon", "attentional": "distraction"}
    for condition, folder in folders.items():
        stored = json.loads((BATCHES / "human_bias" / folder / f"all_bias_{folder}.json").read_text())
        for k in range(1, 26):
            rates = _rater_rates(condition, k)
            if condition == "order":
                assert sorted(r["first"] for r in rates) == sorted(stored[k - 1]["first-order"]), k
                assert sorted(r["last"] for r in rates) == sorted(stored[k - 1]["last_order"]), k
            else:
                assert sorted(r["cued"] for r in rates) == sorted(stored[k - 1][folder]), (condition, k)


def test_aggregates_are_the_stored_win_counts(cobbler_import):
    rows = AggregateJudgment.objects.filter(study__slug=COBBLER_SLUG)
    by_collection = Counter(rows.values_list("collection", flat=True))
    assert by_collection == {"v1": 50 * (15 * 15 + 16), "acl": 50 * (13 * 15 + 3 * 16), "bias": 77540 - 12050 - 12150}
    gpt4 = dict(
        rows.filter(judge__name="gpt4", collection="v1", instruction__index=0).values_list("candidate__key", "wins")
    )
    assert (gpt4["vicuna"], gpt4["gpt4"], gpt4["mpt"], sum(gpt4.values())) == (1, 14, 0, 97)
    dolly = rows.filter(judge__name="dolly", collection="bias", run="compassion")
    assert dolly.values("instruction").distinct().count() == 29
    assert dolly.first().source_file == "human/batches/model_bias/compassion/nC2_preferences_dolly.json"
    runs = set(rows.filter(collection="bias").values_list("run", flat=True))
    assert runs == {"order", "compassion", "bandwagon", "distraction", "frequency", "selective"}
    judges = RegisteredModel.objects.filter(aggregates__study__slug=COBBLER_SLUG).distinct()
    assert all(j.kind == "imported" for j in judges)
    assert dict(judges.filter(name__in=["gpt4", "random"]).values_list("name", "self_candidate_key")) == {
        "gpt4": "gpt4",
        "random": "",
    }


def test_it_stores_no_raw_worker_id(cobbler_import):
    raw_ids = set()
    for path in glob.glob(str(BATCHES / "AMT" / "batch_*.csv")) + glob.glob(
        str(BATCHES / "human_bias" / "*" / "real" / "*.csv")
    ):
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                raw_ids.update({row["WorkerId"], row["AssignmentId"]})
    assert len(raw_ids) > 300
    dump = serializers.serialize("json", Participant.objects.all())
    for model in apps.get_app_config("annotations").get_models():
        if model._meta.model_name not in ("response", "instruction", "pair"):
            dump += serializers.serialize("json", model.objects.all())
    assert Participant.objects.filter(study__slug=COBBLER_SLUG).count() == 184
    leaked = [raw for raw in raw_ids if raw in dump]
    assert leaked == []


def test_a_second_run_changes_no_counts(cobbler_import):
    before = table_counts()
    out = io.StringIO()
    call_command("import_cobbler", str(COBBLER_DIR), "--study", COBBLER_SLUG, stdout=out)
    assert table_counts() == before
    assert "submissions: 7424 (+0 new)" in out.getvalue()
