"""In Chromium: a researcher picks the simulator preset, tests the connection, saves, and sees the message."""

from __future__ import annotations

import pytest

from judging.models import RegisteredModel
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_preset_test_connection_and_save(live_server, browser, researcher, simulator, settings):
    settings.SIMULATOR_BASE_URL = simulator.base_url
    settings.THROTTLE_CONNECTION_TEST = "100000/min"
    page = browser.new_page()
    csp_violations: list[str] = []
    page.on("console", lambda m: csp_violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(f"{live_server.url}/accounts/login/?next=/judging/judges/new/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/judging/judges/new/")

    assert not page.is_visible("select[name=baseline]")  # only a baseline asks which one
    page.select_option("select[name=kind]", "baseline")
    assert page.is_visible("select[name=baseline]")

    page.click("button[data-preset=vllm]")
    assert page.input_value("input[name=base_url]") == "http://localhost:8000/v1"
    assert page.input_value("select[name=transport]") == "http"
    assert "vllm serve" in page.inner_text("#preset-note")
    assert page.get_attribute("input[name=model]", "placeholder") == "meta-llama/Llama-3.1-8B-Instruct"

    page.click("button[data-preset=simulator]")
    assert page.input_value("input[name=base_url]") == simulator.base_url
    assert page.input_value("input[name=model]") == "sim:seed=1"
    assert page.input_value("select[name=kind]") == "openai" and not page.is_visible("select[name=baseline]")
    assert page.get_attribute("button[data-preset=simulator]", "aria-pressed") == "true"
    assert page.locator("#simulator-help").get_attribute("open") is not None
    page.evaluate("window.__noReload = true")

    page.fill("input[name=name]", "sim-new")
    page.fill("input[name=model]", "sim:order_first=1,latency_ms=50")
    page.click("#test-connection")
    page.wait_for_selector("#test-result[data-ok=true]")
    assert page.evaluate("window.__noReload") is True  # htmx swapped the result in
    assert "System Star: the first answer (the right one)" in page.inner_text("#test-parsed")
    assert int(page.inner_text("#test-latency").split()[0]) >= 50
    assert "System Star is better" in page.inner_text("#test-raw")
    assert not RegisteredModel.objects.filter(name="sim-new").exists()  # testing saves nothing
    ARTIFACTS.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "model-form-test-connection.png"), full_page=True)

    page.fill("input[name=model]", "sim:error_rate=1,errors=500")
    page.click("#test-connection")
    page.wait_for_selector("#test-result[data-ok=false]")
    assert "500 server error" in page.inner_text("#test-error") and "5xx" in page.inner_text("#test-hint")

    page.fill("input[name=model]", "sim:order_first=1")
    page.click("#save")
    page.wait_for_url("**/judging/judges/")
    assert "Model sim-new registered as judge and answer generator." in page.inner_text(".messages")
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "model-registered.png"), full_page=True)
    judge = RegisteredModel.objects.get(name="sim-new")
    assert judge.base_url == simulator.base_url and judge.transport == "http" and judge.max_concurrency == 16

    page.click("tr[data-model=sim-new] button")  # the list's Test button, also htmx
    page.wait_for_selector("#connection-result #test-result[data-ok=true]")
    assert page.is_visible("#connection-result")
    assert csp_violations == []
