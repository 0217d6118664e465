"""`run_simulator --port 8900 [--knobs "latency_ms=200,order_first=0.3"] [--max-concurrency 32]`.

Serves the simulated judge at http://HOST:PORT/v1 (see judging.simulator.behaviour for
every knob). A request's ``model`` string ``sim:k=v,...`` overrides the defaults.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from judging.simulator.behaviour import parse_knobs
from judging.simulator.server import serve_forever


class Command(BaseCommand):
    help = "Serve the OpenAI-compatible simulated judge (asyncio; holds hundreds of requests)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8900)
        parser.add_argument("--knobs", default="", help="default knobs, e.g. latency_ms=200,seed=1")
        parser.add_argument(
            "--max-concurrency", type=int, default=0, help="requests served at once (0 = unlimited); others wait"
        )

    def handle(self, *args: Any, host: str, port: int, knobs: str, max_concurrency: int, **options: Any) -> None:
        try:
            defaults = parse_knobs("sim:" + knobs)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"simulator on http://{host}:{port}/v1 (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            serve_forever(host, port, defaults=defaults, max_concurrency=max_concurrency or None)
