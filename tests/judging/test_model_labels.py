"""The model registry's words (issue 22 item 8): one name, "Models", for the list in the navigation,
titles, headings and links; a model's roles are "judge" and "answer generator", and a baseline is
never labelled a generator (it only judges, whatever its stored flag says)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from judging.models import RegisteredModel

pytestmark = pytest.mark.django_db

MODELS_URL = "/judging/judges/"  # the URL keeps its name (a contract); only the words changed


def _roles(html: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-model="([^"]+)">.*?<td class="roles">(.*?)</td>', html, re.S))


def test_a_baseline_is_a_baseline_judge_never_a_generator(researcher_client, researcher):
    # Created as older code and imports do: the stored generator flag keeps its default (True).
    RegisteredModel.objects.create(
        name="longer", kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=researcher
    )
    RegisteredModel.objects.create(name="mtbench", kind=RegisteredModel.Kind.IMPORTED, owner=researcher)
    RegisteredModel.objects.create(name="both", base_url="http://127.0.0.1:9/v1", model="m", owner=researcher)
    RegisteredModel.objects.create(
        name="writer", base_url="http://127.0.0.1:9/v1", model="m", owner=researcher, use_as_judge=False
    )
    html = researcher_client.get(MODELS_URL).content.decode()
    roles = _roles(html)
    assert roles == {
        "longer": "baseline judge",
        "mtbench": "imported verdicts",
        "both": "judge, answer generator",
        "writer": "answer generator",
    }
    assert "generator" not in roles["longer"] and "generator" not in roles["mtbench"]


def test_the_registry_is_called_models_everywhere(researcher_client, researcher):
    judge = RegisteredModel.objects.create(name="mine", base_url="http://127.0.0.1:9/v1", model="m", owner=researcher)
    pages = {
        "list": MODELS_URL,
        "new": reverse("judging:judge-new"),
        "edit": reverse("judging:judge-edit", args=[judge.pk]),
        "delete": reverse("judging:judge-delete", args=[judge.pk]),
        "judge jobs": reverse("judging:jobs"),
        "generation jobs": reverse("judging:generations"),
    }
    titles = {}
    for name, url in pages.items():
        html = researcher_client.get(url).content.decode()
        nav = html[html.index("<nav>") : html.index("</nav>")]
        assert f'<a href="{MODELS_URL}">Models</a>' in nav, name
        # Every link to the registry says "Models" (possibly with a back arrow), never "Judges"
        # (the delete page's cancel link, "Keep it", goes back to it too).
        for text in re.findall(rf'<a[^>]*href="{MODELS_URL}"[^>]*>(.*?)</a>', html):
            assert text.replace("&larr;", "").strip() in ("Models", "Keep it"), (name, text)
        titles[name] = re.search(r"<title>(.*?)</title>", html).group(1)
        heading = re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)
        assert "Judges" not in titles[name] and "Judges" not in heading, name
    assert titles["list"] == "Models" and titles["new"] == "New model"
    assert titles["edit"] == "Edit model mine" and titles["delete"] == "Delete model mine"
    assert "New model</a>" in researcher_client.get(MODELS_URL).content.decode()  # the button
