from __future__ import annotations

import re

from django.test import Client


def form_fields(client: Client, url: str) -> tuple[str, list[str]]:
    """Render a task page; return its token and the answer values in display order."""
    html = client.get(url).content.decode()
    token = re.search(r'name="token" value="([^"]+)"', html).group(1)
    return token, re.findall(r'name="answer" value="([^"]+)"', html)
