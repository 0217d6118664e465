"""Server keys belong to someone: a JUDGE_KEY_* variable is used only by owners an admin granted
it to (users or groups), checked when a model is saved and again when its key is read, so
the attack of issue 23 (a researcher names the lab's key variable and points base_url at their
own server) sends nothing; grants work for a user and a group; `grant_key` refuses bad input."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import llm, services
from judging.models import KeyGrant, RegisteredModel
from tests.conftest import PROJECT_ROOT, _worker_env
from tests.judging.recording_endpoint import RecordingEndpoint, model_form

LAB_KEY = "sk-lab-" + "L" * 32
VARIABLE = "JUDGE_KEY_OPENAI"
REFUSAL = f"{VARIABLE} is not granted to alice; ask an admin: manage.py grant_key {VARIABLE} --user alice"
HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _lab_key(monkeypatch, settings) -> None:
    monkeypatch.setenv(VARIABLE, LAB_KEY)  # set by an admin in the server's environment
    settings.THROTTLE_CONNECTION_TEST = "100000/min"


@pytest.fixture
def attacker_server() -> Iterator[RecordingEndpoint]:
    server = RecordingEndpoint()
    yield server
    server.stop()


def _form(base_url: str, **extra: str) -> dict[str, str]:
    return model_form(name="stolen", base_url=base_url, **({"api_key_env": VARIABLE} | extra))


def _row_around_the_validators(owner, base_url: str) -> RegisteredModel:
    """What a bug, an old row or a raw SQL edit could leave: no validator ran."""
    return RegisteredModel.objects.create(
        name="raw",
        kind="openai",
        base_url=base_url,
        model="m",
        api_key_env=VARIABLE,
        owner=owner,
        transport="http",
        request_timeout=5.0,
    )


# --- the attack ------------------------------------------------------------------------------


def test_the_lab_key_cannot_be_saved_with_a_researchers_own_base_url(researcher_client, researcher, attacker_server):
    assert not researcher.is_superuser
    response = researcher_client.post("/judging/judges/new/", _form(attacker_server.url()))
    assert response.status_code == 422 and REFUSAL in response.content.decode()
    assert not RegisteredModel.objects.filter(name="stolen").exists()
    assert attacker_server.requests == []


def test_the_connection_test_sends_no_request_with_an_ungranted_key(researcher_client, attacker_server):
    response = researcher_client.post("/judging/judges/new/test/", _form(attacker_server.url()), headers=HTMX)
    assert response.status_code == 422 and REFUSAL in response.content.decode()
    assert attacker_server.requests == []  # no request, so no Authorization header anywhere


def test_a_row_written_around_the_validators_still_cannot_send_the_key(
    researcher_client, researcher, attacker_server, study
):
    judge = _row_around_the_validators(researcher, attacker_server.url())
    tested = researcher_client.post(f"/judging/judges/{judge.pk}/test/", headers=HTMX)
    assert tested.status_code == 200 and REFUSAL in tested.content.decode()
    # The runner's path: the snapshot carries the refusal, and complete() sends nothing.
    snapshot = llm.ModelSnapshot.of(judge)
    assert snapshot.api_key == "" and snapshot.refusal == REFUSAL
    with pytest.raises(llm.PermanentError, match="is not granted to alice"):
        llm.complete(snapshot, [{"role": "user", "content": "hi"}])
    # Starting a job is refused up front (form, API and CLI all go through this service).
    with pytest.raises(services.JobError, match="is not granted to alice"):
        services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    assert attacker_server.requests == []
    assert LAB_KEY not in tested.content.decode()


def test_the_api_refuses_to_start_a_job_with_an_ungranted_key(researcher, attacker_server, study):
    judge = _row_around_the_validators(researcher, attacker_server.url())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    response = client.post(
        "/api/judge-jobs/start/", {"study": study.slug, "judge": judge.name, "conditions": ["order"]}, format="json"
    )
    # 422 naming the field, like the model form's refusal (it was a 400 {detail}).
    assert response.status_code == 422 and response.json() == {"judge": [REFUSAL]}
    assert attacker_server.requests == []


def test_the_api_refuses_a_model_that_may_not_send_with_422_naming_the_field(researcher, attacker_server, study):
    judge = _row_around_the_validators(researcher, attacker_server.url())
    judge.use_as_generator = True
    judge.save(update_fields=["use_as_generator"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    generation = client.post("/api/generation-jobs/", {"study": study.slug, "model": judge.name}, format="json")
    assert generation.status_code == 422 and generation.json() == {"model": [REFUSAL]}
    # Generation settings outside the allowlist (a row written around the validators) likewise.
    RegisteredModel.objects.filter(pk=judge.pk).update(api_key_env="", generation={"stream": True})
    started = client.post(
        "/api/judge-jobs/start/", {"study": study.slug, "judge": judge.name, "conditions": ["order"]}, format="json"
    )
    assert started.status_code == 422 and list(started.json()) == ["judge"]
    assert "stream" in started.json()["judge"][0]
    assert attacker_server.requests == []


def test_revoking_a_grant_stops_the_next_request(researcher, attacker_server):
    call_command("grant_key", VARIABLE, "--user", "alice")
    judge = _row_around_the_validators(researcher, attacker_server.url())
    llm.complete(llm.ModelSnapshot.of(judge), [{"role": "user", "content": "hi"}])
    call_command("grant_key", VARIABLE, "--user", "alice", "--revoke")
    judge.refresh_from_db()
    with pytest.raises(llm.PermanentError, match="is not granted"):
        llm.complete(llm.ModelSnapshot.of(judge), [{"role": "user", "content": "hi"}])
    assert attacker_server.authorizations() == [f"Bearer {LAB_KEY}"]  # only the granted call


# --- grants ----------------------------------------------------------------------------------


def test_a_grant_to_the_user_lets_the_key_go_to_their_endpoint(researcher_client, attacker_server):
    call_command("grant_key", VARIABLE, "--user", "alice")
    tested = researcher_client.post("/judging/judges/new/test/", _form(attacker_server.url()), headers=HTMX)
    assert tested.status_code == 200 and attacker_server.authorizations() == [f"Bearer {LAB_KEY}"]
    saved = researcher_client.post("/judging/judges/new/", _form(attacker_server.url()))
    assert saved.status_code == 302 and RegisteredModel.objects.get(name="stolen").api_key_env == VARIABLE
    assert LAB_KEY not in tested.content.decode()


def test_a_grant_to_a_group_covers_its_members(client, other_researcher, attacker_server):
    group = Group.objects.create(name="lab")
    other_researcher.groups.add(group)
    client.force_login(other_researcher)
    refused = client.post("/judging/judges/new/", _form(attacker_server.url()))
    assert refused.status_code == 422 and f"{VARIABLE} is not granted to bob" in refused.content.decode()
    call_command("grant_key", VARIABLE, "--group", "lab")
    assert client.post("/judging/judges/new/", _form(attacker_server.url())).status_code == 302
    judge = RegisteredModel.objects.get(name="stolen")
    assert judge.owner == other_researcher and llm.ModelSnapshot.of(judge).api_key == LAB_KEY


def test_a_grant_is_per_variable(researcher_client, attacker_server, monkeypatch):
    call_command("grant_key", "JUDGE_KEY_OTHER", "--user", "alice")
    response = researcher_client.post("/judging/judges/new/", _form(attacker_server.url()))
    assert response.status_code == 422 and REFUSAL in response.content.decode()


def test_superusers_and_owner_less_models_may_use_any_variable(django_user_model, attacker_server):
    root = django_user_model.objects.create_superuser("root", "r@x.org", "root-password")
    owned = services.create_judge(
        name="roots", base_url=attacker_server.url(), model="m", api_key_env=VARIABLE, owner=root
    )
    public = services.create_judge(name="public", base_url=attacker_server.url(), model="m", api_key_env=VARIABLE)
    assert llm.ModelSnapshot.of(owned).api_key == LAB_KEY and llm.ModelSnapshot.of(public).api_key == LAB_KEY


def test_a_researchers_own_typed_key_needs_no_grant(researcher_client, attacker_server):
    own = "sk-own-" + "o" * 24
    form = _form(attacker_server.url(), api_key_env="", api_key=own)
    assert researcher_client.post("/judging/judges/new/", form).status_code == 302
    judge = RegisteredModel.objects.get(name="stolen")
    assert own not in judge.api_key_encrypted and judge.get_api_key() == own  # encrypted at rest
    page = researcher_client.get(f"/judging/judges/{judge.pk}/edit/").content.decode()
    assert own not in page and judge.api_key_encrypted not in page


# --- the commands ----------------------------------------------------------------------------


def test_create_judge_refuses_an_ungranted_owner_in_one_line(db, researcher, attacker_server):
    with pytest.raises(CommandError) as refused:
        call_command(
            "create_judge", "cli", "--base-url", attacker_server.url(), "--model", "m",
            "--api-key-env", VARIABLE, "--owner", "alice",
        )  # fmt: skip
    assert str(refused.value) == REFUSAL and not RegisteredModel.objects.filter(name="cli").exists()


def test_grant_key_grants_lists_and_revokes(db, researcher, other_researcher, capsys):
    Group.objects.create(name="lab")
    call_command("grant_key", VARIABLE, "--user", "alice", "--user", "bob", "--group", "lab")
    assert capsys.readouterr().out.strip() == f"{VARIABLE} granted to user alice, user bob, group lab"
    grant = KeyGrant.objects.get(variable=VARIABLE)
    assert {u.username for u in grant.users.all()} == {"alice", "bob"} and grant.groups.get().name == "lab"
    call_command("grant_key", "--list")
    assert capsys.readouterr().out.strip() == f"{VARIABLE}\tusers alice,bob\tgroups lab"
    call_command("grant_key", VARIABLE, "--user", "bob", "--revoke")
    assert [u.username for u in grant.users.all()] == ["alice"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["PATH", "--user", "alice"], "must start with JUDGE_KEY_"),
        ([VARIABLE, "--user", "nobody"], "no user called 'nobody'"),
        ([VARIABLE, "--user", "alice", "--group", "nogroup"], "no group called 'nogroup'"),
        ([VARIABLE], "say whom"),
        ([], "name the key variable"),
    ],
)
def test_grant_key_refuses_bad_input_and_changes_nothing(db, researcher, args, error):
    with pytest.raises(CommandError, match=error) as refused:
        call_command("grant_key", *args)
    assert "\n" not in str(refused.value)
    assert not KeyGrant.objects.exists()


def test_grant_key_exits_non_zero_with_one_line(transactional_db, researcher):
    # transactional_db: the child process writes to the test database (see test_judge_secrets).
    result = subprocess.run(
        [sys.executable, "manage.py", "grant_key", VARIABLE, "--user", "nobody"],
        cwd=PROJECT_ROOT,
        env=_worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and result.stderr.strip().splitlines() == ["CommandError: no user called 'nobody'"]
    assert not KeyGrant.objects.exists()
