"""`create_template NAME --user-file FILE --verdict-format F [--system-file FILE] [--spec JSON] [--labels A,B] [--owner U]`.

Saves a researcher's own prompt template (judging.prompts.templates: {instruction}, {answer_a},
{answer_b} required; {reference}, {cue}, {names} optional). Saving the same content again
prints the version already saved; new content under the same name is a new version. Without
``--owner`` the template is public (every researcher may use it). A template that cannot be
used exits non-zero with one line naming the problem and saves nothing. Give it to a judge
with ``create_judge ... --template NAME``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from judging.prompts import templates
from judging.template_services import save_template
from judging.vocabulary import VerdictFormat


def _read(path: str, flag: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {flag} {path}: {exc}") from None


class Command(BaseCommand):
    help = "Save a prompt template of your own (a new version when its content changed)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--user-file", required=True, help="the user message, with its placeholders")
        parser.add_argument("--system-file", default="", help="the system message (literal text)")
        parser.add_argument("--verdict-format", required=True, choices=VerdictFormat.values)
        parser.add_argument("--spec", default="", help="the regex format's spec, JSON")
        parser.add_argument("--labels", default="", help="the two answer labels, comma-separated")
        parser.add_argument("--owner", default="", help="username: a private template of that researcher")

    def handle(self, *args: Any, **o: Any) -> None:
        owner = None
        if o["owner"]:
            owner = get_user_model().objects.filter(username=o["owner"]).first()
            if owner is None:
                raise CommandError(f"no user called {o['owner']!r}")
        spec = None
        if o["spec"]:
            try:
                spec = json.loads(o["spec"])
            except ValueError as exc:
                raise CommandError(f"--spec is not JSON: {exc}") from None
        labels = tuple(x.strip() for x in o["labels"].split(",")) if o["labels"] else templates.DEFAULT_LABELS
        try:
            template, created = save_template(
                owner=owner,
                name=o["name"],
                user=_read(o["user_file"], "--user-file"),
                system=_read(o["system_file"], "--system-file") if o["system_file"] else "",
                verdict_format=o["verdict_format"],
                verdict_spec=spec,
                labels=labels,
            )
        except templates.TemplateError as exc:
            raise CommandError(str(exc)) from None
        said = "saved" if created else "already saved"
        self.stdout.write(f"template {template.version} {said} (verdict format {template.verdict_format})")
