"""Safe defaults: DEBUG off unless set, published keys refused, HTTPS settings, CSP, error reports.

The settings are read in subprocesses with a clean environment, because the test suite itself
runs with what tests/settings.py switches on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from django.test import RequestFactory

from cobbler_site.foundation.errors import SafeExceptionReporter, scrub_url_credentials
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.smoke

REAL_KEY = "a-real-deployment-key-" + "x7Kq9" * 10
PROD_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": REAL_KEY,
    "PSEUDONYM_KEY": "another-real-key-" + "p3" * 20,
    "ALLOWED_HOSTS": "cobbler.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://cobbler.example.org",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "SECURE_HSTS_PRELOAD": "1",
}


def _clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without anything tests/settings.py or a developer set."""
    from tests.settings import TEST_ENV

    drop = {
        *TEST_ENV,
        "DEBUG",
        "SECRET_KEY",
        "PSEUDONYM_KEY",
        "FIELD_ENCRYPTION_KEY",
        "DJANGO_SETTINGS_MODULE",
        "SIMULATOR_TOKEN",
        "JUDGE_KEY_ENV_PREFIX",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
        "ALLOWED_HOSTS",
        "CSRF_TRUSTED_ORIGINS",
    }
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["DJANGO_SETTINGS_MODULE"] = "cobbler_site.settings"
    env.update(extra)
    return env


NAMES = (
    "DEBUG",
    "SIMULATOR_ENABLED",
    "JUDGE_ALLOWED_HOSTS",
    "JUDGE_KEY_ENV_PREFIX",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_PROXY_SSL_HEADER",
)


def _settings(**env: str) -> subprocess.CompletedProcess:
    code = (
        "import json; from cobbler_site import settings as s; "
        f"print(json.dumps({{n: getattr(s, n) for n in {NAMES!r}}}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        env=_clean_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _env_example_value(name: str) -> str:
    for line in (PROJECT_ROOT / ".env.example").read_text().splitlines():
        if line.startswith(f"{name}="):
            return line.split("=", 1)[1]
    raise AssertionError(f"{name} not in .env.example")


def test_debug_is_off_unless_set_and_production_defaults_follow():
    result = _settings(SECRET_KEY=REAL_KEY)
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)
    assert s["DEBUG"] is False and s["SIMULATOR_ENABLED"] is False
    assert s["JUDGE_ALLOWED_HOSTS"] == ["public-https"] and s["JUDGE_KEY_ENV_PREFIX"] == "JUDGE_KEY_"
    assert s["SECURE_SSL_REDIRECT"] and s["SESSION_COOKIE_SECURE"] and s["CSRF_COOKIE_SECURE"]
    assert s["SECURE_HSTS_SECONDS"] >= 31536000 and s["SECURE_PROXY_SSL_HEADER"] is None


def test_debug_on_is_the_local_demo():
    result = _settings(DEBUG="1")  # no SECRET_KEY: the development key is fine locally
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)
    assert s["DEBUG"] is True and s["SIMULATOR_ENABLED"] is True
    assert s["JUDGE_ALLOWED_HOSTS"] == ["public-https", "loopback"]
    assert not s["SECURE_SSL_REDIRECT"] and not s["SESSION_COOKIE_SECURE"] and s["SECURE_HSTS_SECONDS"] == 0


