"""A local OpenAI-compatible endpoint that records every request's headers and body (the
attacker's server of the key-hardening tests): it answers "System Star is better"."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class RecordingEndpoint:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                raw_body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}"
                endpoint.requests.append(
                    {"path": self.path, "headers": dict(self.headers.items()), "body": json.loads(raw_body)}
                )
                payload = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "System Star is better"},
                        }
                    ],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
                }
                raw = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, prefix: str = "/v1") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{prefix}"

    def authorizations(self) -> list[str | None]:
        return [r["headers"].get("Authorization") for r in self.requests]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def model_form(**fields: str) -> dict[str, str]:
    """A valid POST of the model form (/judging/judges/new/) over plain http; ``fields`` override."""
    return {
        "name": "model",
        "kind": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "generation": "{}",
        "max_concurrency": "8",
        "requests_per_minute": "600",
        "price_in_per_1k": "0",
        "price_out_per_1k": "0",
        "request_timeout": "5",
        "transport": "http",
        "use_as_judge": "on",
        "roles_shown": "on",
    } | fields
