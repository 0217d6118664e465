"""Researcher upload of a generic study (docs/study-format.md): upload, preview, confirm.

Step 1 (POST ``study_import``): the files are streamed to DATA_DIR/uploads/study-import/<id>/
(each at most STUDY_IMPORT_MAX_BYTES), checked exactly as ``import_study`` checks them, and
the preview lists row-level problems, rows per file and what would be created. Nothing is
written to the database. The upload id and the chosen target are kept in the session, never
in hidden fields, so a confirm can only import what this session uploaded and previewed.
Step 2 (POST ``study_import_confirm``): the stored files are read and checked again and
imported in one transaction, into a new study owned by the uploader or a study of source
'manual' the uploader manages (``Study.objects.manageable_by``).
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Set
from pathlib import Path
from typing import cast

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from annotations.importers.base import BadInput
from annotations.importers.generic import FILES, StudyPlan, read_study
from annotations.importers.generic_write import import_study
from annotations.importers.study_extensions import extensions
from annotations.models import Study
from annotations.services.studies import SLUG_NOT_AVAILABLE
from cobbler_site.access import Audience, allow

SESSION_KEY = "study_import"
TEMPLATE = "annotations/researcher/study_import.html"
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
STALE_SECONDS = 24 * 3600  # uploads never confirmed are swept after a day
# The upload takes the content and human files, and the judge outputs (judging's extension of
# the format, annotations.importers.study_extensions); settings and gold come by the command.
UPLOAD_FILES = (*FILES, "judges.jsonl", "judgments.jsonl")
FIELD_OF = {name: name.removesuffix(".jsonl") for name in UPLOAD_FILES}  # form field per file


def max_upload_bytes() -> int:
    return int(getattr(settings, "STUDY_IMPORT_MAX_BYTES", DEFAULT_MAX_BYTES))


def uploads_root() -> Path:
    return Path(settings.DATA_DIR) / "uploads" / "study-import"


def _replaceable(user) -> list[Study]:
    return list(Study.objects.manageable_by(user).filter(source=Study.Source.MANUAL).order_by("slug"))


class SizeLimit(FileUploadHandler):
    """Stops receiving a file once it passes the limit, so an oversized upload never fills the disk."""

    def __init__(self, request: HttpRequest, limit: int) -> None:
        super().__init__(request)
        self.limit, self.received = limit, 0
        self.too_big: set[str] = set()

    def new_file(self, field_name: str, *args, **kwargs) -> None:
        super().new_file(field_name, *args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.too_big.add(self.field_name)
            raise SkipFile
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers build the file


class StudyUploadForm(forms.Form):
    instructions = forms.FileField(help_text="instructions.jsonl (required)")
    responses = forms.FileField(help_text="responses.jsonl (required)")
    votes = forms.FileField(required=False, help_text="votes.jsonl (optional)")
    rankings = forms.FileField(required=False, help_text="rankings.jsonl (optional)")
    judges = forms.FileField(required=False, help_text="judges.jsonl (optional: judges whose outputs you have)")
    judgments = forms.FileField(required=False, help_text="judgments.jsonl (optional: those judges' outputs)")
    replace = forms.ChoiceField(
        required=False,
        label="Replace study",
        help_text="a study of yours (source manual) to replace; empty: a new study",
    )
    slug = forms.SlugField(required=False, max_length=64, help_text="slug of the new study")
    name = forms.CharField(required=False, max_length=200)

    def __init__(self, *args, user=None, too_big: Set[str] = frozenset(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.too_big = too_big
        self.studies = {s.slug: s for s in _replaceable(user)}
        cast(forms.ChoiceField, self.fields["replace"]).choices = [
            ("", "— a new study —"),
            *((s, s) for s in self.studies),
        ]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        for field in FIELD_OF.values():
            upload = data.get(field)
            if field in self.too_big or (upload is not None and upload.size > max_upload_bytes()):
                self.errors.pop(field, None)  # "required" would hide the real reason
                self.add_error(field, f"larger than {max_upload_bytes()} bytes (STUDY_IMPORT_MAX_BYTES)")
        if not data.get("replace"):
            slug = data.get("slug")
            if not slug:
                self.add_error("slug", "Give the new study a slug, or choose a study to replace.")
            elif Study.objects.filter(slug=slug).exists():
                # Neutral whoever holds it: another researcher's private slug is not confirmed.
                self.add_error(
                    "slug", f"{SLUG_NOT_AVAILABLE} To replace one of your studies, pick it under 'Replace study'."
                )
        return data


def _store(files: dict[str, UploadedFile | None]) -> str:
    """Write the uploaded files under a fresh random id; returns the id."""
    upload_id = secrets.token_urlsafe(18)
    folder = uploads_root() / upload_id
    folder.mkdir(parents=True)
    for name, field in FIELD_OF.items():
        upload = files.get(field)
        if upload is None:
            continue
        with (folder / name).open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
    return upload_id


def _folder(upload_id: str) -> Path | None:
    """The session's upload folder, if the id is one we made and it still exists."""
    if not (isinstance(upload_id, str) and upload_id.replace("-", "").replace("_", "").isalnum()):
        return None
    folder = uploads_root() / upload_id
    return folder if folder.is_dir() else None


