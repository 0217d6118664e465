"""Judge secrets: key variables need the JUDGE_KEY_ prefix, a new base_url drops the key,
private judges stay with their owner, and base URLs are checked against JUDGE_ALLOWED_HOSTS."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import endpoints, llm, services
from judging.models import RegisteredModel
from tests.conftest import PROJECT_ROOT, _worker_env

SECRET = "sk-test-" + "s" * 24
FORM = {
    "kind": "openai",
    "model": "gpt-4o",
    "generation": "{}",
    "max_concurrency": 8,
    "requests_per_minute": 600,
    "price_in_per_1k": "0",
    "price_out_per_1k": "0",
    "request_timeout": 60,
    "transport": "openai",
}


# --- the key variable -------------------------------------------------------------------


def test_the_key_variable_must_carry_the_prefix(db, monkeypatch):
    with pytest.raises(ValidationError, match="must start with JUDGE_KEY_"):
        services.create_judge(name="leak", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="PATH")
    judge = services.create_judge(name="ok", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="JUDGE_KEY_OK")
    monkeypatch.setenv("JUDGE_KEY_OK", SECRET)
    assert judge.get_api_key() == SECRET and judge.has_api_key
    # A row written around the validators still never reads another variable.
    RegisteredModel.objects.filter(pk=judge.pk).update(api_key_env="PATH")
    judge.refresh_from_db()
    assert judge.get_api_key() == "" and not judge.has_api_key
    assert llm.ModelSnapshot.of(judge).api_key == ""


def test_the_prefix_is_a_setting(db, settings, monkeypatch):
    settings.JUDGE_KEY_ENV_PREFIX = "LAB_KEY_"
    monkeypatch.setenv("LAB_KEY_VLLM", SECRET)
    judge = services.create_judge(name="lab", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="LAB_KEY_VLLM")
    assert judge.get_api_key() == SECRET
    with pytest.raises(ValidationError, match="LAB_KEY_"):
        services.create_judge(name="old", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="JUDGE_KEY_X")


def test_create_judge_refuses_other_variables_in_one_line(transactional_db):
    # transactional_db, not db: the child's write transaction must not wait on one this test holds
    # open (SQLite's BEGIN IMMEDIATE takes the one write lock, so it would wait and fail "locked").
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "create_judge",
            "gpt",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "gpt-4o",
            "--api-key-env",
            "OPENAI_API_KEY",
        ],
        cwd=PROJECT_ROOT,
        env=_worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "JUDGE_KEY_" in lines[0] and "Traceback" not in result.stderr


def test_create_judge_with_a_judge_key_variable_and_an_owner(db, researcher, capsys):
    # A server key variable needs a grant for the owner (tests/judging/test_key_grants.py).
    call_command("grant_key", "JUDGE_KEY_OPENAI", "--user", "alice")
    call_command(
        "create_judge",
        "mine",
        "--base-url",
        "https://8.8.8.8/v1",
        "--model",
        "m",
        "--api-key-env",
        "JUDGE_KEY_OPENAI",
        "--owner",
        "alice",
    )
    judge = RegisteredModel.objects.get(name="mine")
    assert judge.owner == researcher and judge.api_key_env == "JUDGE_KEY_OPENAI" and not judge.is_shared


def test_the_form_refuses_other_variables(researcher_client):
    response = researcher_client.post(
        "/judging/judges/new/",
        {**FORM, "name": "leak", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "DATABASE_URL"},
    )
    assert response.status_code == 422 and b"JUDGE_KEY_" in response.content
    assert not RegisteredModel.objects.filter(name="leak").exists()


# --- a new base_url drops the key -------------------------------------------------------


def test_changing_the_base_url_drops_the_stored_key(db, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY_A", SECRET)
    judge = services.create_judge(name="k", base_url="http://127.0.0.1:9/v1", model="m", api_key=SECRET)
    judge = RegisteredModel.objects.get(pk=judge.pk)
    judge.model = "m2"
    judge.save()
    assert RegisteredModel.objects.get(pk=judge.pk).get_api_key() == SECRET  # other edits keep it
    judge.base_url = "http://127.0.0.1:10/v1"
    judge.save()
    judge = RegisteredModel.objects.get(pk=judge.pk)
    assert judge.api_key_encrypted == "" and judge.get_api_key() == ""
    # The key variable is dropped too, unless the same change names a new one.
    judge.api_key_env = "JUDGE_KEY_A"
    judge.save()
    judge = RegisteredModel.objects.get(pk=judge.pk)
    judge.base_url = "http://127.0.0.1:11/v1"
    judge.save(update_fields=["base_url"])
    assert RegisteredModel.objects.get(pk=judge.pk).api_key_env == ""
    judge = RegisteredModel.objects.get(pk=judge.pk)
    judge.base_url = "http://127.0.0.1:12/v1"
    judge.set_api_key("sk-new")
    judge.save()
    assert RegisteredModel.objects.get(pk=judge.pk).get_api_key() == "sk-new"


def test_the_form_drops_the_key_with_a_new_base_url(researcher_client):
    researcher_client.post(
        "/judging/judges/new/", {**FORM, "name": "gpt", "base_url": "http://127.0.0.1:9/v1", "api_key": SECRET}
    )
    judge = RegisteredModel.objects.get(name="gpt")
    assert judge.get_api_key() == SECRET
    response = researcher_client.post(
        f"/judging/judges/{judge.pk}/edit/", {**FORM, "name": "gpt", "base_url": "http://127.0.0.1:8/v1"}
    )
    assert response.status_code == 302
    judge.refresh_from_db()
    assert judge.base_url == "http://127.0.0.1:8/v1" and judge.get_api_key() == ""


# --- ownership and sharing ---------------------------------------------------------------


@pytest.fixture
def judges(db, researcher, other_researcher):
    public = RegisteredModel.objects.create(name="public", kind="baseline", baseline="longer")
    private = RegisteredModel.objects.create(
        name="bobs", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", owner=other_researcher
    )
    private.set_api_key(SECRET)
    private.save()
    shared_all = RegisteredModel.objects.create(
        name="bobs-shared",
        kind="openai",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        owner=other_researcher,
        is_shared=True,
    )
    shared_alice = RegisteredModel.objects.create(
        name="bobs-for-alice", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", owner=other_researcher
    )
    shared_alice.shared_with.add(researcher)
    return {"public": public, "private": private, "shared_all": shared_all, "shared_alice": shared_alice}


def test_usable_by_is_the_one_rule(judges, researcher, other_researcher, django_user_model):
    from django.contrib.auth.models import AnonymousUser

    names = lambda user: set(RegisteredModel.objects.usable_by(user).values_list("name", flat=True))  # noqa: E731
    assert names(researcher) == {"public", "bobs-shared", "bobs-for-alice"}
    assert names(other_researcher) == {"public", "bobs", "bobs-shared", "bobs-for-alice"}
    admin = django_user_model.objects.create_superuser("root", "r@x.org", "root-password")
    assert names(admin) == {"public", "bobs", "bobs-shared", "bobs-for-alice"}
    crowd = django_user_model.objects.create_user("carol", password="carol-password")
    assert names(crowd) == set() and names(AnonymousUser()) == set() and names(None) == set()
    assert set(RegisteredModel.objects.editable_by(researcher)) == set()
    assert set(RegisteredModel.objects.editable_by(other_researcher)) == {
        judges["private"],
        judges["shared_all"],
        judges["shared_alice"],
    }
    assert RegisteredModel.objects.usable_by(researcher).count() == 3  # no duplicate rows from the M2M


def test_pages_hide_and_protect_other_peoples_judges(judges, researcher_client):
    listing = researcher_client.get("/judging/judges/").content.decode()
    assert "bobs-shared" in listing and "bobs-for-alice" in listing and ">bobs<" not in listing
    assert researcher_client.get(f"/judging/judges/{judges['private'].pk}/edit/").status_code == 404
    # Visible (shared or public) is not editable: only the owner or a superuser edits.
    for key in ("shared_all", "shared_alice", "public"):
        assert researcher_client.get(f"/judging/judges/{judges[key].pk}/edit/").status_code == 403
        response = researcher_client.post(
            f"/judging/judges/{judges[key].pk}/edit/", {**FORM, "name": "x", "base_url": "http://127.0.0.1:1/v1"}
        )
        assert response.status_code == 403
    judges["private"].refresh_from_db()
    assert judges["private"].get_api_key() == SECRET


def test_a_new_judge_is_private_to_its_creator_until_shared(researcher_client, researcher, other_researcher):
    researcher_client.post("/judging/judges/new/", {**FORM, "name": "mine", "base_url": "http://127.0.0.1:9/v1"})
    judge = RegisteredModel.objects.get(name="mine")
    assert judge.owner == researcher and not RegisteredModel.objects.usable_by(other_researcher).filter(pk=judge.pk)
    researcher_client.post(
        f"/judging/judges/{judge.pk}/edit/",
        {**FORM, "name": "mine", "base_url": "http://127.0.0.1:9/v1", "shared_with": [other_researcher.pk]},
    )
    assert RegisteredModel.objects.usable_by(other_researcher).filter(pk=judge.pk).exists()


def test_jobs_only_use_judges_the_user_may_use(judges, researcher_client, study):
    page = researcher_client.get("/judging/jobs/").content.decode()
    assert "bobs-shared" in page and f'value="{judges["private"].pk}"' not in page
    response = researcher_client.post(
        "/judging/jobs/",
        {
            "study": study.pk,
            "judge": judges["private"].pk,
            "conditions": ["order"],
            "pair_set": "all",
            "parser": "robust",
            "prompt_version": "v1",
            "seed": 0,
        },
    )
    assert response.status_code == 422 and not judges["private"].jobs.exists()


def test_the_api_hides_and_refuses_other_peoples_judges(judges, researcher, study):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    names = {j["name"] for j in client.get("/api/judges/").json()["results"]}
    assert names == {"public", "bobs-shared", "bobs-for-alice"}
    assert client.get(f"/api/judges/{judges['private'].pk}/").status_code == 404
    response = client.post(
        "/api/judge-jobs/start/", {"study": study.slug, "judge": "bobs", "conditions": ["order"]}, format="json"
    )
    assert response.status_code == 404 and not judges["private"].jobs.exists()
    body = client.get(f"/api/judges/{judges['shared_all'].pk}/").json()
    assert body["owner"] == "bob" and body["is_shared"] is True


# --- where a judge may send its requests ---------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed", "ok"),
    [
        ("https://8.8.8.8/v1", ["public-https"], True),
        ("http://8.8.8.8/v1", ["public-https"], False),  # public, but not https
        ("https://10.0.0.5/v1", ["public-https"], False),  # private
        ("http://169.254.169.254/latest", ["public-https", "loopback"], False),  # cloud metadata
        ("http://127.0.0.1:9100/v1", ["public-https"], False),  # loopback needs DEBUG or "loopback"
        ("http://127.0.0.1:9100/v1", ["public-https", "loopback"], True),
        ("http://[::1]:9100/v1", ["loopback"], True),
        ("http://10.0.0.5:8000/v1", ["public-https", "10.0.0.5:8000"], True),  # a lab's vLLM
        ("http://10.0.0.5:8001/v1", ["public-https", "10.0.0.5:8000"], False),  # another port
        ("https://10.0.0.5:8000/v1", ["http://10.0.0.5:8000"], False),  # scheme pinned
        ("http://10.0.0.7:8000/v1", ["10.0.0.0/24"], True),
        ("http://10.0.1.7:8000/v1", ["10.0.0.0/24"], False),
        ("http://gpu3.lab.example/v1", ["*.lab.example"], True),  # named hosts need no lookup
        ("https://user:pw@8.8.8.8/v1", ["public-https"], False),  # credentials belong in the key
        ("ftp://8.8.8.8/v1", ["public-https"], False),
    ],
)
def test_base_urls_are_checked_against_the_allow_list(url, allowed, ok):
    if ok:
        endpoints.check_base_url(url, allowed)
    else:
        with pytest.raises(ValueError):
            endpoints.check_base_url(url, allowed)


def test_the_setting_guards_the_form_and_every_call(db, settings, researcher_client):
    settings.JUDGE_ALLOWED_HOSTS = ["public-https"]  # production: DEBUG off, nothing listed
    response = researcher_client.post(
        "/judging/judges/new/", {**FORM, "name": "inside", "base_url": "http://10.0.0.5:8000/v1"}
    )
    assert response.status_code == 422 and b"JUDGE_ALLOWED_HOSTS" in response.content
    with pytest.raises(ValidationError, match="JUDGE_ALLOWED_HOSTS"):
        services.create_judge(name="loop", base_url="http://127.0.0.1:9/v1", model="m")
    # A row that points inside anyway (written around the validators) is never called.
    judge = RegisteredModel.objects.create(
        name="sneaky", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", api_key_encrypted=""
    )
    judge.set_api_key(SECRET)
    with pytest.raises(llm.PermanentError, match="not allowed") as exc:
        llm.complete(llm.ModelSnapshot.of(judge), [{"role": "user", "content": "hi"}])
    assert SECRET not in str(exc.value)
