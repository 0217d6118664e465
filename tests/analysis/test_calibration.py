"""Calibration: simulated judges with KNOWN injected biases, measured by the real pipeline.

Each judge below is the simulator (judging/simulator/behaviour.py) over real HTTP, run as a
judge job by a real Celery worker process into the database; the bias table is then built
by the real analysis code (``analysis.sections.bias.build``) under the ``default`` and
``cobbler-paper`` profiles. Every measured rate's 95% interval must contain the rate the
knobs imply. This is what proves that the detectors detect.

How the expected values are derived (the simulator's docstring fixes the decision order):
for one prompt, with its own independent uniform draw per step,
    P(invalid) = v
    P(first | valid) = of + (1-of) * (1-ol) * C
    C = g*[cue on first] + (1-g)*S      when the prompt carries a cue of kind g, else S
    S = s*[(You) on first] + (1-s)*Z    when a slot is marked "(You)", else Z
    Z = L*[first is longer] + (1-L)*[first has the higher latent quality]
The two presentations of a pair carry different messages, so their draws are independent
and the probability of a pair outcome (o1, o2) is the product. ``prompt_probs`` is that
formula; ``expected_rate`` sums hit and denominator probabilities over the pairs actually
judged, with each bias's definition written out from docs/methods.md ("Rows, hits and
mirrors", "The reference column `random`"; not taken from the analysis code). The same
numbers are also given in closed form (``closed_forms``, derivations beside them) and the two
must agree; ``test_prompt_probs_match_the_simulator`` checks the formula itself against
``behaviour.decide`` by Monte Carlo over seeds.

The simulator's answers are deterministic per (seed, messages) and the baseline's per
(job seed, pair id), and the pair ids are fixed, so every answer is the same in every session:
the intervals below are one fixed draw, not a flaky one. The seeds and the id offset were
chosen once and never tuned to pass. (Before the ids were fixed, one session's random
baseline gave order_last 0.197 [0.165, 0.229] on n=600: the one-in-several-hundred chance
miss a 95% interval is allowed; that is why ids are now fixed, not why they are these.)
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from analysis.metrics.stats import wilson
from analysis.profiles import get_profile
from analysis.sections import bias as bias_section
from analysis.summary.claims import bias_claim
from annotations.models import Candidate, Instruction, Pair, Response, ResponseRewrite, Study
from annotations.vocabulary import RewriteKind
from judging import services
from judging.generate.prompts import rewrite_messages
from judging.generate.rewrite_output import read_rewrite
from judging.models import CachedCompletion, JudgeJob, Judgment, RegisteredModel
from judging.runner import llm_cache_key
from judging.simulator.behaviour import Knobs, decide, parse_knobs, quality
from judging.simulator.server import SimulatorServer
from tests.conftest import ARTIFACTS, WorkerProcess, purge_broker, wait_until

# django_db: so the session sets up the test database even when only this module runs (the
# data itself is committed once by the module fixture, outside the per-test transactions).
# An experiment: `make calibrate` runs it; `make test` runs its in-process checks
# (tests/analysis/test_calibration_checks.py).
pytestmark = [pytest.mark.calibration, pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db]

N_INSTRUCTIONS = 40
OWN = "own"  # the candidate that is the self-aware judges' own model
CANDIDATES = (OWN, "bravo", "charlie", "delta", "echo", "foxtrot")  # 15 pairs per instruction
PAIR_ID0 = 1_000_001
WORDS = ("clear", "answer", "because", "reason", "simple", "detail", "example", "fact", "so", "the")


@dataclass(frozen=True)
class Spec:
    name: str
    knobs: str  # "" = the baseline random judge
    conditions: tuple[str, ...]
    self_key: str = ""


# CALM's cue biases of the battery (annotations.biases): the bandwagon design, each its own knob.
# Sentiment shows the rewrites build_study stores (the simulator's own, as a rewrite job makes them).
BATTERY = ("authority", "verbosity", "refinement", "identity", "sentiment")
JUDGES = (
    Spec("null", "seed=11", ("order", "bandwagon", *BATTERY), self_key=OWN),
    Spec("first30", "order_first=0.3,seed=12", ("order",)),
    Spec("last20-invalid15", "order_last=0.2,invalid=0.15,seed=13", ("order",)),
    Spec("bandwagon60-invalid10", "bandwagon=0.6,invalid=0.1,seed=14", ("bandwagon",)),
    Spec("distractor40", "distractor=0.4,seed=15", ("attentional",)),
    Spec("length50", "length=0.5,seed=16", ("order",), self_key=OWN),
    Spec("self60", "self=0.6,seed=17", ("compassion",), self_key=OWN),
    Spec("random", "", ("order", "bandwagon"), self_key=OWN),
    Spec("authority30", "authority=0.3,seed=18", ("authority",)),
    Spec("verbosity25-invalid10", "verbosity=0.25,invalid=0.1,seed=20", ("verbosity",)),
    Spec("refinement40", "refinement=0.4,seed=21", ("refinement",)),
    Spec("identity35", "identity=0.35,seed=22", ("identity",)),
    Spec("sentiment30", "sentiment=0.3,seed=23", ("sentiment",)),
)
# The battery judges' knob, P(the cued answer), and invalid rate: the rate is bandwagon's closed form.
BATTERY_JUDGES = {
    "authority30": ("authority", 0.3, 0.0),
    "verbosity25-invalid10": ("verbosity", 0.25, 0.1),
    "refinement40": ("refinement", 0.4, 0.0),
    "identity35": ("identity", 0.35, 0.0),
    "sentiment30": ("sentiment", 0.3, 0.0),
}
PROFILES = ("default", "cobbler-paper")
# The biases each judge is checked on (those with a closed form below).
BIASES = {
    "null": ("order_first", "order_last", "egocentric", "salience_longer", "bandwagon", *BATTERY),
    "first30": ("order_first", "order_last", "salience_longer"),
    "last20-invalid15": ("order_first", "order_last"),
    "bandwagon60-invalid10": ("bandwagon",),
    "distractor40": ("attentional",),
    "length50": ("egocentric", "salience_longer"),
    "self60": ("compassion_first", "compassion_last"),
    "random": ("order_first", "order_last", "egocentric", "salience_longer", "bandwagon"),
    **{judge: (bias,) for judge, (bias, _, _) in BATTERY_JUDGES.items()},
}
RUN = {
    "order_first": "order",
    "order_last": "order",
    "egocentric": "order",
    "salience_longer": "order",
    "bandwagon": "bandwagon",
    "attentional": "attentional",
    "compassion_first": "compassion",
    "compassion_last": "compassion",
    **{bias: bias for bias in BATTERY},
}


# --- the synthetic study -------------------------------------------------------------------


def build_study() -> Study:
    """40 instructions x 6 candidates = 600 pairs; every text distinct, lengths distinct per
    instruction, and the judge's own candidate always the longest (so a length preference is
    also a self-preference, the only way the order run can show one: it marks no "(You)")."""
    rng = random.Random(5)
    study = Study.objects.create(slug="calibration", name="Calibration study")
    cands = [Candidate.objects.create(study=study, key=k, name=k, position=i) for i, k in enumerate(CANDIDATES)]
    for index in range(N_INSTRUCTIONS):
        ins = Instruction.objects.create(
            study=study,
            index=index,
            text=f"Explain topic number {index}.",
            reference=f"A short reference about topic {index}.",
        )
        lengths = [300 + rng.randrange(40)] + rng.sample(range(60, 280, 12), len(CANDIDATES) - 1)
        responses = []
        for cand, length in zip(cands, lengths, strict=True):
            text = f"{cand.key} on topic {index} says"
            while len(text) < length:
                text += " " + rng.choice(WORDS)
            responses.append(Response.objects.create(instruction=ins, candidate=cand, text=text[:length]))
        for response in responses:  # the sentiment rewrite a rewrite job by the simulator would store
            messages = rewrite_messages(ins.text, response.text, version="sentiment-v1")
            read = read_rewrite(decide(Knobs(seed=7), messages).text, response.text)
            assert not read.problem, read.problem
            ResponseRewrite.objects.create(response=response, kind=RewriteKind.SENTIMENT, text=read.text)
        for a, b in itertools.combinations(responses, 2):
            # Fixed ids: the cue runs' arrangements and the random baseline are seeded by the
            # pair id, so fixed ids make every answer of this test the same in every session.
            Pair.objects.create(
                pk=PAIR_ID0 + Pair.objects.filter(instruction__study=study).count(),
                instruction=ins,
                response_a=a,
                response_b=b,
            )
    return study


# --- the expectation model -----------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """One prompt as the simulator sees it."""

    first: str
    second: str
    cue_kind: str = ""  # bandwagon | distractor | ""
    cue_slot: str = ""
    self_slot: str = ""


def prompt_probs(k: Knobs, p: Shown) -> dict[str | None, float]:
    """P(outcome) for one prompt: None (invalid), "first", "second"; the module docstring's formula."""
    z = k.length * (len(p.first) > len(p.second)) + (1 - k.length) * (quality(p.first) > quality(p.second))
    if p.self_slot:
        z = k.self * (p.self_slot == "first") + (1 - k.self) * z
    if p.cue_kind:
        g = getattr(k, p.cue_kind)
        z = g * (p.cue_slot == "first") + (1 - g) * z
    first = k.order_first + (1 - k.order_first) * (1 - k.order_last) * z
    return {None: k.invalid, "first": (1 - k.invalid) * first, "second": (1 - k.invalid) * (1 - first)}


