"""The authorization matrix, generated from the URLconf: every route x every persona.

Each route must declare its audience through ``cobbler_site.foundation.access`` (``@allow`` or a DRF
permission class from there); a route without one fails ``test_every_route_declares_who_may_use_it``,
so a new view cannot ship without a rule. Each route is then called by six personas
(anonymous, a crowd worker with a study cookie, a logged-in non-staff user, another
researcher, the owner of the private study and its objects, a superuser) and the status
must be what the audience implies:

- RESEARCHER: anonymous and the worker are sent to the login page (pages) or get 401/403
  (API); the non-staff user gets 403; another researcher gets 404 for the owner's objects,
  and on list pages sees none of them; the owner and the superuser get through.
- WORKER: without the study's signed cookie a worker page is a 403 (the entry link with no
  id a 400); with it, the page answers.
- PUBLIC: everyone gets through. SIMULATOR: 401 without staff or a token (DEBUG is off here).

"Gets through" means not 401, 403 or 404, and never a server error. The Django admin
(``admin/``) is Django's own and guards itself (staff with model permissions).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from analysis.models import ReportRun
from analysis.report import build_report
from annotations import services
from annotations.models import Assignment, Participant, Response, ResponseRewrite
from cobbler_site.foundation.access import Audience, audience_of
from judging.models import GenerationJob, JudgeJob, RegisteredModel
from judging.template_services import save_template
from tests.annotations.conftest import build_study, enter, qualify

PERSONAS = ("anonymous", "worker", "non_staff", "other_researcher", "owner", "superuser")
PRIVATE_SLUG = "alice-private"
PRIVATE_JUDGE = "alice-secret-judge"


def _routes(patterns: list, prefix: str = "") -> list[tuple[str, URLPattern]]:
    out = []
    for p in patterns:
        if isinstance(p, URLResolver):
            if str(p.pattern) == "admin/":
                continue
            out += _routes(p.url_patterns, prefix + str(p.pattern))
        else:
            out.append((prefix + str(p.pattern), p))
    return out


ROUTES = _routes(get_resolver().url_patterns)


def test_every_route_declares_who_may_use_it():
    missing = [route for route, p in ROUTES if audience_of(p.callback) is None]
    assert not missing, f"routes without an access rule (cobbler_site.foundation.access): {missing}"
    assert len(ROUTES) >= 45  # the matrix below really covers the site


@pytest.fixture
def world(db):
    """A private study of alice's with one of everything a route can name."""
    users = get_user_model().objects
    owner = users.create_user("alice", password="pw-alice-123", is_staff=True)
    other = users.create_user("bob", password="pw-bob-123", is_staff=True)
    plain = users.create_user("carol", password="pw-carol-123")
    root = users.create_superuser("root", password="pw-root-123")
    study = build_study(PRIVATE_SLUG, overlap=2, created_by=owner)
    services.generate_batches(study=study, condition="bandwagon", seed=1, pairs_per_batch=2)
    worker = Client()
    enter(worker, study, code="matrix-worker")
    qualify(worker, study)
    assert worker.get(f"/s/{PRIVATE_SLUG}/work").status_code == 302  # claims a batch
    assignment = Assignment.objects.get(participant__in=Participant.objects.filter(study=study))
    judge = RegisteredModel.objects.create(
        name=PRIVATE_JUDGE, kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=owner
    )
    template, _ = save_template(
        owner=owner, name="alice-template", user="{instruction} {answer_a} {answer_b}", verdict_format="mt-bench"
    )
    job = JudgeJob.objects.create(
        study=study, judge=judge, conditions=["order"], created_by=owner, status=JudgeJob.Status.RUNNING
    )
    generation = GenerationJob.objects.create(
        study=study, generator=judge, candidate_key="alice-gen", created_by=owner, status=GenerationJob.Status.RUNNING
    )
    # A sentiment rewrite, so the rewrites page and its CSV have one of alice's texts to keep from bob.
    ResponseRewrite.objects.create(
        response=Response.objects.filter(instruction__study=study).first(),
        kind="sentiment",
        text=f"{PRIVATE_SLUG}: a cheerful rewrite",
        provenance={"model": PRIVATE_JUDGE, "prompt_version": "sentiment-v1", "job": generation.pk},
    )
    # A finished report, so the report and download routes have something to hand the owner.
    run = ReportRun.objects.create(
        study=study,
        profile="default",
        created_by=owner,
        status=ReportRun.Status.DONE,
        result=build_report(study=study, profile="default"),
        figures={},
    )
    clients = {"anonymous": Client(), "worker": worker}
    users = {"non_staff": plain, "other_researcher": other, "owner": owner, "superuser": root}
    for name, user in users.items():
        clients[name] = Client()
        clients[name].force_login(user)
    kwargs = {
        "slug": PRIVATE_SLUG,
        "assignment_id": assignment.pk,
        "position": 0,
        "job_id": job.pk,
        "judge_id": judge.pk,
        "run_id": run.pk,
        "action": "pause",
        "fmt": "csv",
        "generation_id": generation.pk,
    }
    return {
        "clients": clients,
        "users": users,
        "kwargs": kwargs,
        "job": job,
        "judge": judge,
        "assignment": assignment,
        "generation": generation,
        "template": template,
    }


