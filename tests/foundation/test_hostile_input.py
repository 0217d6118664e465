"""Hostile input (issue 23 item 3): no 5xx, a 4xx or a file:line import error, nothing half-written.

The strings every text input gets: a NUL (PostgreSQL refuses it in text and jsonb: a 500
before, SQLite stored it), a lone surrogate (no UTF-8 encoding), 5,000 digits (past Python's
int-string limit), a megabyte, HTML/script, a right-to-left override and a spreadsheet
formula. The first two must be refused (4xx, row counts unchanged); the others may be stored
(the pages escape them, the CSV writers neutralise formulas) but never give a server error.

Where they go: every POST form of every researcher page (found by rendering the page and
reading its forms, so a new form is fuzzed without a line here), every API operation with a
JSON body (found in the OpenAPI schema), the crowd worker's task (rationale) and survey
answers, and the importers (the study format directory, the browser upload preview,
MT-Bench JSONL). The rule they hit lives in ``cobbler_site/foundation/text_safety.py``.
"""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator

from annotations import services
from annotations.models import Study, Submission
from cobbler_site.foundation.access import Audience, audience_of
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.foundation import test_authorization_matrix as matrix
from tests.foundation.test_authorization_matrix import ROUTES, _url
from tests.studyformat.conftest import copy_sample, rows

pytestmark = pytest.mark.django_db
world = matrix.world  # the fixture: a private study of alice's with one of everything a route names

HOSTILE = {
    "nul": "x\x00y",
    "surrogate": "x\ud800y",
    "digits": "9" * 5000,
    "megabyte": "m" * 1_000_000,
    "html": '<script>alert(1)</script><img src=x onerror="alert(2)">',
    "rtl": "abc\u202egnp.exe\u202c",
    "formula": '=HYPERLINK("http://evil.example","x")',
    "nul in json": '{"stop": ["x\\u0000y"], "x\\ud800": 1}',  # JSON text fields decode the escapes
}
REFUSED = ("nul", "surrogate")  # must be a 4xx with nothing written; the rest only never a 5xx
# Form posts: one field at a time for what could reach the database (a NUL, a long text, digits),
# every text field at once for the rest (each field is cleaned whatever the others hold). A form
# cannot carry a lone surrogate: Django decodes its bytes to U+FFFD, so there it is no refusal.
PER_FIELD = ("nul", "digits", "megabyte")
FORM_REFUSED = ("nul",)
# Django's LoginView answers a refused form with 200 and its errors (nothing is written).
ANSWERS_200_ON_ERRORS = ("/accounts/login/",)
IGNORES_BODY = ("/pause/", "/cancel/")
# Known 500s outside this change, each with its fix; an entry that stops failing fails the test.
# (None now: the judge form's generation field was the last, fixed with StrictJSONFormField.)
PENDING: set[tuple[str, str, str]] = set()
# Forms not to post: they end the session or delete what the other forms need.
SKIP_ACTIONS = ("logout", "delete")
SKIP_FIELDS = ("csrfmiddlewaretoken",)
# Logged in the way a password login would be (the first backend may only refuse, never restore).
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _form_body(data: dict[str, str]) -> str:
    # A browser sends a lone surrogate as the bytes UTF-8 would give it (Django decodes them to U+FFFD).
    return urlencode(data, encoding="utf-8", errors="surrogatepass")


def _row_counts() -> tuple[int, ...]:
    """Rows per table of the site's own models (sessions excluded), in one statement."""
    tables = [
        model._meta.db_table
        for label in ("annotations", "judging", "analysis", "auth", "authtoken")
        for model in apps.get_app_config(label).get_models()
        if not model._meta.proxy
    ]
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {quote(t)})" for t in tables))
        return tuple(cursor.fetchone())