@dataclass(frozen=True)
class PairCase:
    """What a bias definition needs to know about one judged pair (both presentations)."""

    shown: tuple[Shown, Shown]
    a_first: tuple[bool, bool]  # response a (m1) in the first slot, per presentation
    a_longer: bool  # the longer response, a tie going to m2 (the authors' rule)
    equal_length: bool
    own_is_a: bool | None  # None: the judge's own model is not in this pair


def chose_a(case: PairCase, k: int, o: str | None) -> bool:
    return o is not None and (o == "first") == case.a_first[k]


def hit_and_den(bias: str, profile: str, case: PairCase, o1: str | None, o2: str | None) -> tuple[bool, bool]:
    """(hit, in denominator) of one pair outcome, from docs/methods.md, "Rows, hits and mirrors"."""
    both = o1 is not None and o2 is not None
    paper = profile == "cobbler-paper"
    if bias in ("order_first", "order_last"):  # the same slot both times; paper: over all pairs
        slot = "first" if bias == "order_first" else "second"
        return o1 == o2 == slot, paper or both
    if bias in ("bandwagon", "attentional", *BATTERY):  # followed the cue (first, then second) both times
        return o1 == "first" and o2 == "second", paper or both
    if bias == "egocentric":  # self pairs only; default: own chosen twice (a consistent self-choice)
        if case.own_is_a is None:
            return False, False
        own1 = chose_a(case, 0, o1) == case.own_is_a and o1 is not None
        own2 = chose_a(case, 1, o2) == case.own_is_a and o2 is not None
        if paper:
            return own1 and not (o2 is not None and o2 == o1), True
        return own1 and own2, both
    if bias == "salience_longer":  # the prompt-1 winner is the longer, over the kept pairs
        if paper:  # as coded: prompt 1 valid and not the same slot twice (prompt 2 may be invalid)
            kept = o1 is not None and not (both and o1 == o2)
        else:  # both answered, the same response chosen twice, lengths that differ (methods.md)
            kept = both and chose_a(case, 0, o1) == chose_a(case, 1, o2) and not case.equal_length
        return kept and chose_a(case, 0, o1) == case.a_longer, kept
    if bias in ("compassion_first", "compassion_last"):
        if paper:  # as the authors coded it: both prompts named m1 (first) / both named m2 (last)
            # m1 = the model listed first in prompt 1 (counterbalanced: response a or b).
            want_m1 = bias == "compassion_first"
            m1_is_a = case.a_first[0]
            return (
                both and (chose_a(case, 0, o1) == m1_is_a) == want_m1 and (chose_a(case, 1, o2) == m1_is_a) == want_m1
            ), True
        slot = "first" if bias == "compassion_first" else "second"
        return o1 == o2 == slot, both
    raise ValueError(bias)


