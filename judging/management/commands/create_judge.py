"""`create_judge NAME --base-url URL --model M [--api-key-env JUDGE_KEY_X]` or `create_judge NAME --baseline longer`.

The key variable must start with JUDGE_KEY_ENV_PREFIX (default ``JUDGE_KEY_``) and the base URL
must be allowed by JUDGE_ALLOWED_HOSTS; otherwise the command exits non-zero with one line.
Without ``--owner`` the judge is public (every researcher may use it).
"""
from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from judging import services


class Command(BaseCommand):
    help = "Create a judge: an OpenAI-compatible endpoint or a built-in baseline."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--baseline", default="", choices=["", *services.BASELINES])
        parser.add_argument("--base-url", default="")
        parser.add_argument("--model", default="")
        parser.add_argument("--api-key-env", default="",
                            help="name of the env var holding the key, e.g. JUDGE_KEY_OPENAI")
        parser.add_argument("--generation", default="{}", help='JSON, e.g. {"temperature": 0}')
        parser.add_argument("--max-concurrency", type=int, default=8)
        parser.add_argument("--rpm", type=int, default=600)
        parser.add_argument("--price-in", default="0", help="USD per 1k input tokens")
        parser.add_argument("--price-out", default="0", help="USD per 1k output tokens")
        parser.add_argument("--self-candidate", default="", help="candidate key that is this judge's model")
        parser.add_argument("--timeout", type=float, default=60.0)
        parser.add_argument("--transport", default="openai", choices=["openai", "http"],
                            help="openai SDK (default) or lean HTTP for high-throughput local servers")
        parser.add_argument("--owner", default="", help="username: a private judge of that researcher")
        parser.add_argument("--shared", action="store_true", help="with --owner: usable by every researcher")

    def handle(self, *args: Any, **o: Any) -> None:
        try:
            generation = json.loads(o["generation"])
            price_in, price_out = Decimal(o["price_in"]), Decimal(o["price_out"])
        except (ValueError, InvalidOperation) as exc:
            raise CommandError(f"bad --generation or price: {exc}") from None
        if not isinstance(generation, dict):
            raise CommandError("--generation must be a JSON object")
        owner = None
        if o["owner"]:
            owner = get_user_model().objects.filter(username=o["owner"]).first()
            if owner is None:
                raise CommandError(f"no user called {o['owner']!r}")
        try:
            judge = services.create_judge(
                name=o["name"], baseline=o["baseline"], base_url=o["base_url"], model=o["model"],
                api_key_env=o["api_key_env"], generation=generation,
                max_concurrency=o["max_concurrency"], requests_per_minute=o["rpm"],
                price_in_per_1k=price_in, price_out_per_1k=price_out,
                self_candidate_key=o["self_candidate"], request_timeout=o["timeout"],
                transport=o["transport"], owner=owner,
            )
        except services.JobError as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        if o["shared"] and owner is not None:
            judge.is_shared = True
            judge.save(update_fields=["is_shared"])
        self.stdout.write(f"judge {judge.name} ({judge.kind}) created")