class _PostForms(HTMLParser):
    """The POST forms of a page: action, every field with its rendered value, which fields take text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page, self.forms = page, []
        self._form: dict | None = None
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attr_list: list) -> None:
        attrs = {k: v or "" for k, v in attr_list}
        if tag == "form":
            posted = attrs.get("hx-post") or (attrs.get("method", "").lower() == "post" and attrs.get("action", ""))
            self._form = None
            if posted is not False and (attrs.get("hx-post") or attrs.get("method", "").lower() == "post"):
                self._form = {"action": posted or self.page, "fields": {}, "text": []}
                self.forms.append(self._form)
            return
        if self._form is None:
            return
        fields, name = self._form["fields"], attrs.get("name", "")
        if not name or name in SKIP_FIELDS:
            return
        kind = attrs.get("type", "text").lower()
        if tag == "input" and kind in ("checkbox", "radio"):
            if kind == "radio" or "checked" in attrs:
                fields.setdefault(name, attrs.get("value", "on"))
        elif tag == "input" and kind not in ("submit", "button", "file", "image", "reset"):
            fields[name] = attrs.get("value") or ("1" if kind == "number" else "")
            self._form["text"].append(name)
        elif tag == "textarea":
            fields[name], self._textarea = "", name
            self._form["text"].append(name)
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and (self._select not in fields or "selected" in attrs):
            fields[self._select] = attrs.get("value", "")

    def handle_data(self, data: str) -> None:
        if self._form is not None and self._textarea:
            self._form["fields"][self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None


def _check(status: int, value_name: str, before: tuple, where: str, wrong: list[str], refused: tuple = REFUSED) -> None:
    if status >= 500:
        wrong.append(f"{status} {where}")
    elif value_name in refused:
        if not (400 <= status < 500 or (status == 200 and where.split()[0] in ANSWERS_200_ON_ERRORS)):
            wrong.append(f"{status} (not refused) {where}")
        elif _row_counts() != before:
            wrong.append(f"{status} but rows were written: {where}")


def test_every_researcher_form_and_api_body_refuses_unstorable_text_and_survives_the_rest(world):
    """One test for both, so the world (a study, batches, jobs, a finished report) is built once."""
    owner = Client(raise_request_exception=False)
    owner.force_login(world["users"]["owner"], backend=MODEL_BACKEND)
    wrong: list[str] = []
    _fuzz_forms(owner, world, wrong)
    _fuzz_api(owner, world, wrong)
    assert not wrong, "\n".join(wrong)


def _fuzz_forms(owner: Client, world: dict, wrong: list[str]) -> None:
    forms, filler = [], iter(range(10**6))
    for route, pattern in ROUTES:
        if route.startswith("api/") or audience_of(pattern.callback) not in (Audience.RESEARCHER, Audience.PUBLIC):
            continue
        url = _url(route, pattern, world)
        page = owner.get(url)
        if page.status_code == 200 and page.get("Content-Type", "").startswith("text/html"):
            parser = _PostForms(url)
            parser.feed(page.content.decode())
            forms += [f for f in parser.forms if f["text"] and not any(s in f["action"] for s in SKIP_ACTIONS)]
    # A form on two pages (a judge's new and edit pages) is posted from the first only: time.
    forms = list({tuple(sorted(f["fields"])): f for f in reversed(forms)}.values())
    actions = {form["action"] for form in forms}
    assert len(actions) >= 8, actions  # study create, settings, review, lookup, judges, jobs, ...
    posts = [(form, [field], name) for form in forms for field in form["text"] for name in PER_FIELD]
    posts += [(form, form["text"], name) for form in forms for name in HOSTILE if name not in PER_FIELD]
    pending = set(PENDING)
    for form, fields, value_name in posts:
        n = next(filler)
        # Empty text fields get a fresh value (a new slug each time), so the form gets past them.
        data = {k: v or f"fuzz{n}" for k, v in form["fields"].items()} | dict.fromkeys(fields, HOSTILE[value_name])
        before = _row_counts() if value_name in FORM_REFUSED else ()
        response = owner.post(form["action"], _form_body(data), content_type="application/x-www-form-urlencoded")
        key = (form["action"], fields[0] if len(fields) == 1 else "*", value_name)
        if key in pending:
            if response.status_code < 500:
                wrong.append(f"{response.status_code}: remove the fixed PENDING entry {key}")
            continue
        where = f"{form['action']} {'+'.join(fields)}={value_name}"
        _check(response.status_code, value_name, before, where, wrong, FORM_REFUSED)


def _example(schema: dict, components: dict, n: int) -> object:
    """A plain valid-looking value of an OpenAPI schema (enums: their first value)."""
    if "$ref" in schema:
        return _example(components[schema["$ref"].rsplit("/", 1)[-1]], components, n)
    if "enum" in schema:
        return schema["enum"][0]
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in schema:
            return _example(schema[combined][0], components, n)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _example(v, components, n) for k, v in props.items() if not v.get("readOnly")}
    if kind == "array":
        return []
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return 0.1
    if kind == "boolean":
        return False
    return f"fuzz{n}"


def _fuzz_api(owner: Client, world: dict, wrong: list[str]) -> None:
    """Every operation with a JSON body: each field in turn (and inside JSON fields) per PER_FIELD
    value and a NUL and a surrogate (JSON escapes carry them), every field at once for the rest."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    operations, n = 0, 0
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if not body:
                continue
            url = _api_url(path, world)
            baseline = _example(body, components, 0)
            if not isinstance(baseline, dict):
                continue
            operations += 1
            posts = [([field], name) for field in baseline for name in dict.fromkeys((*REFUSED, *PER_FIELD))]
            posts += [(list(baseline), name) for name in HOSTILE if name not in (*REFUSED, *PER_FIELD)]
            for fields, value_name in posts:
                n += 1
                data = _example(body, components, n)
                for field in fields:
                    value = HOSTILE[value_name]
                    if isinstance(baseline[field], (dict, list)):  # a JSON field: the string inside
                        data[field] = {"k": value} if isinstance(baseline[field], dict) else [value]
                    else:
                        data[field] = value
                before = _row_counts() if value_name in REFUSED else ()
                response = getattr(owner, method)(url, json.dumps(data), content_type="application/json")
                if response.status_code < 300 and url.endswith(IGNORES_BODY) and _row_counts() == before:
                    continue  # pause and cancel read no body (the schema shares resume's)
                where = f"{method.upper()} {url} {'+'.join(fields)}={value_name}"
                _check(response.status_code, value_name, before, where, wrong)
    assert operations >= 5