def test_https_settings_are_read_from_the_environment():
    result = _settings(
        SECRET_KEY=REAL_KEY,
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="600",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
        SIMULATOR_ENABLED="1",
        JUDGE_ALLOWED_HOSTS="public-https,10.0.0.5:8000",
    )
    s = json.loads(result.stdout)
    assert s["SECURE_SSL_REDIRECT"] is False and s["SECURE_HSTS_SECONDS"] == 600
    assert s["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert s["SIMULATOR_ENABLED"] is True and s["JUDGE_ALLOWED_HOSTS"] == ["public-https", "10.0.0.5:8000"]


@pytest.mark.parametrize(
    "env",
    [
        {},  # nothing set: DEBUG off and no key
        {"DEBUG": "0", "SECRET_KEY": "dev-only-insecure-key-change-me"},
        {"SECRET_KEY": "from-env-example"},
        {"SECRET_KEY": REAL_KEY, "PSEUDONYM_KEY": "from-env-example"},
    ],
    ids=["unset", "dev-key", "env-example-key", "env-example-pseudonym-key"],
)
def test_it_refuses_to_start_on_a_published_key(env):
    env = {k: (_env_example_value(k) if v == "from-env-example" else v) for k, v in env.items()}
    result = _settings(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "KEY" in result.stderr.splitlines()[-1]


@pytest.mark.parametrize("key", ["x", "k" * 49])
def test_a_short_secret_key_is_refused_with_debug_off(key):
    result = _settings(SECRET_KEY=key)
    assert result.returncode != 0
    last = result.stderr.splitlines()[-1]
    assert "ImproperlyConfigured" in last and "at least 50" in last
    assert "k" * 49 not in result.stderr  # the key is not echoed
    assert _settings(SECRET_KEY="k" * 50).returncode == 0
    assert _settings(DEBUG="1", SECRET_KEY=key).returncode == 0  # local work may use any key


def test_check_deploy_is_clean_with_preload_off_and_says_so():
    # HSTS preload is opt-in (SECURE_HSTS_PRELOAD); its reminder W021 is silenced only while it is off.
    env = {k: v for k, v in PROD_ENV.items() if k != "SECURE_HSTS_PRELOAD"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=PROJECT_ROOT,
        env=_clean_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0 and _issues(output) == [], output
    assert "System check identified no issues (1 silenced)." in output


def test_the_shipped_files_keep_production_safe():
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text()
    assert re.search(r"^ENV .*\bDEBUG=0\b", dockerfile, re.M)
    compose = (PROJECT_ROOT / "docker-compose.yml").read_text()
    assert "SECRET_KEY: ${SECRET_KEY:?" in compose and 'DEBUG: "0"' in compose
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    assert "LOCAL_ENV := DEBUG=$${DEBUG:-1}" in makefile
    assert "$(LOCAL_ENV) $(PY) manage.py runstack" in makefile


@pytest.fixture(scope="module")
def deploy_check() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=PROJECT_ROOT,
        env=_clean_env(**PROD_ENV),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _issues(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.match(r"^\S*: \(", line)]


def test_check_deploy_has_no_security_issue(deploy_check):
    issues = _issues(deploy_check.stdout + deploy_check.stderr)
    ours = [line for line in issues if "drf_spectacular." not in line]
    assert ours == [], "\n".join(ours)


def test_check_deploy_reports_nothing_at_all(deploy_check):
    # drf-spectacular's warnings too: every APIView documents its serializers (issue 10, item 7).
    output = deploy_check.stdout + deploy_check.stderr
    assert deploy_check.returncode == 0, output
    assert "System check identified no issues (0 silenced)." in output


@pytest.mark.django_db
def test_pages_carry_a_csp_without_inline_script(client):
    response = client.get("/accounts/login/")
    policy = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'"
    assert "unsafe" not in directives["style-src"] and "frame-ancestors" in directives


def test_templates_have_no_inline_script():
    offenders = []
    for path in (PROJECT_ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        if path.name == "export.html":  # the downloaded, self-contained report (no script at all)
            assert "<script" not in text
            continue
        for tag in re.findall(r"<script\b[^>]*>", text):
            if "src=" not in tag:
                offenders.append(f"{path.name}: {tag}")
        offenders += [f"{path.name}: {m}" for m in re.findall(r"\s(on[a-z]+|hx-on[:\w-]*)=", text)]
        offenders += [f"{path.name}: javascript:" for _ in re.findall(r"javascript:", text)]
    assert offenders == []


def test_htmx_does_not_inject_its_indicator_style():
    base = (PROJECT_ROOT / "templates" / "_base.html").read_text()
    assert '"includeIndicatorStyles":false' in base
    assert ".htmx-indicator" in (PROJECT_ROOT / "static" / "css" / "site.css").read_text()


def test_url_credentials_are_scrubbed():
    assert scrub_url_credentials("redis://:hunter2@redis:6379/0") == "redis://********@redis:6379/0"
    assert scrub_url_credentials("x postgres://u:p%40ss@db/x y") == "x postgres://********@db/x y"
    assert scrub_url_credentials("https://api.openai.com/v1") == "https://api.openai.com/v1"


def _pw() -> str:
    return "-".join(["s3cr3t", "pa55"])  # built at run time: the report also shows source lines


def test_error_reports_hide_connection_strings_and_url_passwords(settings, monkeypatch):
    settings.DEBUG = True
    settings.DATABASE_URL = f"postgres://cobbler:{_pw()}@postgres:5432/cobbler"
    settings.REDIS_URL = f"redis://:{_pw()}@redis:6379/0"
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    settings.SOME_WEBHOOK = f"https://bot:{_pw()}@hooks.example.org/x"
    monkeypatch.setenv("REDIS_URL", settings.REDIS_URL)
    request = RequestFactory().get("/boom", REDIS_URL=settings.REDIS_URL, JUDGE_KEY_OPENAI=_pw())
    try:
        broker = f"redis://:{_pw()}@redis:6379/0"  # a frame variable
        raise ConnectionError(f"Error connecting to {broker}")
    except ConnectionError:
        reporter = SafeExceptionReporter(request, *sys.exc_info())
        html, text = reporter.get_traceback_html(), reporter.get_traceback_text()
    for report in (html, text):
        assert _pw() not in report
        assert "redis://********@redis:6379/0" in report


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_csp_blocks_nothing_the_pages_need(live_server, browser, django_user_model):
    """htmx pages (login, dashboard, judge jobs) and the SortableJS ranking run without one violation."""
    from annotations import services as crowd
    from tests.annotations.conftest import build_study

    study = build_study("csp", instructions=2, overlap=1)
    crowd.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=2)
    django_user_model.objects.create_user("csp", "c@x.org", "csp-password-1", is_staff=True)
    page = browser.new_page()
    page.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation',"
        " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    console = []
    page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
    violations = []
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "csp")
    page.fill("input[name=password]", "csp-password-1")
    page.click("button[type=submit]")
    page.wait_for_url("**/dashboard/")
    for path in (
        "/dashboard/",
        "/judging/jobs/",
        "/judging/judges/",
        f"/crowd/studies/{study.slug}/",
        f"/studies/{study.slug}/report/",
    ):
        page.goto(live_server.url + path)
        page.wait_for_timeout(300)
        assert page.evaluate("typeof htmx") == "object"
        violations += page.evaluate("window.__csp")
    worker = browser.new_page()
    worker.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation',"
        " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    worker.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
    worker.goto(
        f"{live_server.url}/s/{study.slug}/start?PROLIFIC_PID=c5b0c5b0c5b0c5b0c5b0c5b0&STUDY_ID=st&SESSION_ID=se"
    )
    worker.wait_for_timeout(300)
    assert worker.evaluate("typeof htmx") == "object"
    violations += worker.evaluate("window.__csp")
    assert violations == [] and console == []