def _discard(request: HttpRequest) -> None:
    pending = request.session.pop(SESSION_KEY, None)
    folder = _folder(pending.get("id", "")) if isinstance(pending, dict) else None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _sweep() -> None:
    root = uploads_root()
    if not root.is_dir():
        return
    cutoff = time.time() - STALE_SECONDS
    for folder in root.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)


def _target_summary(pending: dict) -> dict:
    study = Study.objects.filter(slug=pending["slug"]).first()
    if study is None:
        return {"new": True, "slug": pending["slug"], "name": pending["name"] or f"Imported study ({pending['slug']})"}
    return {
        "new": False,
        "slug": study.slug,
        "name": pending["name"] or study.name,
        "instructions": study.instructions.count(),
        "batches": study.batches.count(),
    }


def _preview(request: HttpRequest, form: StudyUploadForm, plan: StudyPlan, pending: dict) -> HttpResponse:
    files = [{"name": name, "lines": plan.lines.get(name), "sha256": plan.digests.get(name)} for name in UPLOAD_FILES]
    context = {
        "form": form,
        "plan": plan,
        "files": files,
        "counts": plan.counts() if plan.ok else None,
        "by_condition": plan.votes_by_condition(),
        # e.g. judges, judge calls, judge calls without a verdict (judging's judge outputs)
        "extension_counts": [(k, n) for ext in extensions() for k, n in ext.counts(plan).items()] if plan.ok else [],
        "target": _target_summary(pending),
        "upload_id": pending["id"] if plan.ok else "",
        "max_bytes": max_upload_bytes(),
    }
    return render(request, TEMPLATE, context, status=200 if plan.ok else 422)


@allow(Audience.RESEARCHER)
@csrf_exempt  # only so the size limit is installed before the body is read; csrf_protect below checks
@require_http_methods(["GET", "POST"])
def study_import(request: HttpRequest) -> HttpResponse:
    limit = SizeLimit(request, max_upload_bytes())
    if request.method == "POST":
        # Refused unread: more than the four files at their limit (plus the form fields).
        if int(request.META.get("CONTENT_LENGTH") or 0) > len(FIELD_OF) * max_upload_bytes() + (1 << 20):
            return render(
                request,
                TEMPLATE,
                {"form": StudyUploadForm(user=request.user), "max_bytes": max_upload_bytes(), "too_large": True},
                status=413,
            )
        # Still a plain list: nothing has read the body yet (Django makes it immutable then).
        cast(list, request.upload_handlers).insert(0, limit)
    return _study_import(request, limit)


@csrf_protect
def _study_import(request: HttpRequest, limit: SizeLimit) -> HttpResponse:
    form = StudyUploadForm(request.POST or None, request.FILES or None, user=request.user, too_big=limit.too_big)
    if request.method == "POST" and form.is_valid():
        _discard(request)
        _sweep()
        data = form.cleaned_data
        upload_id = _store({field: data.get(field) for field in FIELD_OF.values()})
        pending = {
            "id": upload_id,
            "slug": data["replace"] or data["slug"],
            "name": data["name"],
            "replace": bool(data["replace"]),
        }
        plan = read_study(uploads_root() / upload_id)
        if not plan.ok:
            shutil.rmtree(uploads_root() / upload_id, ignore_errors=True)
            return _preview(request, form, plan, pending)
        request.session[SESSION_KEY] = pending
        return _preview(request, form, plan, pending)
    status = 422 if form.errors else 200
    return render(request, TEMPLATE, {"form": form, "max_bytes": max_upload_bytes()}, status=status)


@allow(Audience.RESEARCHER)
@require_POST
def study_import_confirm(request: HttpRequest) -> HttpResponse:
    pending = request.session.get(SESSION_KEY)
    folder = _folder(pending.get("id", "")) if isinstance(pending, dict) else None
    # The posted id only says which preview the button belonged to; the session says what it holds.
    if folder is None or not isinstance(pending, dict) or request.POST.get("upload") != pending["id"]:
        messages.error(request, "That upload is no longer pending here; please upload the files again.")
        return redirect(reverse("annotations:study_import"))
    slug = pending["slug"]
    existing = Study.objects.filter(slug=slug).first()
    if existing is not None and (not pending["replace"] or existing not in _replaceable(request.user)):
        _discard(request)
        messages.error(request, f"{SLUG_NOT_AVAILABLE} Nothing was imported.")
        return redirect(reverse("annotations:study_import"))
    try:
        report = import_study(root=folder, slug=slug, name=pending["name"], created_by=request.user)
    except BadInput as exc:
        _discard(request)
        messages.error(request, f"Nothing was imported: {exc}")
        return redirect(reverse("annotations:study_import"))
    _discard(request)
    counts = report.counts()
    messages.success(
        request,
        f"Imported into {slug}: {counts['instructions']} instructions, "
        f"{counts['responses']} responses, {counts['pairs']} pairs, "
        f"{counts['submissions']} human answers" + "".join(f", {line}" for line in report.extension_lines) + ".",
    )
    return redirect(reverse("annotations:study", args=[slug]))