def _api_url(path: str, world: dict) -> str:
    """The OpenAPI path with the world's objects in its parameters."""
    kwargs = world["kwargs"]
    by_prefix = {
        "/api/judges/": "judge_id",
        "/api/assignments/": "assignment_id",
        "/api/generation-jobs/": "generation_id",
    }
    pk = next((kwargs[name] for prefix, name in by_prefix.items() if path.startswith(prefix)), kwargs["job_id"])
    return path.replace("{slug}", kwargs["slug"]).replace("{run_id}", str(kwargs["run_id"])).replace("{id}", str(pk))


# -- the crowd worker ------------------------------------------------------------------------------


def test_the_worker_rationale_and_survey_answers_refuse_unstorable_text(db):
    study = build_study("hostile-crowd", instructions=1, overlap=2, rationale="optional")
    study.surveys = {"pre": [{"id": "note", "text": "Anything to add?", "kind": "text"}]}
    study.save()
    services.generate_batches(study=study, condition="plain", seed=3, pairs_per_batch=2)
    worker = Client(raise_request_exception=False)
    enter(worker, study, code="hostile-worker")
    qualify(worker, study)
    survey_url = current_task_url(worker, study)
    assert survey_url.endswith("/survey/pre") or "survey" in survey_url, survey_url
    wrong: list[str] = []
    for value_name in PER_FIELD:  # all refused (a NUL; longer than the answer's limit), the rest stored
        before = _row_counts()
        response = worker.post(
            survey_url, _form_body({"q-note": HOSTILE[value_name]}), content_type="application/x-www-form-urlencoded"
        )
        _check(response.status_code, value_name, before, f"survey q-note={value_name}", wrong, PER_FIELD)
    assert worker.post(survey_url, {"q-note": HOSTILE["html"]}).status_code == 302
    url = current_task_url(worker, study)
    for value_name, value in HOSTILE.items():
        token = _token(worker, url)
        before = _row_counts()
        body = _form_body({"token": token, "choice": "A", "rationale": value})
        response = worker.post(url, body, content_type="application/x-www-form-urlencoded")
        if value_name in FORM_REFUSED:
            _check(response.status_code, value_name, before, f"rationale={value_name}", wrong, FORM_REFUSED)
        elif response.status_code >= 500:
            wrong.append(f"{response.status_code} rationale={value_name}")
        elif response.status_code == 302:
            stored = Submission.objects.latest("pk").rationale
            # Stored as typed (the pages escape it); a form's lone surrogate arrives as U+FFFDs.
            assert stored == value.strip() or (value_name == "surrogate" and "\ufffd" in stored), value_name
            url = current_task_url(worker, study)
            if "/a/" not in url:
                break
    assert not wrong, "\n".join(wrong)


def _token(client: Client, url: str) -> str:
    page = client.get(url)
    match = re.search(r'name="token" value="([^"]+)"', page.content.decode())
    assert match, (url, page.status_code, page.get("Location"), page.content[:300])
    return match.group(1)


# -- the importers ---------------------------------------------------------------------------------


def _import_study(root: Path, slug: str) -> str:
    call_command("import_study", str(root), "--study", slug, stdout=io.StringIO())
    return slug


