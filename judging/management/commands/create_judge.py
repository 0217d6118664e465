"""`create_judge NAME --base-url URL --model M [--api-key-env JUDGE_KEY_X]` or `create_judge NAME --baseline longer`.

Registers a model in the registry with its roles (``--roles judge,generator``; default: both
for an endpoint model, judge for a baseline), its shared limits (``--rpm``, ``--tpm``,
``--max-concurrency``) and prices (``--price-in/--price-out``, ``--batch-price-in/--batch-price-out``;
blank batch prices are half the synchronous ones), and ``--template`` the prompt it is asked with
(a built-in such as ``arena-hard-v1`` or one saved with ``create_template``; its verdict format
comes with it). ``--self-candidate`` is optional: a model that
also wrote answers in a study is measured for self-preference automatically.

The key variable must start with JUDGE_KEY_ENV_PREFIX (default ``JUDGE_KEY_``) and the base URL
must be allowed by JUDGE_ALLOWED_HOSTS; otherwise the command exits non-zero with one line and
writes nothing. Without ``--owner`` the model is public (every researcher may use it).
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from judging import services
from judging.prompts import templates
from judging.template_services import find_template
from judging.vocabulary import Transport

ROLES = ("judge", "generator")


def _roles(raw: str, *, baseline: bool) -> tuple[bool, bool]:
    """'judge,generator' -> (judge, generator); blank -> the default for the kind."""
    if not raw.strip():
        return True, not baseline
    names = [r.strip() for r in raw.split(",") if r.strip()]
    unknown = [r for r in names if r not in ROLES]
    if unknown or not names:
        raise CommandError(f"unknown role {unknown[0] if unknown else raw!r}; use judge, generator or both")
    if baseline and "generator" in names:
        raise CommandError("a baseline can only judge (it writes no answers); use --roles judge")
    return "judge" in names, "generator" in names


def _price(raw: str | None, flag: str) -> Decimal | None:
    if raw is None or raw == "":
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise CommandError(f"{flag} must be a number of USD per 1k tokens, got {raw!r}") from None
    if value < 0 or not value.is_finite():
        raise CommandError(f"{flag} must be a non-negative number, got {raw!r}")
    return value


def _set_template(judge: Any, reference: str, owner: Any) -> None:
    """A built-in by name, else a saved template of ``owner`` (or a public one); checked by RegisteredModel.clean."""
    if templates.is_builtin(reference):
        judge.prompt_template = reference
    else:
        found = find_template(reference, owner=owner)
        if found is None:
            raise CommandError(
                f"no prompt template {reference!r}: built-ins are {', '.join(templates.builtin_versions())}; "
                "save your own with create_template"
            )
        judge.own_template = found
    judge.full_clean()


class Command(BaseCommand):
    help = "Create a judge: an OpenAI-compatible endpoint or a built-in baseline."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--baseline", default="", choices=["", *services.BASELINES])
        parser.add_argument("--base-url", default="")
        parser.add_argument("--model", default="")
        parser.add_argument(
            "--api-key-env", default="", help="name of the env var holding the key, e.g. JUDGE_KEY_OPENAI"
        )
        parser.add_argument("--generation", default="{}", help='JSON, e.g. {"temperature": 0}')
        parser.add_argument("--max-concurrency", type=int, default=8)
        parser.add_argument("--rpm", type=int, default=600, help="requests per minute, all workers (0 = no limit)")
        parser.add_argument("--tpm", type=int, default=0, help="tokens per minute, all workers (0 = no limit)")
        parser.add_argument(
            "--roles", default="", help="judge, generator or judge,generator (default: both; a baseline: judge)"
        )
        parser.add_argument("--price-in", default="0", help="USD per 1k input tokens")
        parser.add_argument("--price-out", default="0", help="USD per 1k output tokens")
        parser.add_argument("--batch-price-in", default=None, help="Batch API USD per 1k input tokens (default: half)")
        parser.add_argument(
            "--batch-price-out", default=None, help="Batch API USD per 1k output tokens (default: half)"
        )
        parser.add_argument(
            "--self-candidate",
            default="",
            help="optional: the candidate key that is this model (found automatically when "
            "the model generated a study's answers)",
        )
        parser.add_argument("--timeout", type=float, default=60.0)
        parser.add_argument(
            "--transport",
            default=Transport.OPENAI,
            choices=[Transport.OPENAI, Transport.HTTP],
            help="openai SDK (default) or lean HTTP for high-throughput local servers",
        )
        parser.add_argument(
            "--template",
            default="",
            help="the prompt template the judge is asked with: a built-in (arena-hard-v1, mt-bench-pair-v1...) "
            "or one saved with create_template (NAME or NAME@HASH); default the CoBBLEr prompt",
        )
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
        use_as_judge, use_as_generator = _roles(o["roles"], baseline=bool(o["baseline"]))
        if o["tpm"] < 0:
            raise CommandError("--tpm must be 0 (no limit) or more")
        batch_in = _price(o["batch_price_in"], "--batch-price-in")
        batch_out = _price(o["batch_price_out"], "--batch-price-out")
        owner = None
        if o["owner"]:
            owner = get_user_model().objects.filter(username=o["owner"]).first()
            if owner is None:
                raise CommandError(f"no user called {o['owner']!r}")
        try:
            with transaction.atomic():  # the registry row and its extra fields, or nothing
                judge = self._create(o, generation, price_in, price_out, owner)
                judge.use_as_judge, judge.use_as_generator = use_as_judge, use_as_generator
                judge.batch_price_in_per_1k, judge.batch_price_out_per_1k = batch_in, batch_out
                if not o["baseline"]:
                    judge.tokens_per_minute = o["tpm"]
                if o["shared"] and owner is not None:
                    judge.is_shared = True
                if o["template"]:
                    _set_template(judge, o["template"], owner)
                judge.save(
                    update_fields=[
                        "use_as_judge",
                        "use_as_generator",
                        "batch_price_in_per_1k",
                        "batch_price_out_per_1k",
                        "tokens_per_minute",
                        "is_shared",
                        "prompt_template",
                        "own_template",
                    ]
                )
        except services.JobError as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        roles = "+".join(r for r, on in zip(ROLES, (use_as_judge, use_as_generator), strict=True) if on)
        self.stdout.write(f"judge {judge.name} ({judge.kind}) created; roles {roles}")

    def _create(self, o: dict[str, Any], generation: dict, price_in: Decimal, price_out: Decimal, owner: Any) -> Any:
        return services.create_judge(
            name=o["name"],
            baseline=o["baseline"],
            base_url=o["base_url"],
            model=o["model"],
            api_key_env=o["api_key_env"],
            generation=generation,
            max_concurrency=o["max_concurrency"],
            requests_per_minute=o["rpm"],
            price_in_per_1k=price_in,
            price_out_per_1k=price_out,
            self_candidate_key=o["self_candidate"],
            request_timeout=o["timeout"],
            transport=o["transport"],
            owner=owner,
        )
