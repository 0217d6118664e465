"""The API contract, checked by schemathesis against a live server with a staff token.

The OpenAPI schema is loaded from the running server (/api/schema/), and for every operation
schemathesis generates requests from it, in two rounds: free path parameters (mostly unknown
objects: the 404s) and the ids of a seeded study, judge, job, assignment and report run (the
200s and the domain errors). Every schemathesis check runs, on valid (positive) and invalid
(negative) requests: no server error; a documented status code, content type, body and
headers; what the schema calls invalid is refused and what it calls valid is accepted (or
refused only as the operation documents for the state of things: ``_config``); auth is not
ignored. Bounded: 30 valid and 15 invalid examples per operation and round (about 2,000
requests: some two and a half minutes on PostgreSQL), no shrinking, no example database.
``SCHEMATHESIS_STRICT=0`` runs the lighter check of earlier versions (server errors and the
documented responses, 12 valid examples) for a quick local look.

Where the schema and the views agree by construction: cobbler_site/foundation/api_input.py.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token

from analysis.models import ReportRun
from analysis.report import build_report
from annotations import services
from annotations.models import Assignment
from judging.models import GenerationJob, JudgeJob, RegisteredModel
from tests.annotations.conftest import build_study, enter, qualify

if TYPE_CHECKING:
    from schemathesis.config import SchemathesisConfig

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STRICT = os.environ.get("SCHEMATHESIS_STRICT", "1") != "0"
# Examples per operation and round: the loop's depth by default (about 1,200 requests, 40 s);
# SCHEMATHESIS_DEPTH=full doubles it, as CI's PostgreSQL run does.
DEEP = os.environ.get("SCHEMATHESIS_DEPTH") == "full"
MAX_EXAMPLES = (
    ({"positive": 30, "negative": 15} if DEEP else {"positive": 15, "negative": 8}) if STRICT else {"positive": 12}
)
STRICT_ONLY_CHECKS = {
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
    "response_headers_conformance",
}


@pytest.fixture
def seeded(live_server):
    """A staff user with a token, and one of every object an API path can name."""
    user = get_user_model().objects.create_user("contract", password="pw-contract-123", is_staff=True)
    token = Token.objects.create(user=user)
    study = build_study("contract-study", overlap=2, created_by=user)
    services.generate_batches(study=study, condition="bandwagon", seed=1, pairs_per_batch=2)
    worker = Client()
    enter(worker, study, code="contract-worker")
    qualify(worker, study)
    assert worker.get(f"/s/{study.slug}/work").status_code == 302  # claims a batch
    assignment = Assignment.objects.get(batch__study=study)
    judge = RegisteredModel.objects.create(
        name="contract-judge", kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=user
    )
    job = JudgeJob.objects.create(
        study=study, judge=judge, conditions=["order"], created_by=user, status=JudgeJob.Status.PAUSED
    )
    generation = GenerationJob.objects.create(
        study=study, generator=judge, candidate_key="contract-gen", created_by=user, status=GenerationJob.Status.PAUSED
    )
    run = ReportRun.objects.create(
        study=study,
        profile="default",
        created_by=user,
        status=ReportRun.Status.DONE,
        result=build_report(study=study, profile="default"),
        figures={},
    )
    return {
        "token": token.key,
        "study": study,
        "assignment": assignment,
        "judge": judge,
        "job": job,
        "run": run,
        "generation": generation,
    }


def _known_ids(path: str, seeded: dict) -> dict[str, object]:
    values: dict[str, object] = {}
    if "{slug}" in path:
        values["slug"] = seeded["study"].slug
    if "{run_id}" in path:
        values["run_id"] = seeded["run"].pk
    if "{id}" in path:
        values["id"] = (
            seeded["judge"].pk
            if path.startswith("/api/judges/")
            else seeded["assignment"].pk
            if path.startswith("/api/assignments/")
            else seeded["generation"].pk
            if path.startswith("/api/generation-jobs/")
            else seeded["job"].pk
        )
    return values


def _config(url: str, headers: dict[str, str]) -> SchemathesisConfig:
    """Valid input may also get the refusals an operation documents for the state of things.

    A 422 is the API's answer to a well-formed request that the data refuses (a taken slug,
    reviewing unsubmitted work, a job that cannot start); /api/token/ answers wrong credentials
    with DRF's 400. No schema can rule those out, so positive_data_acceptance is told to expect
    them there, and only there (schemathesis does the same for a schema's own tokenUrl).
    """
    from schemathesis.config import PositiveDataAcceptanceConfig, SchemathesisConfig

    raw = httpx.get(url, headers=headers).json()
    with_422 = [o["operationId"] for ops in raw["paths"].values() for o in ops.values() if "422" in o["responses"]]
    accepted = PositiveDataAcceptanceConfig().expected_statuses
    operations = [
        {
            "include-operation-id": with_422,
            "checks": {"positive_data_acceptance": {"expected-statuses": [*accepted, 422]}},
        },
        {
            "include-operation-id": "token_create",
            "checks": {"positive_data_acceptance": {"expected-statuses": [*accepted, 400]}},
        },
    ]
    return SchemathesisConfig.from_dict({"operations": operations})


def test_the_api_keeps_its_documented_contract(live_server, seeded):
    import schemathesis
    from schemathesis.checks import CHECKS, load_all_checks

    load_all_checks()
    # Server errors, documented statuses, content types and bodies; with STRICT every check.
    checks = [c for c in CHECKS.get_all() if STRICT or c.__name__ not in STRICT_ONLY_CHECKS]
    headers = {"Authorization": f"Token {seeded['token']}"}
    url = f"{live_server.url}/api/schema/?format=json"
    schema = schemathesis.openapi.from_url(url, headers=headers, config=_config(url, headers))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    examples, failures, statuses, details, slowest = 0, [], {}, {}, (0.0, "")
    for operation in operations:
        rounds = [{}]
        known = _known_ids(operation.path, seeded)
        if known:
            rounds.append(known)
        modes = [m for m in schemathesis.GenerationMode if m.value in MAX_EXAMPLES]
        for path_parameters, mode in [(p, m) for p in rounds for m in modes]:
            strategy = operation.as_strategy(mode, path_parameters=path_parameters or None)

            @settings(
                max_examples=MAX_EXAMPLES[mode.value],
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def run(case) -> None:  # a schemathesis Case
                nonlocal examples, slowest
                examples += 1
                response = case.call(base_url=live_server.url, headers=headers)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                slowest = max(slowest, (response.elapsed, case.operation.label))
                try:
                    case.validate_response(response, checks=checks, headers=headers)
                except (Exception, BaseExceptionGroup) as exc:  # schemathesis' FailureGroup; all collected
                    found = getattr(exc, "exceptions", [exc])
                    titles = sorted({getattr(f, "title", type(f).__name__) for f in found})
                    failures.append(f"{case.operation.label} -> {response.status_code}: {', '.join(titles)}")
                    details.setdefault(failures[-1], str(exc)[:1500])

            try:
                run()
            except Unsatisfiable:  # an operation with nothing to get wrong has no negative cases
                assert mode == schemathesis.GenerationMode.NEGATIVE, operation.label
    print(
        f"schemathesis: {len(operations)} operations, {examples} examples, {len(failures)} failures, "
        f"statuses {dict(sorted(statuses.items()))}, slowest {slowest[0]:.2f} s ({slowest[1]})"
    )
    assert failures == [], "\n\n".join(f"{k} (x{failures.count(k)})\n{v}" for k, v in details.items())
    assert statuses.get(200, 0) and statuses.get(404, 0)  # both rounds reached the server's logic


@pytest.mark.django_db
def test_the_api_docs_are_for_researchers_and_keep_the_csp(client, researcher):
    assert client.get("/api/docs/").status_code in (401, 403)
    assert client.get("/api/redoc/").status_code in (401, 403)
    client.force_login(researcher)
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html and "cdn." not in html
    assert all("src=" in tag for tag in re.findall(r"<script\b[^>]*>", html))  # no inline script
    assert "script-src 'self'" in page["Content-Security-Policy"]
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()
    redoc = client.get("/api/redoc/")
    assert redoc.status_code == 200
    assert "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js" in redoc.content.decode()
    assert "script-src 'self'" in redoc["Content-Security-Policy"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_api_docs_render_under_the_csp(live_server, browser, django_user_model):
    django_user_model.objects.create_user("docs", password="docs-password-1", is_staff=True)
    page = browser.new_page()
    page.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation',"
        " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "docs")
    page.fill("input[name=password]", "docs-password-1")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock", timeout=20000)  # Swagger UI drew the operations
    assert page.evaluate("window.__csp") == []
    page.goto(f"{live_server.url}/api/redoc/")
    page.wait_for_selector("text=/api/studies/", timeout=20000)  # Redoc drew the operations
    # Redoc's "powered by" footer links its logo from its CDN; the CSP blocks it, harmlessly.
    assert [v for v in page.evaluate("window.__csp") if "cdn.redoc.ly" not in v] == []
