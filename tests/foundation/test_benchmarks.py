"""The benchmark harness: the load client goes through a TLS-terminating proxy as deployed, and
`make bench` fails on a missed target but only reports a stress run."""

from __future__ import annotations

import httpx

from benchmarks.annotation_load import behind_proxy
from benchmarks.run_all import STRESS, TARGET, exit_code, verdict


def test_the_load_client_speaks_https_and_the_proxy_forwards_http_with_the_headers():
    seen: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"Set-Cookie": "csrftoken=t0k; Path=/; Secure; SameSite=Lax"})

    with behind_proxy("http://127.0.0.1:8123", client_ip="10.0.3.7") as client:
        client._transport.upstream = httpx.MockTransport(server)  # type: ignore[attr-defined]
        client.get("/s/x/consent")
        client.post("/s/x/consent", data={"agree": "yes"})
    first, second = seen
    assert first.url.scheme == "http" and first.url.port == 8123  # the hop behind the proxy
    assert first.headers["X-Forwarded-Proto"] == "https" and first.headers["X-Forwarded-For"] == "10.0.3.7"
    assert first.headers["Connection"] == "close"  # nginx's default upstream: no keep-alive
    # The browser side is https: the Secure CSRF cookie comes back, with an https Origin.
    assert "csrftoken=t0k" in second.headers["Cookie"]
    assert second.headers["Origin"] == "https://127.0.0.1:8123"


def test_a_missed_target_fails_the_suite_and_a_stress_run_never_does():
    assert exit_code([(TARGET, "a", 0), (STRESS, "b", 1)]) == 0
    assert exit_code([(TARGET, "a", 1), (STRESS, "b", 0)]) == 1
    assert verdict(TARGET, 0) == "target met" and "MISSED" in verdict(TARGET, 1)
    assert verdict(STRESS, 0).startswith("reported (stress run")


def test_the_judge_throughput_benchmark_fails_on_a_missed_target():
    from benchmarks.judge_throughput import missed_targets

    def run(transport: str, workers: int, ratio: float, scaling: float | None = None) -> dict:
        return {"transport": transport, "workers": workers, "ratio_of_ideal": ratio, "scaling_factor": scaling}

    held = {"a": run("openai", 1, 0.95), "b": run("http", 1, 0.97), "c": run("http", 2, 0.9, 1.9)}
    assert missed_targets(held) == []
    missed = {"a": run("openai", 1, 0.917), "b": run("http", 1, 0.97), "c": run("openai", 2, 0.79, 1.73)}
    assert missed_targets(missed) == ["a: 91.7% of ideal < 95%", "c: 1.73x < 1.9x"]
