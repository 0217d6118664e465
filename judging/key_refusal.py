"""The refusal of a server key its model's owner holds no grant for (see judging.models.grants).

Kept apart from the models so ``judging.llm``, which never touches the ORM, can name it.
"""

from __future__ import annotations


class KeyNotGranted(ValueError):
    """One line naming the variable, the owner and the command that grants it."""


def refusal_message(variable: str, username: str) -> str:
    return f"{variable} is not granted to {username}; ask an admin: manage.py grant_key {variable} --user {username}"