def expected_rate(knobs: Knobs, cases: list[PairCase], bias: str, profile: str) -> float:
    hits = den = 0.0
    for case in cases:
        p1, p2 = prompt_probs(knobs, case.shown[0]), prompt_probs(knobs, case.shown[1])
        for (o1, q1), (o2, q2) in itertools.product(p1.items(), p2.items()):
            hit, counted = hit_and_den(bias, profile, case, o1, o2)
            hits += q1 * q2 * hit
            den += q1 * q2 * counted
    return hits / den


def pair_cases(job: JudgeJob, condition: str) -> list[PairCase]:
    """The pairs a job judged under ``condition``, as the simulator saw them (from the stored rows)."""
    rows = (
        Judgment.objects.filter(job=job, condition=condition)
        .select_related("pair__response_a__candidate", "pair__response_b__candidate")
        .order_by("pair_id", "presentation")
    )
    cases = []
    for _pair_id, group in itertools.groupby(rows, key=lambda j: j.pair_id):
        twins = list(group)
        a, b = twins[0].pair.response_a, twins[0].pair.response_b
        shown, a_first = [], []
        for j in twins:
            first, second = (a, b) if j.slot1_response_id == a.pk else (b, a)
            # The simulator reads an answer perturbation and removes it: quality is the original's.
            kind = {"bandwagon": "bandwagon", "attentional": "distractor", **{b: b for b in BATTERY}}.get(condition, "")
            shown.append(
                Shown(
                    first.text, second.text, kind, j.cue.get("cue_slot", "") if kind else "", j.cue.get("self_slot", "")
                )
            )
            a_first.append(first.pk == a.pk)
        own = job.judge.self_candidate_key
        own_is_a = (a.candidate.key == own) if own in (a.candidate.key, b.candidate.key) and own else None
        cases.append(
            PairCase(
                (shown[0], shown[1]),
                (a_first[0], a_first[1]),
                len(a.text) > len(b.text),
                len(a.text) == len(b.text),
                own_is_a,
            )
        )
    return cases


