"""The simulator mounted inside the site at /sim/v1/chat/completions (for ``make run``).

Under runserver each request holds a thread, so this is for demos; benchmarks and tests
use the asyncio server (``manage.py run_simulator``), which holds hundreds of requests.

Mounted only when ``SIMULATOR_ENABLED`` (by default: DEBUG on). It answers anyone when DEBUG
is on; otherwise only a logged-in staff session, a staff user's API token
(``Authorization: Token <key>`` or ``Bearer <key>``) or ``Bearer $SIMULATOR_TOKEN``.
No request is held longer than ``MAX_DELAY_MS`` (5 s) and the per-prompt call counter
is bounded.
"""

from __future__ import annotations

import json
import threading
import time

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from cobbler_site.foundation.access import Audience, allow
from judging.prompts import prompt_hash
from judging.simulator.behaviour import MAX_DELAY_MS, decide, max_tokens_of, parse_knobs
from judging.simulator.server import BoundedCounter, completion_body, error_body

# prompt hash -> calls seen (for error_rate per call index); forgets the oldest prompts.
_calls: BoundedCounter = BoundedCounter(max_keys=10_000)
_lock = threading.Lock()


def _error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": {"message": message}}, status=status)


@csrf_exempt  # an API for machine clients (no cookies needed); staff or a token unless DEBUG
@allow(Audience.SIMULATOR)
@require_POST
def chat_completions(request: HttpRequest) -> JsonResponse:
    if not settings.SIMULATOR_ENABLED:
        return _error(404, "not found")
    arrived = time.monotonic()
    try:
        payload = json.loads(request.body)
        messages = payload["messages"]
        model = str(payload.get("model", ""))
        knobs = parse_knobs(model)
    except (ValueError, KeyError, TypeError) as exc:
        return _error(400, f"bad request: {exc}")
    key = prompt_hash(messages)
    with _lock:
        call_index = _calls[key]
        _calls[key] += 1
    try:
        decision = decide(knobs, messages, call_index, max_tokens=max_tokens_of(payload))
    except ValueError as exc:
        return _error(400, f"bad prompt: {exc}")
    # latency_ms counts from the request's arrival: parsing and deciding are part of it.
    due = arrived + min(knobs.latency_ms + decision.hold_ms, MAX_DELAY_MS) / 1000
    time.sleep(max(0.0, due - time.monotonic()))
    if decision.status != 200:
        response = JsonResponse(error_body(decision), status=decision.status)
        if decision.status == 429:
            response["Retry-After"] = f"{decision.retry_after:g}"
        return response
    return JsonResponse(completion_body(model, decision.text, messages))