@pytest.mark.parametrize("value_name", list(HOSTILE))
def test_the_study_format_refuses_unstorable_text_with_file_and_line(tmp_path, value_name):
    root = copy_sample(tmp_path / value_name)
    responses = rows(root / "responses.jsonl")
    responses[2]["text"] = HOSTILE[value_name]
    # ASCII escapes: a lone surrogate has no UTF-8 bytes, only its \\ud800 escape.
    (root / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
    before = _row_counts()
    if value_name in REFUSED:
        with pytest.raises(CommandError) as caught:
            _import_study(root, "hostile")
        assert str(caught.value).startswith("responses.jsonl:3: refused JSON: a string contains a ")
        assert _row_counts() == before
    else:
        _import_study(root, "hostile")
        stored = Study.objects.get(slug="hostile").instructions.values_list("responses__text", flat=True)
        assert HOSTILE[value_name] in stored


# A line of instructions.jsonl, raw, and the start of the error it must give.
BAD_LINES = {
    "bom": (
        b"\xef\xbb\xbf" + b'{"id": "b", "instruction": "x"}',
        "instructions.jsonl:1: refused JSON: starts with a byte order mark",
    ),
    "duplicate key": (
        b'{"id": "b", "instruction": "x", "id": "c"}',
        "instructions.jsonl:1: refused JSON: duplicate key 'id'",
    ),
    "5000 digits": (
        b'{"id": ' + b"9" * 5000 + b', "instruction": "x"}',
        "instructions.jsonl:1: refused JSON: integer with 5000 digits",
    ),
    "19 digits": (
        b'{"id": 9223372036854775808, "instruction": "x"}',
        "instructions.jsonl:1: refused JSON: integer with 19 digits",
    ),
    "nan": (
        b'{"id": "b", "instruction": "x", "category": NaN}',
        "instructions.jsonl:1: refused JSON: NaN is not a JSON number",
    ),
    "1e400": (
        b'{"id": "b", "instruction": "x", "category": 1e400}',
        "instructions.jsonl:1: refused JSON: number 1e400 is too large",
    ),
    "nul key": (
        b'{"id": "b", "instruction": "x", "\\u0000": 1}',
        "instructions.jsonl:1: refused JSON: a string contains a NUL",
    ),
}


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bom_duplicate_keys_and_huge_numbers_are_refused_by_import_and_preview(tmp_path, settings, case):
    settings.DATA_DIR = tmp_path / "data"
    line, message = BAD_LINES[case]
    root = copy_sample(tmp_path / "bad")
    (root / "instructions.jsonl").write_bytes(line + b"\n" + (root / "instructions.jsonl").read_bytes())
    before = _row_counts()
    with pytest.raises(CommandError) as caught:
        _import_study(root, "hostile")
    assert str(caught.value).startswith(message), str(caught.value)
    # The browser preview: the same error, a 422, nothing written.
    researcher = Client(raise_request_exception=False)
    uploader = apps.get_model("auth", "User").objects.create_user("uploader", password="pw-up-123", is_staff=True)
    researcher.force_login(uploader, backend=MODEL_BACKEND)
    before = _row_counts()
    files = {
        name: SimpleUploadedFile(f"{name}.jsonl", (root / f"{name}.jsonl").read_bytes())
        for name in ("instructions", "responses", "votes", "rankings")
    }
    page = researcher.post(reverse("annotations:study_import"), {**files, "slug": "hostile-up"})
    assert page.status_code == 422
    assert message.split(": ", 1)[1].replace("'", "&#x27;") in page.content.decode()
    assert _row_counts() == before


def _mt_row(**overrides: object) -> dict:
    conversation = [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "answer"}]
    row = {
        "question_id": 7,
        "model_a": "m1",
        "model_b": "m2",
        "winner": "model_a",
        "judge": "expert_9",
        "turn": 1,
        "conversation_a": conversation,
        "conversation_b": conversation,
    }
    return row | overrides


@pytest.mark.parametrize("value_name", list(HOSTILE))
def test_mtbench_jsonl_refuses_unstorable_text_with_file_and_line(tmp_path, value_name):
    hostile = [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": HOSTILE[value_name]}]
    path = tmp_path / "mt.jsonl"
    path.write_text(json.dumps(_mt_row()) + "\n" + json.dumps(_mt_row(question_id=8, conversation_b=hostile)) + "\n")
    before = _row_counts()
    if value_name in REFUSED:
        with pytest.raises(CommandError) as caught:
            call_command("import_mtbench", str(path), "--study", "hostile-mt", stdout=io.StringIO())
        assert str(caught.value).startswith(f"{path}:2: refused JSON: a string contains a ")
        assert _row_counts() == before
    else:
        call_command("import_mtbench", str(path), "--study", "hostile-mt", stdout=io.StringIO())
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps(_mt_row()).replace('"question_id": 7', '"question_id": ' + "7" * 5000) + "\n")
    with pytest.raises(CommandError, match="integer with 5000 digits"):
        call_command("import_mtbench", str(big), "--study", "hostile-mt2", stdout=io.StringIO())