def _url(route: str, pattern: URLPattern, world: dict) -> str:
    names = pattern.pattern.regex.groupindex
    values = dict(world["kwargs"])
    if "pk" in names:  # which object a bare pk names depends on the route
        values["pk"] = (
            world["judge"].pk
            if "judges/" in route and "judge-jobs" not in route
            else world["assignment"].pk
            if "assignments/" in route
            else world["generation"].pk
            if "generation-jobs/" in route
            else world["template"].pk
            if "prompt-templates/" in route
            else world["job"].pk
        )
    url = "/" + route.lstrip("^")
    for name in names:
        url = re.sub(rf"\(\?P<{name}>[^)]*\)|<(?:\w+:)?{name}>", str(values[name]), url)
    return url.replace("^", "").replace("$", "")


def _call(client: Client, url: str) -> int:
    status = client.get(url).status_code
    if status == 405:  # POST-only (actions, forms posted by htmx, the simulator)
        status = client.post(url, {}).status_code
    return status


def _through(status: int) -> bool:
    return status not in (401, 403, 404) and status < 500


def _expected(audience: Audience, persona: str, route: str, status: int) -> bool:
    is_api = route.startswith("api/")
    names_object = any(k in route for k in ("<", "(?P<"))
    if audience == Audience.PUBLIC:
        return _through(status)
    if audience == Audience.SIMULATOR:
        return status == 401 if persona in ("anonymous", "worker", "non_staff") else _through(status)
    if audience == Audience.WORKER:
        if persona != "worker":
            return status == (400 if route.endswith("/start") else 403)
        return _through(status)
    # RESEARCHER
    if persona in ("anonymous", "worker"):
        return status in (401, 403) if is_api else status == 302
    if persona == "non_staff":
        return status == 403
    if persona == "other_researcher":
        return status == 404 if names_object else _through(status)
    return _through(status)


def test_the_authorization_matrix(world):
    cells, wrong = 0, []
    for route, pattern in ROUTES:
        audience = audience_of(pattern.callback)
        url = _url(route, pattern, world)
        for persona in PERSONAS:
            client = world["clients"][persona]
            response_status = _call(client, url)
            if pattern.name == "logout" and persona in world["users"]:
                client.force_login(world["users"][persona])  # the logout route logged them out
            cells += 1
            if not _expected(audience, persona, route, response_status):
                wrong.append(f"{persona:>16} {response_status} {audience} {url}")
            if persona == "other_researcher" and response_status == 200:
                body = client.get(url).content.decode(errors="replace")
                if PRIVATE_SLUG in body or PRIVATE_JUDGE in body:
                    wrong.append(f"{persona:>16} sees alice's private objects on {url}")
    assert not wrong, "\n".join(wrong)
    assert cells == len(ROUTES) * len(PERSONAS)
    print(f"authorization matrix: {len(ROUTES)} routes x {len(PERSONAS)} personas = {cells} cells")


def test_the_study_upload_routes_are_walked_as_researcher_pages():
    """The generic-study upload (preview, confirm, example zip) is in the matrix above, for researchers only."""
    audiences = {p.name: audience_of(p.callback) for _route, p in ROUTES}
    assert audiences["study_import"] == audiences["study_import_confirm"] == Audience.RESEARCHER
    assert audiences["study_import_example"] == Audience.RESEARCHER  # the example zip, walked above too


def test_the_rewrites_routes_are_walked_as_researcher_pages():
    """A study's rewrites page and its CSV (sentiment, issue 24) are in the matrix above, for researchers only."""
    audiences = {route: audience_of(p.callback) for route, p in ROUTES if route.startswith("judging/rewrites/")}
    assert audiences == {
        "judging/rewrites/<slug:slug>/": Audience.RESEARCHER,
        "judging/rewrites/<slug:slug>/rewrites.csv": Audience.RESEARCHER,
    }