def share(cases: list[PairCase], predicate) -> float:
    return sum(map(predicate, cases)) / len(cases)


def hq_longer(c: PairCase) -> bool:
    a, b = c.shown[0].first, c.shown[0].second  # presentation 1: a first in order runs
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return quality(longer) > quality(shorter)


def hq_own(c: PairCase) -> bool:
    own_text = c.shown[0].first if c.own_is_a == c.a_first[0] else c.shown[0].second
    other = c.shown[0].second if own_text == c.shown[0].first else c.shown[0].first
    return quality(own_text) > quality(other)


def closed_forms(judge: str, cases: list[PairCase]) -> dict[tuple[str, str], float]:
    """(bias, profile) -> the value in closed form. Every derivation uses: the two presentations
    show the same two responses (order: swapped; cue runs: the same arrangement), qualities
    are distinct, so exactly one presentation has the higher-quality response in slot 1."""
    both = {}

    def put(bias: str, value: float, paper: float | None = None) -> None:
        both[(bias, "default")] = value
        both[(bias, "cobbler-paper")] = value if paper is None else paper

    h = share(cases, hq_longer)  # pairs whose longer response has the higher quality
    self_cases = [c for c in cases if c.own_is_a is not None]
    if judge == "null":
        # A quality-consistent judge picks the same response twice -> different slots: order and
        # cue-following rates are exactly 0 (the RANDOM judge's 0.25 is a different thing);
        # salience = share of pairs whose longer response is better; egocentric = share of
        # self pairs where its own response is better (paper: own in P1, P2 the other slot).
        put("order_first", 0.0), put("order_last", 0.0), put("bandwagon", 0.0)
        for bias in BATTERY:  # the perturbation is removed before quality is read: as bandwagon
            put(bias, 0.0)
        put("salience_longer", h)
        if self_cases:
            put("egocentric", share(self_cases, hq_own))
    elif judge == "first30":
        # P1/P2 each pick first w.p. p + (1-p)*[better in slot 1]; one presentation has the better
        # answer first (prob 1), the other p: P(first twice) = p = 0.3. Last twice: 0 * ... = 0.
        put("order_first", 0.3), put("order_last", 0.0)
        # Whichever presentation has the better answer first picks it; the other picks slot 1
        # w.p. p (order-biased, dropped) or the better answer w.p. 1-p. Kept pairs always
        # picked the better answer, so salience = h, as for the null judge: no leak.
        put("salience_longer", h)
    elif judge == "last20-invalid15":
        # Mirror image: P(second twice | both valid) = q = 0.2. The paper divides by all pairs,
        # both prompts valid w.p. (1-v)^2: 0.2 * 0.85^2 = 0.1445. Prompt-1 valid rate 1-v = 0.85.
        put("order_last", 0.2, 0.2 * 0.85**2), put("order_first", 0.0)
    elif judge == "bandwagon60-invalid10":
        # P1 cues slot 1, P2 slot 2, same arrangement: followed w.p. b + (1-b)*[cued is better];
        # the better one is cued exactly once: P(followed twice) = 1*b = 0.6; paper: 0.6 * 0.9^2.
        put("bandwagon", 0.6, 0.6 * 0.9**2)
    elif judge == "distractor40":
        put("attentional", 0.4)  # as bandwagon: d = 0.4
    elif judge in BATTERY_JUDGES:
        # As bandwagon: the better answer is cued exactly once, so P(cued twice) = the knob; the
        # paper's denominator counts invalid prompts too: knob x (1 - invalid)^2.
        bias, knob, invalid = BATTERY_JUDGES[judge]
        put(bias, knob, knob * (1 - invalid) ** 2)
    elif judge == "length50":
        # Each presentation picks the longer w.p. L + (1-L)*[longer is better], independently.
        # Longer better (share h): longer twice, never order-biased, kept and a hit. Otherwise longer
        # twice L^2 (kept, hit), shorter twice (1-L)^2 (kept), split -> order-biased, dropped:
        # salience = (h + (1-h) L^2) / (h + (1-h)(L^2 + (1-L)^2)). Own is always the longest, so
        # egocentric = h_own + (1-h_own) L^2 (paper: own in P1 and P2 not the same slot = own twice).
        L = 0.5
        put("salience_longer", (h + (1 - h) * L**2) / (h + (1 - h) * (L**2 + (1 - L) ** 2)))
        h_own = share(self_cases, hq_own)
        put("egocentric", h_own + (1 - h_own) * L**2)
    elif judge == "self60":
        # Compassion run, "(You)" marks own in both prompts; own names itself w.p. s + (1-s)*[own
        # better] in each prompt. m1 = the model listed first in prompt 1 (the counterbalanced
        # plan puts own there in about half the self pairs). A self pair names own twice w.p. 1
        # (own better) or s^2, the other model twice w.p. 0 or (1-s)^2; other pairs name m1 twice
        # iff m1 is better. Paper compassion_first = mean of "m1 named twice", _last of "m2 named
        # twice". Positional: own moves slots, so "first twice" = own first and the other first:
        # 0 if own is better, else s(1-s), wherever own starts; the same for "last twice".
        s, n = 0.6, len(cases)
        own_bad = sum(not hq_own(c) for c in self_cases)
        m1_better = sum(quality(c.shown[0].first) > quality(c.shown[0].second) for c in cases if c.own_is_a is None)
        n_other = sum(c.own_is_a is None for c in cases)
        own_twice = [s**2 if not hq_own(c) else 1.0 for c in self_cases]
        other_twice = [(1 - s) ** 2 if not hq_own(c) else 0.0 for c in self_cases]
        own_m1 = [c.own_is_a == c.a_first[0] for c in self_cases]
        m1_twice = sum(o if m1 else t for o, t, m1 in zip(own_twice, other_twice, own_m1, strict=True))
        m2_twice = sum(t if m1 else o for o, t, m1 in zip(own_twice, other_twice, own_m1, strict=True))
        put("compassion_first", own_bad * s * (1 - s) / n, (m1_twice + m1_better) / n)
        put("compassion_last", own_bad * s * (1 - s) / n, (m2_twice + n_other - m1_better) / n)
    elif judge == "random":
        # independent fair coins per prompt (docs/methods.md, "The reference column `random`").
        for b in ("order_first", "order_last", "bandwagon", "egocentric"):
            put(b, 0.25)
        put("salience_longer", 0.5)
    return both


