"""Calibration by output style (issue 9): the parser, not the judge, must not create bias.

For every output style of the simulator (``style=`` knob, judging/simulator/behaviour.py) two
simulated judges run over real HTTP as judge jobs in a real Celery worker process, and the bias
table is built by the real analysis code (``analysis.sections.bias.build``, profile ``default``):
- ``null``: no bias knob at all. Its implied order_first, order_last, bandwagon and attentional
  rates are exactly 0 (a quality-consistent judge picks the same response in both
  presentations); a parser that reads a restated cue, a hedge or a negation as a verdict would
  make them positive, as issue 9 measured for the old parser (bandwagon 0.42 on a verbose judge).
- ``biased``: order_first=0.3, bandwagon=0.5, distractor=0.5. Each measured rate's 95% interval
  must contain the rate the knobs imply.
Expected rates come from tests/analysis/test_calibration.py's ``expected_rate`` (the per-pair
sum over outcomes of the simulator's documented decision formula), never from the analysis code.
The tie, refusal and both_labels_final_sentence styles write their invalid answers (knob
``invalid=0.2``) as a real tie, refusal or both-asserted sentence, so for them the valid rate
must match 0.8 and the intervals are on valid pairs, as the default profile defines them.

The style only changes the surface text, never the decision, and every style uses the same
seeds: so every style's judgments are the same decisions, and the measured table must be the
same for every style (checked), besides each parsed choice being the simulator's own choice
(checked for every judgment). The seeds were chosen once, not tuned.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator

import pytest

from analysis.profiles import get_profile
from analysis.sections import bias as bias_section
from annotations.models import Candidate, Instruction, Pair, Response, Study
from judging import conditions, parsers, services
from judging.models import CachedCompletion, JudgeJob, Judgment, RegisteredModel
from judging.runner import llm_cache_key
from judging.simulator.behaviour import decide, parse_knobs
from judging.simulator.server import SimulatorServer
from tests.analysis.test_calibration import WORDS, expected_rate, pair_cases
from tests.conftest import ARTIFACTS, WorkerProcess, purge_broker, wait_until

# An experiment: `make calibrate` runs it; `make test` runs its in-process checks
# (tests/analysis/test_calibration_checks.py).
pytestmark = [pytest.mark.calibration, pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db]

STYLES = (
    "terse",
    "verbose",
    "json",
    "mixed",
    "verbose_reasoning",
    "restated_bandwagon",
    "restated_distractor",
    "hedge_naming_loser",
    "negation",
    "markdown",
    "tie",
    "refusal",
    "both_labels_final_sentence",
)
INVALID_STYLES = ("tie", "refusal", "both_labels_final_sentence")
JUDGES = {"null": "seed=21", "biased": "order_first=0.3,bandwagon=0.5,distractor=0.5,seed=22"}
CONDITIONS = ("order", "bandwagon", "attentional")
BIASES = {"order_first": "order", "order_last": "order", "bandwagon": "bandwagon", "attentional": "attentional"}
N_INSTRUCTIONS, CANDIDATES = 20, ("alpha", "bravo", "charlie", "delta")  # 20 x 6 = 120 pairs
PAIR_ID0 = 2_000_001
SLUG = "calibration-styles"


def knobs_of(style: str, judge: str) -> str:
    extra = ",invalid=0.2" if style in INVALID_STYLES else ""
    return f"style={style},{JUDGES[judge]}{extra}"


def build_study() -> Study:
    rng = random.Random(9)
    study = Study.objects.create(slug=SLUG, name="Calibration by output style")
    cands = [Candidate.objects.create(study=study, key=k, name=k, position=i) for i, k in enumerate(CANDIDATES)]
    for index in range(N_INSTRUCTIONS):
        ins = Instruction.objects.create(
            study=study,
            index=index,
            text=f"Describe subject number {index}.",
            reference=f"A short reference about subject {index}.",
        )
        responses = []
        for cand, length in zip(cands, rng.sample(range(80, 320, 9), len(cands)), strict=True):
            text = f"{cand.key} on subject {index} says"
            while len(text) < length:
                text += " " + rng.choice(WORDS)
            responses.append(Response.objects.create(instruction=ins, candidate=cand, text=text[:length]))
        for a, b in itertools.combinations(responses, 2):  # fixed ids: fixed cue arrangements
            Pair.objects.create(
                pk=PAIR_ID0 + Pair.objects.filter(instruction__study=study).count(),
                instruction=ins,
                response_a=a,
                response_b=b,
            )
    return study


def _cleanup() -> None:
    judges = list(RegisteredModel.objects.filter(name__startswith="sty-"))
    keys = [
        llm_cache_key(j.cache_identity(), h)
        for j in judges
        for h in Judgment.objects.filter(job__judge=j).values_list("prompt_hash", flat=True)
    ]
    Study.objects.filter(slug=SLUG).delete()
    CachedCompletion.objects.filter(key__in=keys).delete()
    RegisteredModel.objects.filter(pk__in=[j.pk for j in judges]).delete()


@pytest.fixture(scope="module")
def styled(django_db_setup, django_db_blocker) -> Iterator[dict]:
    with django_db_blocker.unblock():
        _cleanup()
        purge_broker()
        server = SimulatorServer(max_concurrency=256).start_in_thread()
        worker = WorkerProcess(queues="llm,default", concurrency=4).start()
        started = time.monotonic()
        try:
            study = build_study()
            jobs = {}
            for style, judge in itertools.product(STYLES, JUDGES):
                j = services.create_judge(
                    name=f"sty-{style}-{judge}",
                    base_url=server.base_url,
                    model=f"sim:{knobs_of(style, judge)}",
                    max_concurrency=16,
                    requests_per_minute=0,
                    request_timeout=10.0,
                    transport=RegisteredModel.Transport.HTTP,
                )
                jobs[(style, judge)] = services.start_judge_job(
                    study=study, judge=j, condition_names=list(CONDITIONS), seed=3
                )

            def all_finished() -> bool:
                return not JudgeJob.objects.filter(study=study).exclude(status__in=JudgeJob.FINISHED).exists()

            assert wait_until(all_finished, timeout=240, interval=0.5), worker.log()[-3000:]
            run_seconds = time.monotonic() - started
            for job in jobs.values():
                job.refresh_from_db()
                assert (job.status, job.failed, job.done) == ("completed", 0, job.total), job
            rows = bias_section.build(study=study, profile=get_profile("default"))
            table = {}
            for (style, judge), job in jobs.items():
                knobs = parse_knobs(f"sim:{knobs_of(style, judge)}")
                found = {r["bias"]: r for r in rows if r["subject"] == f"sty-{style}-{judge}"}
                for bias, condition in BIASES.items():
                    r = found[bias]
                    table[(style, judge, bias)] = {
                        "expected": expected_rate(knobs, pair_cases(job, condition), bias, "default"),
                        "value": r["value"],
                        "ci95": r["ci95"],
                        "n": r["n"],
                        "valid_rate": r["valid_rate"],
                    }
            yield {
                "table": table,
                "jobs": jobs,
                "run_seconds": run_seconds,
                "calls": sum(j.total for j in jobs.values()),
                "started": started,
            }
        finally:
            worker.stop()
            server.stop()
            purge_broker()
            _cleanup()


CHECKS = list(itertools.product(STYLES, JUDGES, BIASES))


@pytest.mark.parametrize(("style", "judge", "bias"), CHECKS)
def test_the_measured_interval_contains_the_implied_rate(styled, style, judge, bias):
    e = styled["table"][(style, judge, bias)]
    lo, hi = e["ci95"]
    assert lo - 1e-9 <= e["expected"] <= hi + 1e-9, (style, judge, bias, e)
    if judge == "null":
        assert e["expected"] == 0.0 and e["value"] == 0.0, (style, bias, e)  # no bias, none measured


def test_the_style_changes_no_measurement(styled):
    """Same decisions in every style -> the very same table (value, n, interval) for each."""
    for judge, bias in itertools.product(JUDGES, BIASES):
        for group in (tuple(s for s in STYLES if s not in INVALID_STYLES), INVALID_STYLES):
            cells = {
                (styled["table"][(s, judge, bias)]["value"], styled["table"][(s, judge, bias)]["n"]) for s in group
            }
            assert len(cells) == 1, (judge, bias, group, cells)


@pytest.mark.parametrize("style", STYLES)
def test_every_parsed_choice_is_the_simulators_choice(styled, style):
    for judge in JUDGES:
        job = styled["jobs"][(style, judge)]
        knobs = parse_knobs(f"sim:{knobs_of(style, judge)}")
        rows = list(job.judgments.select_related("pair__instruction", "pair__response_a", "pair__response_b"))
        wrong = []
        for j in rows:
            prompt = conditions.render_for(
                version=job.prompt_version,
                condition=j.condition,
                pair=j.pair,
                slot1_response_id=j.slot1_response_id,
                cue=j.cue,
            )
            truth = decide(knobs, prompt.messages).slot or None
            if (j.choice or None) != truth:
                wrong.append((j.condition, truth, j.choice, j.raw_text))
        assert not wrong, wrong[:3]
        valid = sum(j.valid for j in rows) / len(rows)
        if style in INVALID_STYLES:
            assert 0.7 <= valid <= 0.9, (style, judge, valid)  # invalid=0.2, drawn per prompt
        else:
            assert valid == 1.0, (style, judge, valid)


def test_the_old_last_label_rule_would_have_failed_here(styled):
    """The restating styles are the ones the issue saw mis-read: the paper parser (first 30
    characters) cannot read them at all, so the robust parser is the one carrying the weight."""
    job = styled["jobs"][("restated_bandwagon", "null")]
    texts = list(job.judgments.filter(condition="bandwagon").values_list("raw_text", flat=True)[:50])
    labels = ("System Star", "System Square")
    assert sum(parsers.parse("paper", t, labels=labels) is None for t in texts) > 10


def test_write_the_style_calibration_table(styled):
    lines = [f"{'style':28} {'judge':7} {'bias':12} {'expected':>8} {'measured':>8}  ci95               n  valid"]
    for (style, judge, bias), e in styled["table"].items():
        lines.append(
            f"{style:28} {judge:7} {bias:12} {e['expected']:8.4f} {e['value']:8.4f}  "
            f"[{e['ci95'][0]:.4f}, {e['ci95'][1]:.4f}] {e['n']:4d}  {e['valid_rate']:.3f}"
        )
    lines.append(
        f"{styled['calls']} judge calls in {styled['run_seconds']:.1f} s "
        f"(fixture total {time.monotonic() - styled['started']:.1f} s)"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "calibration_styles.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assert len(lines) == len(CHECKS) + 2
