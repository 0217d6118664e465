"""The simulator: knobs, determinism, calibration against its documented semantics, HTTP."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx2
import openai
import pytest

from judging import prompts
from judging.simulator.behaviour import Knobs, decide, parse_knobs


def _order_pair(i: int, version: str = "v1") -> tuple[list, list]:
    a, b = f"answer A number {i}", f"the other answer, B, number {i} " + "x" * (i % 7)
    p1 = prompts.render(
        version=version, condition="order", instruction=f"Q{i}?", reference="R", first_text=a, second_text=b
    )
    p2 = prompts.render(
        version=version, condition="order", instruction=f"Q{i}?", reference="R", first_text=b, second_text=a
    )
    return p1.messages, p2.messages


def test_knobs_parse_and_reject_unknown_names():
    assert parse_knobs("sim:order_first=0.3,seed=7,errors=429+timeout") == Knobs(
        order_first=0.3, seed=7, errors="429+timeout"
    )
    assert parse_knobs("gpt-4o") == Knobs()
    with pytest.raises(ValueError, match="unknown simulator knob 'order'"):
        parse_knobs("sim:order=0.3")
    with pytest.raises(ValueError, match="bad value"):
        parse_knobs("sim:bandwagon=lots")


def test_answers_are_deterministic_given_seed_and_prompt():
    m1, _ = _order_pair(1)
    knobs = Knobs(order_first=0.5, invalid=0.2, seed=3)
    assert decide(knobs, m1) == decide(knobs, m1)


@pytest.mark.parametrize("rate", [0.0, 0.3, 0.6])
def test_order_first_rate_is_measured_as_set(rate):
    # Order bias toward the first slot: the first slot chosen in both presentations.
    knobs = Knobs(order_first=rate, seed=11)
    n = 2000
    both_first = sum(
        decide(knobs, m1).slot == "first" and decide(knobs, m2).slot == "first" for m1, m2 in map(_order_pair, range(n))
    )
    assert abs(both_first / n - rate) < 0.035


def test_bandwagon_rate_is_measured_as_set():
    knobs = Knobs(bandwagon=0.4, seed=2)
    n, followed = 1500, 0
    for i in range(n):
        kw = {
            "version": "v1",
            "condition": "bandwagon",
            "instruction": f"Q{i}",
            "reference": "",
            "first_text": f"a{i}",
            "second_text": f"bb{i}",
        }
        m1 = prompts.render(cue={"cue_slot": "first", "percent": 85}, **kw).messages
        m2 = prompts.render(cue={"cue_slot": "second", "percent": 85}, **kw).messages
        followed += decide(knobs, m1).slot == "first" and decide(knobs, m2).slot == "second"
    assert abs(followed / n - 0.4) < 0.04


def test_self_preference_and_length_knobs():
    kw = {
        "version": "v1",
        "condition": "compassion",
        "instruction": "Q",
        "reference": "",
        "first_text": "short",
        "second_text": "a much longer answer",
    }
    marked = prompts.render(cue={"names": ["me", "you"], "self_slot": "first"}, **kw).messages
    assert decide(Knobs(self=1.0), marked).slot == "first"
    assert decide(Knobs(self=1.0), marked).text == "Model me is better"
    assert decide(Knobs(length=1.0), marked).slot == "second"


def test_errors_are_drawn_per_call_so_retries_can_succeed():
    m1, _ = _order_pair(5)
    knobs = Knobs(error_rate=0.5, errors="429", retry_after=2, seed=1)
    statuses = [decide(knobs, m1, call).status for call in range(40)]
    assert set(statuses) == {200, 429}
    assert decide(knobs, m1, statuses.index(429)).retry_after == 2


def test_it_speaks_openai_over_http_with_usage_and_retry_after(simulator):
    client = openai.OpenAI(base_url=simulator.base_url, api_key="unused", max_retries=0)
    m1, _ = _order_pair(3)
    reply = client.chat.completions.create(model="sim:seed=1", messages=m1)
    assert reply.choices[0].message.content in ("System Star is better", "System Square is better")
    assert reply.usage.prompt_tokens > 20 and reply.usage.completion_tokens > 0
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="sim:error_rate=1,errors=429,retry_after=7", messages=m1)
    assert caught.value.response.headers["retry-after"] == "7"
    assert simulator.stats.calls[prompts.prompt_hash(m1)] == 2
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="sim:nonsense=1", messages=m1)


def test_it_holds_hundreds_of_concurrent_requests(simulator):
    m1, _ = _order_pair(9)
    body = json.dumps({"model": "sim:latency_ms=500", "messages": m1})
    with httpx2.Client(limits=httpx2.Limits(max_connections=300)) as http, ThreadPoolExecutor(250) as pool:
        codes = list(
            pool.map(
                lambda _: http.post(f"{simulator.base_url}/chat/completions", content=body).status_code, range(250)
            )
        )
    assert codes == [200] * 250
    # Concurrency is read from the endpoint's own count of requests held at once (64 is the
    # fixture's endpoint concurrency), not from the wall clock, which measures the machine's load.
    assert simulator.stats.peak_in_flight >= 60


def test_the_site_mounts_the_simulator_for_make_run(client, settings):
    settings.DEBUG = True  # as under `make run`: anonymous callers are answered (tests/judging/test_simulator_gate.py)
    m1, _ = _order_pair(4)
    response = client.post(
        "/sim/v1/chat/completions", data={"model": "sim:order_first=1", "messages": m1}, content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "System Star is better"
    bad = client.post("/sim/v1/chat/completions", data="{", content_type="application/json")
    assert bad.status_code == 400


def test_model_names_with_spaces_and_multiline_answers_are_read():
    from judging.simulator.behaviour import read_prompt

    rendered = prompts.render(
        version="v1",
        condition="compassion",
        instruction="Q",
        reference="",
        first_text="line one\nline two: more",
        second_text="short",
        cue={"names": ["GPT-4 Turbo", "Model X"], "self_slot": "second"},
    )
    p = read_prompt(rendered.messages)
    assert p.labels == ("Model GPT-4 Turbo", "Model Model X")
    assert (p.first, p.second, p.self_slot) == ("line one\nline two: more", "short", "second")
    assert decide(Knobs(self=1.0), rendered.messages).text == "Model Model X is better"


def test_latency_counts_from_the_requests_arrival():
    """``latency_ms`` is the time from a request's arrival to its answer: the time the server
    already spent on a request (parsing, deciding; here a whole second) is not waited again,
    so an endpoint set to 200 ms answers in 200 ms and the runner's ideal is what it says."""
    import asyncio

    from judging.simulator.behaviour import Decision
    from judging.simulator.server import SimulatorServer

    server = SimulatorServer()
    knobs = parse_knobs("sim:latency_ms=1000")

    async def held_for(since_ago: float | None) -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        since = None if since_ago is None else start - since_ago
        await server._hold(knobs, Decision(status=200, text="ok"), since)
        return loop.time() - start

    assert asyncio.run(held_for(1.0)) < 0.5  # its second was spent already: answered at once
    assert asyncio.run(held_for(None)) >= 1.0  # waited for a slot: the full latency from now