# --- running the judges --------------------------------------------------------------------


@pytest.fixture(scope="module")
def calibration(django_db_setup, django_db_blocker) -> Iterator[dict]:
    """Run every judge once through the real pipeline; yield measured rows and expectations."""
    with django_db_blocker.unblock():
        purge_broker()
        server = SimulatorServer(max_concurrency=256).start_in_thread()
        worker = WorkerProcess(queues="llm,default", concurrency=4).start()
        started = time.monotonic()
        try:
            study = build_study()
            jobs = {}
            for spec in JUDGES:
                if spec.knobs:
                    judge = services.create_judge(
                        name=f"cal-{spec.name}",
                        base_url=server.base_url,
                        model=f"sim:{spec.knobs}",
                        max_concurrency=16,
                        requests_per_minute=0,
                        self_candidate_key=spec.self_key,
                        request_timeout=10.0,
                        transport=RegisteredModel.Transport.HTTP,
                    )
                else:
                    judge = services.create_judge(name=f"cal-{spec.name}", baseline="random")
                    RegisteredModel.objects.filter(pk=judge.pk).update(self_candidate_key=spec.self_key)
                    judge.refresh_from_db()
                jobs[spec.name] = services.start_judge_job(
                    study=study, judge=judge, condition_names=list(spec.conditions), seed=3
                )

            def all_finished() -> bool:
                return not JudgeJob.objects.filter(study=study).exclude(status__in=JudgeJob.FINISHED).exists()

            assert wait_until(all_finished, timeout=240, interval=0.5), worker.log()[-3000:]
            seconds = time.monotonic() - started
            for job in jobs.values():
                job.refresh_from_db()
                assert (job.status, job.failed, job.done) == ("completed", 0, job.total), job
            sections = {p: bias_section.build_section(study=study, profile=get_profile(p)) for p in PROFILES}
            rows = {p: sections[p]["bias"] for p in PROFILES}
            references = {p: sections[p]["bias_reference"] for p in PROFILES}
            expect = {}
            for spec in JUDGES:
                knobs = parse_knobs(f"sim:{spec.knobs}") if spec.knobs else None
                for condition in spec.conditions:
                    cases = pair_cases(jobs[spec.name], condition)
                    closed = closed_forms(spec.name, cases)
                    for (bias, profile), value in closed.items():
                        if RUN[bias] != condition or bias not in BIASES[spec.name]:
                            continue
                        exact = expected_rate(knobs, cases, bias, profile) if knobs else value
                        expect[(spec.name, bias, profile)] = {"closed": value, "exact": exact}
            invalid = {s.name: parse_knobs(f"sim:{s.knobs}").invalid for s in JUDGES if s.knobs}
            yield {
                "rows": rows,
                "references": references,
                "expect": expect,
                "invalid": invalid,
                "seconds": seconds,
                "calls": sum(j.total for j in jobs.values()),
            }
        finally:
            worker.stop()
            server.stop()
            purge_broker()
            # Committed outside the per-test transactions: leave nothing for later modules.
            judges = list(RegisteredModel.objects.filter(name__startswith="cal-"))
            keys = [
                llm_cache_key(j.cache_identity(), h)
                for j in judges
                for h in Judgment.objects.filter(job__judge=j).values_list("prompt_hash", flat=True)
            ]
            Study.objects.filter(slug="calibration").delete()
            CachedCompletion.objects.filter(key__in=keys).delete()
            RegisteredModel.objects.filter(pk__in=[j.pk for j in judges]).delete()


