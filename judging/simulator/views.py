"""The simulator mounted inside the site at /sim/v1/chat/completions (for ``make run``).

Under runserver each request holds a thread, so this is for demos; benchmarks and tests
use the asyncio server (``manage.py run_simulator``), which holds hundreds of requests.
"""
from __future__ import annotations

import json
import threading
import time
from collections import Counter

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from judging.prompts import prompt_hash
from judging.simulator.behaviour import decide, parse_knobs
from judging.simulator.server import completion_body, error_body

_calls: Counter = Counter()
_lock = threading.Lock()


@csrf_exempt  # an API for machine clients, authenticated by nothing: it only computes
@require_POST
def chat_completions(request: HttpRequest) -> JsonResponse:
    try:
        payload = json.loads(request.body)
        messages = payload["messages"]
        model = str(payload.get("model", ""))
        knobs = parse_knobs(model)
    except (ValueError, KeyError, TypeError) as exc:
        return JsonResponse({"error": {"message": f"bad request: {exc}"}}, status=400)
    key = prompt_hash(messages)
    with _lock:
        call_index = _calls[key]
        _calls[key] += 1
    try:
        decision = decide(knobs, messages, call_index)
    except ValueError as exc:
        return JsonResponse({"error": {"message": f"bad prompt: {exc}"}}, status=400)
    time.sleep((knobs.latency_ms + decision.hold_ms) / 1000)
    if decision.status != 200:
        response = JsonResponse(error_body(decision), status=decision.status)
        if decision.status == 429:
            response["Retry-After"] = f"{decision.retry_after:g}"
        return response
    return JsonResponse(completion_body(model, decision.text, messages))
