"""The model form (presets, simulator help, roles, limits, prices, messages), delete, the
`create_judge` registry flags, and the job page's last error with its hint."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from dataclasses import fields
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from judging import presets, services
from judging.models import JudgeJob, RegisteredModel
from judging.simulator.behaviour import Knobs
from tests.conftest import PROJECT_ROOT, _worker_env

FORM = {
    "kind": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "generation": "{}",
    "max_concurrency": 8,
    "requests_per_minute": 600,
    "price_in_per_1k": "0",
    "price_out_per_1k": "0",
    "request_timeout": 60,
    "transport": "openai",
    "roles_shown": "True",
    "use_as_judge": "on",
    "use_as_generator": "on",
}


def _messages(response) -> list[str]:
    return [
        html.unescape(m)
        for m in re.findall(r'<p class="message[^"]*" role="status">(.*?)</p>', response.content.decode())
    ]


# --- presets and the simulator help ------------------------------------------------------


def test_the_form_offers_every_preset_with_its_fields(researcher_client, settings):
    settings.SIMULATOR_BASE_URL = "http://127.0.0.1:8123/sim/v1"
    page = researcher_client.get("/judging/judges/new/").content.decode()
    shown = {
        m.group(1): json.loads(html.unescape(m.group(2)))
        for m in re.finditer(r'data-preset="(\w+)"[^>]*?data-fields="([^"]*)"', page, re.S)
    }
    assert set(shown) == {"openai", "vllm", "ollama", "llamacpp", "simulator"}
    assert shown["openai"]["base_url"] == "https://api.openai.com/v1" and shown["openai"]["transport"] == "openai"
    assert shown["openai"]["api_key_env"] == "JUDGE_KEY_OPENAI"
    assert shown["vllm"]["base_url"] == "http://localhost:8000/v1" and shown["vllm"]["transport"] == "http"
    assert shown["ollama"]["base_url"] == "http://localhost:11434/v1"
    assert shown["llamacpp"]["base_url"] == "http://localhost:8080/v1"
    assert shown["simulator"]["base_url"] == "http://127.0.0.1:8123/sim/v1"  # the setting, not a copy
    assert shown["simulator"]["model"].startswith("sim:")
    for preset in presets.presets():
        assert f'data-note="{html.escape(preset.note, quote=True)}"' in page or preset.note[:30] in html.unescape(page)
        assert {"max_concurrency", "requests_per_minute", "tokens_per_minute"} <= set(shown[preset.key])
    assert 'src="/static/judging/models.js"' in page and "<script>" not in page  # CSP: no inline script


def test_every_simulator_knob_is_explained_from_the_dataclass(researcher_client):
    page = researcher_client.get("/judging/judges/new/").content.decode()
    rows = re.findall(
        r"<tr><td><code>(\w+)</code></td><td>(\w+)</td><td><code>([^<]*)</code></td><td>([^<]*)</td>", page
    )
    assert [r[0] for r in rows] == [f.name for f in fields(Knobs)]
    for (name, kind, default, meaning), f in zip(rows, fields(Knobs), strict=True):
        assert kind == str(f.type) and html.unescape(default) == str(f.default), name
        assert meaning.strip(), f"knob {name} has no meaning"
    assert "sim:knob=value,knob=value" in page


def test_the_simulator_preset_model_parses():
    from judging.simulator.behaviour import parse_knobs

    sim = next(p for p in presets.presets() if p.key == "simulator")
    assert parse_knobs(sim.fields()["model"]) == Knobs(seed=1)
    assert parse_knobs(presets.simulator_example()).order_first == 0.3


# --- create, edit, delete ----------------------------------------------------------------


def test_create_with_roles_limits_and_batch_prices(researcher_client, researcher):
    response = researcher_client.post(
        "/judging/judges/new/",
        {
            **FORM,
            "name": "gen",
            "use_as_judge": "",
            "tokens_per_minute": "90000",
            "batch_price_in_per_1k": "0.001",
            "batch_price_out_per_1k": "",
        },
        follow=True,
    )
    judge = RegisteredModel.objects.get(name="gen")
    assert (judge.use_as_judge, judge.use_as_generator) == (False, True)
    assert judge.tokens_per_minute == 90000 and judge.batch_price_in_per_1k == Decimal("0.001")
    assert judge.batch_price_out_per_1k is None and judge.owner == researcher
    assert _messages(response) == ["Model gen registered as answer generator."]
    assert "generator" in response.content.decode()


def test_edit_says_saved(researcher_client, researcher):
    created = researcher_client.post("/judging/judges/new/", {**FORM, "name": "both"}, follow=True)
    assert _messages(created) == ["Model both registered as judge and answer generator."]
    judge = RegisteredModel.objects.get(name="both")
    assert (judge.use_as_judge, judge.use_as_generator, judge.tokens_per_minute) == (True, True, 0)
    response = researcher_client.post(
        f"/judging/judges/{judge.pk}/edit/", {**FORM, "name": "both", "use_as_generator": ""}, follow=True
    )
    assert _messages(response) == ["Model both saved as judge."]
    assert _messages(researcher_client.get("/judging/judges/")) == []  # shown once


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"use_as_judge": "", "use_as_generator": ""}, "Choose at least one role"),
        ({"kind": "baseline", "baseline": "longer"}, "Only an endpoint model can write answers"),
        ({"tokens_per_minute": "-5"}, "greater than or equal to 0"),
        ({"batch_price_in_per_1k": "cheap"}, "Enter a number"),
    ],
)
def test_bad_values_are_refused_and_nothing_is_saved(researcher_client, extra, error):
    response = researcher_client.post("/judging/judges/new/", {**FORM, "name": "bad", **extra})
    assert response.status_code == 422 and error in html.unescape(response.content.decode())
    assert not RegisteredModel.objects.filter(name="bad").exists()


def test_a_taken_name_does_not_reveal_another_researchers_private_model(researcher_client, other_researcher):
    # Issue 23 LOW: "Judge with this Name already exists." confirmed that a private model exists.
    RegisteredModel.objects.create(name="their-secret", kind="baseline", baseline="longer", owner=other_researcher)
    RegisteredModel.objects.create(name="public-one", kind="baseline", baseline="random")
    for name in ("their-secret", "public-one"):
        response = researcher_client.post("/judging/judges/new/", {**FORM, "name": name})
        page = html.unescape(response.content.decode())
        assert response.status_code == 422 and RegisteredModel.NAME_NOT_AVAILABLE in page, name
        assert "already exists" not in page
    with pytest.raises(CommandError) as refused:
        call_command("create_judge", "their-secret", "--baseline", "longer")
    assert str(refused.value) == RegisteredModel.NAME_NOT_AVAILABLE
    assert RegisteredModel.objects.filter(name="their-secret").count() == 1


def test_a_client_that_never_saw_the_roles_gets_the_defaults(researcher_client):
    old = {k: v for k, v in FORM.items() if k not in ("roles_shown", "use_as_judge", "use_as_generator")}
    researcher_client.post("/judging/judges/new/", {**old, "name": "old"})
    researcher_client.post(
        "/judging/judges/new/",
        {**old, "name": "base", "kind": "baseline", "baseline": "longer", "base_url": "", "model": ""},
    )
    assert RegisteredModel.objects.filter(name="old", use_as_judge=True, use_as_generator=True).exists()
    assert RegisteredModel.objects.filter(name="base", use_as_judge=True, use_as_generator=False).exists()


def test_delete_asks_then_deletes_with_a_message(researcher_client, researcher):
    judge = RegisteredModel.objects.create(name="gone", kind="baseline", baseline="longer", owner=researcher)
    confirm = researcher_client.get(f"/judging/judges/{judge.pk}/delete/")
    assert confirm.status_code == 200 and b"Delete model gone?" in confirm.content
    assert RegisteredModel.objects.filter(pk=judge.pk).exists()  # a GET changes nothing
    response = researcher_client.post(f"/judging/judges/{judge.pk}/delete/", follow=True)
    assert _messages(response) == ["Model gone deleted."] and not RegisteredModel.objects.filter(pk=judge.pk).exists()


def test_a_model_with_jobs_is_kept(researcher_client, researcher, study):
    judge = RegisteredModel.objects.create(name="busy", kind="baseline", baseline="longer", owner=researcher)
    services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    response = researcher_client.post(f"/judging/judges/{judge.pk}/delete/", follow=True)
    assert _messages(response) == ["Model busy has jobs, so it is kept (their results refer to it)."]
    assert RegisteredModel.objects.filter(pk=judge.pk).exists()


def test_only_the_owner_deletes(client, researcher, other_researcher):
    mine = RegisteredModel.objects.create(name="mine", kind="baseline", baseline="longer", owner=researcher)
    public = RegisteredModel.objects.create(name="public", kind="baseline", baseline="random")
    client.force_login(other_researcher)
    assert client.post(f"/judging/judges/{mine.pk}/delete/").status_code == 404
    assert client.post(f"/judging/judges/{public.pk}/delete/").status_code == 403
    assert RegisteredModel.objects.count() == 2


def test_the_job_form_offers_judges_only(researcher_client, researcher):
    RegisteredModel.objects.create(
        name="writer", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", owner=researcher, use_as_judge=False
    )
    RegisteredModel.objects.create(
        name="reader", kind="openai", base_url="http://127.0.0.1:9/v1", model="m", owner=researcher
    )
    page = researcher_client.get("/judging/jobs/").content.decode()
    assert ">reader<" in page and ">writer<" not in page


# --- create_judge ------------------------------------------------------------------------


def test_create_judge_registers_roles_limits_and_prices(db, capsys):
    call_command(
        "create_judge",
        "gpt",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "gpt-4o",
        "--api-key-env",
        "JUDGE_KEY_OPENAI",
        "--tpm",
        "30000",
        "--batch-price-in",
        "0.0025",
        "--batch-price-out",
        "0.01",
        "--roles",
        "generator",
    )
    gpt = RegisteredModel.objects.get(name="gpt")
    assert (gpt.use_as_judge, gpt.use_as_generator, gpt.tokens_per_minute) == (False, True, 30000)
    assert (gpt.batch_price_in_per_1k, gpt.batch_price_out_per_1k) == (Decimal("0.0025"), Decimal("0.01"))
    assert "judge gpt (openai) created; roles generator" in capsys.readouterr().out
    call_command(
        "create_judge", "plain", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--self-candidate", "gpt4"
    )
    plain = RegisteredModel.objects.get(name="plain")
    assert (plain.use_as_judge, plain.use_as_generator, plain.self_candidate_key) == (True, True, "gpt4")
    assert plain.batch_price_in_per_1k is None  # half the synchronous price (RegisteredModel.price)
    call_command("create_judge", "len", "--baseline", "longer")
    assert RegisteredModel.objects.filter(name="len", use_as_judge=True, use_as_generator=False).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--roles", "critic"], "unknown role 'critic'"),
        (["--roles", ","], "use judge, generator or both"),
        (["--tpm", "-1"], "--tpm must be 0"),
        (["--batch-price-in", "cheap"], "--batch-price-in must be a number"),
        (["--batch-price-out", "-1"], "--batch-price-out must be a non-negative number"),
        (["--api-key-env", "DATABASE_URL"], "JUDGE_KEY_"),
    ],
)
def test_create_judge_bad_flags_change_nothing(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("create_judge", "x", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", *args)
    assert not RegisteredModel.objects.exists()


def test_a_baseline_cannot_be_a_generator(db):
    with pytest.raises(CommandError, match="a baseline can only judge"):
        call_command("create_judge", "len", "--baseline", "longer", "--roles", "judge,generator")
    assert not RegisteredModel.objects.exists()


def test_create_judge_exits_non_zero_with_one_line(transactional_db):
    proc = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "create_judge",
            "x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--roles",
            "critic",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=_worker_env(),
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["CommandError: unknown role 'critic'; use judge, generator or both"]


# --- the job page: the last error and its hint -------------------------------------------


def test_the_job_page_shows_the_last_error_with_its_hint(researcher_client, study):
    judge = services.ensure_baseline_judge(name="first-slot")
    job = services.start_judge_job(study=study, judge=judge, condition_names=["order"])
    page = researcher_client.get(f"/judging/jobs/{job.pk}/").content.decode()
    assert 'id="last-error"' not in page
    when = timezone.now()
    JudgeJob.objects.filter(pk=job.pk).update(last_error="401 AuthenticationError <b>bad</b>", last_error_at=when)
    fragment = researcher_client.get(f"/judging/jobs/{job.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert 'id="last-error"' in fragment and "<b>bad</b>" not in fragment
    assert "401 AuthenticationError &lt;b&gt;bad&lt;/b&gt;" in fragment
    assert "check the key variable" in fragment and timezone.localtime(when).strftime("%Y-%m-%d %H:%M") in fragment
    for error, words in (
        ("404 NotFoundError", "model name"),
        ("429 rate limited", "lower the model"),
        ("connection error", "running on that host and port"),
    ):
        JudgeJob.objects.filter(pk=job.pk).update(last_error=error)
        assert words in researcher_client.get(f"/judging/jobs/{job.pk}/").content.decode()