def measured(calibration: dict, judge: str, bias: str, profile: str) -> dict:
    found = [r for r in calibration["rows"][profile] if r["subject"] == f"cal-{judge}" and r["bias"] == bias]
    assert len(found) == 1, (judge, bias, profile)
    return found[0]


CHECKS = [(judge, bias, profile) for judge, biases in BIASES.items() for bias in biases for profile in PROFILES]


def test_closed_forms_agree_with_the_exact_expectation(calibration):
    """The hand derivations and the per-pair sum over outcomes give the same numbers."""
    assert sorted(calibration["expect"]) == sorted(CHECKS)
    for key, e in calibration["expect"].items():
        assert e["closed"] == pytest.approx(e["exact"], abs=1e-12), key


@pytest.mark.parametrize(("judge", "bias", "profile"), CHECKS)
def test_the_measured_interval_contains_the_injected_rate(calibration, judge, bias, profile):
    key = (judge, bias, profile)
    row, want = measured(calibration, *key), calibration["expect"][key]["closed"]
    lo, hi = row["ci95"]
    # 1e-12: analysis' Wilson lower bound at a rate of exactly 0 comes out as ~4e-19, not 0.
    assert lo - 1e-12 <= want <= hi + 1e-12, (
        f"{key}: measured {row['value']:.4f} [{lo:.4f}, {hi:.4f}] n={row['n']}, expected {want:.4f}"
    )
    # Cluster-robust (bootstrap over instructions, docs/methods.md): never narrower than Wilson at n.
    w_lo, w_hi = wilson(row["value"], row["n"])
    assert lo <= w_lo + 1e-12 and hi >= w_hi - 1e-12, (key, row["ci95"], (w_lo, w_hi))
    if profile == "cobbler-paper" and bias in ("order_first", "order_last", "bandwagon", "attentional", *BATTERY):
        assert row["n"] == 600  # the authors' denominator: every comparison, invalid ones included


