"""Builders and personas for the crowd side: a small study, workers who have entered it."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotations import services
from annotations.models import Candidate, Instruction, QualificationItem, Response, Study
from tests.conftest import COBBLER_DIR, needs_shared

CANDIDATES = ("alpha", "beta", "gamma", "delta")


def prolific_id(name: str) -> str:
    """A well-formed Prolific ID (24 hex characters) standing for ``name``."""
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def mturk_worker_id(name: str) -> str:
    """A well-formed MTurk worker ID ("A" and 13 capitals or digits) standing for ``name``."""
    return "A" + hashlib.sha256(name.encode()).hexdigest()[:13].upper()


def build_study(slug: str = "pilot", *, instructions: int = 2, texts: dict | None = None, **fields: object) -> Study:
    study = Study.objects.create(slug=slug, name=f"Study {slug}", **fields)
    cands = [Candidate.objects.create(study=study, key=k, position=i) for i, k in enumerate(CANDIDATES)]
    for index in range(instructions):
        ins = Instruction.objects.create(
            study=study, index=index, text=f"Question {index}?", reference=f"Reference {index}."
        )
        for c in cands:
            text = (texts or {}).get((index, c.key), f"{c.key} answers question {index}.")
            Response.objects.create(instruction=ins, candidate=c, text=text)
    return study


def build_cobbler_study(slug: str = "cobbler") -> Study:
    """The 50 CoBBLEr instructions and 15 x 50 responses, straight from the shared data."""
    needs_shared()
    evalset = json.loads((COBBLER_DIR / "datasets" / "llm_preference_evalset.json").read_text())
    gens = json.loads((COBBLER_DIR / "n15_responses" / "full_n15_model_generations.json").read_text())
    study = Study.objects.create(slug=slug, name="CoBBLEr", source=Study.Source.COBBLER)
    cands = {k: Candidate.objects.create(study=study, key=k, position=i) for i, k in enumerate(gens)}
    instructions = Instruction.objects.bulk_create(
        Instruction(study=study, index=i, text=row["instruction"], reference=row["reference"])
        for i, row in enumerate(evalset)
    )
    Response.objects.bulk_create(
        Response(instruction=ins, candidate=cands[k], text=gens[k][ins.index]) for ins in instructions for k in gens
    )
    return study


def enter(client: Client, study: Study, **params: str) -> None:
    query = "&".join(f"{k}={v}" for k, v in (params or {"code": "w1"}).items())
    response = client.get(reverse("annotations:start", args=[study.slug]) + "?" + query)
    assert response.status_code == 302


def qualify(client: Client, study: Study) -> None:
    """Consent and pass the qualification with the gold answers."""
    client.post(reverse("annotations:consent", args=[study.slug]), {"agree": "yes"})
    items = QualificationItem.for_study(study)
    response = client.post(reverse("annotations:qualify", args=[study.slug]), {f"q{i.pk}": i.gold for i in items})
    assert response.status_code == 302, response.content[:500]


@pytest.fixture
def pilot(db) -> Study:
    study = build_study("pilot", overlap=2)
    services.generate_batches(study=study, condition="bandwagon", seed=7, pairs_per_batch=3)
    return study


@pytest.fixture
def worker(client, pilot) -> Client:
    enter(client, pilot, code="worker-1")
    qualify(client, pilot)
    return client


@pytest.fixture
def other_worker(pilot) -> Client:
    c = Client()
    enter(c, pilot, code="worker-2")
    qualify(c, pilot)
    return c


def current_task_url(client: Client, study: Study) -> str:
    response = client.get(reverse("annotations:work", args=[study.slug]))
    assert response.status_code == 302
    return response["Location"]
