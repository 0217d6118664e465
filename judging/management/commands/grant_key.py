"""`grant_key JUDGE_KEY_X (--user NAME | --group NAME)... [--revoke]` or `grant_key --list`.

Lets the named users and groups use a server key variable in their models (the value stays in
the server's environment; see judging.models.grants). ``--revoke`` takes the grant back: their
models keep the variable but every request is refused until it is granted again. Bad input (a
variable without JUDGE_KEY_ENV_PREFIX, an unknown user or group, nothing to grant to) exits
non-zero with one line and changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from judging.models import KeyGrant
from judging.models.grants import validate_api_key_env


class Command(BaseCommand):
    help = "Grant (or revoke) the use of a server key variable to users and groups."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("variable", nargs="?", default="", help="e.g. JUDGE_KEY_OPENAI")
        parser.add_argument("--user", action="append", default=[], help="a username (repeatable)")
        parser.add_argument("--group", action="append", default=[], help="a group name (repeatable)")
        parser.add_argument("--revoke", action="store_true", help="take the grant back from these users and groups")
        parser.add_argument("--list", action="store_true", help="show every grant")

    def handle(self, *args: Any, **o: Any) -> None:
        if o["list"]:
            self._list()
            return
        variable = o["variable"]
        if not variable:
            raise CommandError("name the key variable, e.g. grant_key JUDGE_KEY_OPENAI --user alice")
        try:
            validate_api_key_env(variable)
        except ValidationError as exc:
            raise CommandError(exc.messages[0]) from None
        if not (o["user"] or o["group"]):
            raise CommandError("say whom: --user NAME and/or --group NAME")
        users = [self._user(name) for name in o["user"]]
        groups = [self._group(name) for name in o["group"]]
        whom = ", ".join([*(f"user {u.get_username()}" for u in users), *(f"group {g.name}" for g in groups)])
        with transaction.atomic():
            if o["revoke"]:
                grant = KeyGrant.objects.filter(variable=variable).first()
                if grant is not None:
                    grant.users.remove(*users)
                    grant.groups.remove(*groups)
                self.stdout.write(f"{variable} revoked from {whom}")
                return
            grant, _ = KeyGrant.objects.get_or_create(variable=variable)
            grant.users.add(*users)
            grant.groups.add(*groups)
        self.stdout.write(f"{variable} granted to {whom}")

    def _user(self, name: str) -> Any:
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise CommandError(f"no user called {name!r}")
        return user

    def _group(self, name: str) -> Group:
        group = Group.objects.filter(name=name).first()
        if group is None:
            raise CommandError(f"no group called {name!r}")
        return group

    def _list(self) -> None:
        grants = KeyGrant.objects.prefetch_related("users", "groups").order_by("variable")
        for grant in grants:
            users = ",".join(sorted(u.get_username() for u in grant.users.all())) or "-"
            groups = ",".join(sorted(g.name for g in grant.groups.all())) or "-"
            self.stdout.write(f"{grant.variable}\tusers {users}\tgroups {groups}")
        if not grants:
            self.stdout.write("no grants (only superusers and owner-less models use server keys)")