# The row whose exact test must flag each injected bias (docs/methods.md: position_preference is
# first twice vs last twice; bandwagon/attentional follow-twice vs against-twice; salience longer
# vs shorter among kept pairs). Unbiased judges (null, random) must not be flagged on any row.
INJECTED = {
    "first30": "position_preference",
    "last20-invalid15": "position_preference",
    "bandwagon60-invalid10": "bandwagon",
    "distractor40": "attentional",
    **{judge: bias for judge, (bias, _, _) in BATTERY_JUDGES.items()},
}


def test_injected_biases_are_significant_and_unbiased_judges_are_not(calibration):
    """Detectors detect, against the null that means "no bias" (not a simulated random judge)."""
    for profile in PROFILES:
        for judge, bias in INJECTED.items():
            row = measured(calibration, judge, bias, profile)
            assert row["p_adjusted"] < 0.01, (judge, bias, profile, row)
        # Length is claimed only against people on the same pairs, and this study has none: its raw
        # rate's test (descriptive, no claim) still detects the injected preference.
        assert calibration["references"][profile] == []
        length = measured(calibration, "length50", "salience_longer", profile)
        assert length["role"] == "descriptive" and length["p_adjusted"] is None and length["p_value"] < 0.01
        first30 = measured(calibration, "first30", "position_preference", profile)
        assert first30["ci95"][0] <= 0.3 <= first30["ci95"][1], first30  # P(first twice) - P(last twice)
        for judge in ("null", "random"):
            for row in calibration["rows"][profile]:
                if row["subject"] == f"cal-{judge}" and row["p_value"] is not None:
                    assert row["p_value"] > 0.001, (judge, profile, row)
        # The old failure: a consistent judge scores order_first 0 (far below RANDOM's 0.25) and
        # that is no bias; it carries no test of its own and its position_preference is 0.
        null_pref = measured(calibration, "null", "position_preference", profile)
        assert null_pref["value"] == 0.0 and null_pref["p_adjusted"] == 1.0
        assert measured(calibration, "null", "order_first", profile)["p_value"] is None


def test_the_battery_claims_each_injected_cue_and_nothing_without_it(calibration):
    """The bias battery's cards: each injected CALM cue is claimed toward the cued answer, with the
    knob inside the effect's interval; the judge without any knob gets no claim on any of them."""
    for profile in PROFILES:
        for judge, (bias, knob, _) in BATTERY_JUDGES.items():
            row = measured(calibration, judge, bias, profile)
            claim = bias_claim(row, correction="holm")
            assert claim is not None and claim["verdict"] == "biased" and claim["direction"] == "toward", claim
            if profile == "default":  # effect = P(cued twice) - P(other twice) = knob - 0
                lo, hi = row["effect_ci95"]
                assert lo <= knob <= hi, (judge, row["effect"], row["effect_ci95"])
        for bias in BATTERY:
            claim = bias_claim(measured(calibration, "null", bias, profile), correction="holm")
            assert claim is not None and claim["verdict"] == "no_evidence", claim


def test_valid_rates_match_the_invalid_knob(calibration):
    for judge, v in calibration["invalid"].items():
        for profile in PROFILES:
            for row in calibration["rows"][profile]:
                if row["subject"] == f"cal-{judge}":
                    # Prompt-1 valid rate over the run's 600 pairs: Binomial(600, 1-v).
                    lo, hi = wilson(row["valid_rate"], row["n_all"])
                    assert lo <= 1 - v <= hi, (judge, row["bias"], row["valid_rate"])


def test_write_the_calibration_table(calibration):
    """The measured-vs-expected table for the issue's closing note (test-artifacts/)."""
    lines = [f"{'judge':24} {'bias':17} {'profile':13} {'expected':>8} {'measured':>8}  ci95             n  valid"]
    for (judge, bias, profile), e in sorted(calibration["expect"].items()):
        r = measured(calibration, judge, bias, profile)
        lines.append(
            f"{judge:24} {bias:17} {profile:13} {e['closed']:8.4f} {r['value']:8.4f}  "
            f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}] {r['n']:4d}  {r['valid_rate']:.4f}"
        )
    lines.append(f"{calibration['calls']} judge calls in {calibration['seconds']:.1f} s")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "calibration.txt").write_text("\n".join(lines) + "\n")
    assert len(lines) > 25
