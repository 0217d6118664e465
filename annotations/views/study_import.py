"""Researcher upload of a generic study (docs/study-format.md): upload, preview, confirm.

Step 1 (POST ``study_import``): the files are streamed into a staging folder of the uploader's,
DATA_DIR/uploads/study-import/u<user id>/<random id>/ (each at most STUDY_IMPORT_MAX_BYTES),
checked exactly as ``import_study`` checks them, and the preview lists every problem (up to
50, then a count), rows per file, what would be created and the first instruction's content.
Nothing is written to the database. The staged files survive a preview with problems: the next
preview reuses them and takes only the files picked again (or leaves out an optional one), so a
researcher fixes one file without picking the others again. Each preview moves the files to a
fresh random id; the id, the file names and the chosen target are kept in the session, never in
hidden fields, and the folder is found only under the requesting user's own directory, so a
session can only preview and confirm what its own user uploaded.
Step 2 (POST ``study_import_confirm``): the stored files of a clean preview are read and checked
again and imported in one transaction, into a new study owned by the uploader or a study of
source 'manual' the uploader manages (``Study.objects.manageable_by``); the staging folder is then
removed. Staged uploads never confirmed are swept after a day, and a user keeps at most
``MAX_STAGED_PER_USER`` of them.
``study_import_example`` serves a small made-up example study as a zip.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotations.importers.base import BadInput
from annotations.importers.generic import FILES, StudyPlan, read_study
from annotations.importers.generic_example import example_zip
from annotations.importers.generic_preview import first_instruction
from annotations.importers.generic_write import import_study
from annotations.importers.study_extensions import extensions
from annotations.models import Study
from annotations.services.studies import SLUG_NOT_AVAILABLE
from cobbler_site.foundation.access import Audience, allow

SESSION_KEY = "study_import"
TEMPLATE = "annotations/researcher/study_import.html"
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
STALE_SECONDS = 24 * 3600  # uploads never confirmed are swept after a day
MAX_STAGED_PER_USER = 3  # staged uploads a user keeps (several tabs or sessions); older ones go
# The upload takes the content and human files, and the judge outputs (judging's extension of
# the format, annotations.importers.study_extensions); settings and gold come by the command.
UPLOAD_FILES = (*FILES, "judges.jsonl", "judgments.jsonl")
FIELD_OF = {name: name.removesuffix(".jsonl") for name in UPLOAD_FILES}  # form field per file
REQUIRED = {name for name, (_schema, required) in FILES.items() if required}


def max_upload_bytes() -> int:
    return int(getattr(settings, "STUDY_IMPORT_MAX_BYTES", DEFAULT_MAX_BYTES))


def uploads_root() -> Path:
    return Path(settings.DATA_DIR) / "uploads" / "study-import"


def _user_root(user) -> Path:
    """The user's own staging directory: a session's upload id is looked up only under it."""
    return uploads_root() / f"u{int(user.pk)}"


def _replaceable(user) -> list[Study]:
    return list(Study.objects.manageable_by(user).filter(source=Study.Source.MANUAL).order_by("slug"))


@dataclass
class Staged:
    """The files a session uploaded and has not imported yet (the session's SESSION_KEY entry)."""

    id: str
    folder: Path
    files: dict[str, dict]  # file name -> {"size": bytes, "original": the name it was uploaded as}
    pending: dict  # the session entry: id, user, files, ok, slug, name, replace

    @property
    def ok(self) -> bool:
        """Whether the last preview of exactly these files found no problem."""
        return bool(self.pending.get("ok"))


def _valid_id(upload_id: object) -> bool:
    return (
        isinstance(upload_id, str)
        and 0 < len(upload_id) <= 64
        and upload_id.replace("-", "").replace("_", "").isalnum()
    )


def _staged(request: HttpRequest) -> Staged | None:
    """The session's staged upload, if it is the requesting user's and its folder still exists."""
    pending = request.session.get(SESSION_KEY)
    if not isinstance(pending, dict) or pending.get("user") != request.user.pk or not _valid_id(pending.get("id")):
        return None
    folder = _user_root(request.user) / pending["id"]
    if not folder.is_dir():
        return None
    listed = pending.get("files")
    files = {
        name: meta
        for name, meta in (listed.items() if isinstance(listed, dict) else ())
        if name in FIELD_OF and isinstance(meta, dict) and (folder / name).is_file()
    }
    return Staged(pending["id"], folder, files, pending)


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
    # Not required here: a file staged by an earlier preview counts (checked in clean).
    instructions = forms.FileField(required=False, help_text="instructions.jsonl (required)")
    responses = forms.FileField(required=False, help_text="responses.jsonl (required)")
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

    def __init__(
        self, *args, user=None, too_big: Set[str] = frozenset(), staged: Mapping[str, dict] | None = None, **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.too_big = too_big
        self.staged = dict(staged or {})
        self.studies = {s.slug: s for s in _replaceable(user)}
        cast(forms.ChoiceField, self.fields["replace"]).choices = [
            ("", "— a new study —"),
            *((s, s) for s in self.studies),
        ]
        for name, meta in self.staged.items():
            field = self.fields[FIELD_OF[name]]
            size = filesizeformat(meta.get("size", 0))
            # Our own words only (help_text is rendered unescaped): the file's name and size.
            field.help_text = f"using the file you uploaded: {name} ({size}); pick a file only to replace it"
            field.label = f"{FIELD_OF[name].capitalize()} (replace)"
            if name not in REQUIRED:
                self.fields[f"drop_{FIELD_OF[name]}"] = forms.BooleanField(
                    required=False, label=f"Leave out {name}", help_text="import without the uploaded file"
                )

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        for name, field in FIELD_OF.items():
            upload = data.get(field)
            if field in self.too_big or (upload is not None and upload.size > max_upload_bytes()):
                self.errors.pop(field, None)
                self.add_error(field, f"larger than {max_upload_bytes()} bytes (STUDY_IMPORT_MAX_BYTES)")
            elif name in REQUIRED and upload is None and name not in self.staged:
                self.add_error(field, "This field is required.")
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


def _restage(request: HttpRequest, staged: Staged | None, uploads: dict[str, UploadedFile], drop: Set[str]) -> Staged:
    """Move the kept staged files and write the new uploads into a fresh folder (a fresh id, so a
    confirm names exactly the files its preview read); the session then points at it."""
    upload_id = secrets.token_urlsafe(18)
    folder = _user_root(request.user) / upload_id
    folder.mkdir(parents=True)
    files: dict[str, dict] = {}
    if staged is not None:
        for name, meta in staged.files.items():
            if name not in uploads and name not in drop:
                try:
                    os.replace(staged.folder / name, folder / name)
                except FileNotFoundError:  # a concurrent request of this session took it first
                    continue
                files[name] = meta
        shutil.rmtree(staged.folder, ignore_errors=True)
    for name, upload in uploads.items():
        with (folder / name).open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        files[name] = {"size": upload.size, "original": str(upload.name or name)[:120]}
    files = {name: files[name] for name in UPLOAD_FILES if name in files}  # the format's order
    pending = {"id": upload_id, "user": request.user.pk, "files": files, "ok": False}
    request.session[SESSION_KEY] = pending
    _sweep(keep=folder)
    return Staged(upload_id, folder, files, pending)


def _discard(request: HttpRequest) -> None:
    staged = _staged(request)
    request.session.pop(SESSION_KEY, None)
    if staged is not None:
        shutil.rmtree(staged.folder, ignore_errors=True)


def _sweep(keep: Path) -> None:
    """Remove staged uploads older than a day, and all but the newest few of ``keep``'s user."""
    root = uploads_root()
    if not root.is_dir():
        return
    cutoff = time.time() - STALE_SECONDS
    try:
        for entry in root.iterdir():
            if not entry.is_dir():
                continue
            folders = [f for f in entry.iterdir() if f.is_dir()] if entry.name.startswith("u") else []
            if not folders and entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry, ignore_errors=True)  # an empty user directory, or an older layout's upload
            for folder in folders:
                if folder != keep and folder.stat().st_mtime < cutoff:
                    shutil.rmtree(folder, ignore_errors=True)
        mine = sorted(
            (f for f in keep.parent.iterdir() if f.is_dir() and f != keep),
            key=lambda f: f.stat().st_mtime,
            reverse=True,
        )
        for folder in mine[MAX_STAGED_PER_USER - 1 :]:
            shutil.rmtree(folder, ignore_errors=True)
    except FileNotFoundError:  # another request swept the same folder meanwhile; the next sweep goes on
        return


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


def _staged_list(staged: Staged | None) -> list[dict]:
    """The staged files as the page lists them ("using the files you uploaded: …")."""
    if staged is None:
        return []
    return [
        {"name": name, "original": meta.get("original", name), "size": meta.get("size", 0)}
        for name, meta in staged.files.items()
    ]


def _page(request: HttpRequest, context: dict, *, status: int, staged: Staged | None) -> HttpResponse:
    return render(
        request,
        TEMPLATE,
        {"max_bytes": max_upload_bytes(), "staged_files": _staged_list(staged)} | context,
        status=status,
    )


def _preview(request: HttpRequest, form: StudyUploadForm, plan: StudyPlan, staged: Staged) -> HttpResponse:
    files = [{"name": name, "lines": plan.lines.get(name), "sha256": plan.digests.get(name)} for name in UPLOAD_FILES]
    context = {
        "form": form,
        "plan": plan,
        "files": files,
        "counts": plan.counts() if plan.ok else None,
        "by_condition": plan.votes_by_condition(),
        # e.g. judges, judge calls, judge calls without a verdict (judging's judge outputs)
        "extension_counts": [(k, n) for ext in extensions() for k, n in ext.counts(plan).items()] if plan.ok else [],
        "sample": first_instruction(plan) if plan.ok else None,
        "target": _target_summary(staged.pending),
        "upload_id": staged.id if plan.ok else "",
    }
    return _page(request, context, status=200 if plan.ok else 422, staged=staged)


@allow(Audience.RESEARCHER)
@csrf_exempt  # only so the size limit is installed before the body is read; csrf_protect below checks
@require_http_methods(["GET", "POST"])
def study_import(request: HttpRequest) -> HttpResponse:
    limit = SizeLimit(request, max_upload_bytes())
    if request.method == "POST":
        # Refused unread: more than the four files at their limit (plus the form fields).
        if int(request.META.get("CONTENT_LENGTH") or 0) > len(FIELD_OF) * max_upload_bytes() + (1 << 20):
            return _page(
                request,
                {"form": StudyUploadForm(user=request.user), "too_large": True},
                status=413,
                staged=_staged(request),
            )
        # Still a plain list: nothing has read the body yet (Django makes it immutable then).
        cast(list, request.upload_handlers).insert(0, limit)
    return _study_import(request, limit)


@csrf_protect
def _study_import(request: HttpRequest, limit: SizeLimit) -> HttpResponse:
    staged = _staged(request)
    if request.method == "POST":
        if request.POST.get("forget"):
            _discard(request)
            messages.info(request, "The uploaded files were removed.")
            return redirect(reverse("annotations:study_import"))
        # Whatever else is wrong with the form, the files that arrived whole are kept for the next try.
        uploads = {
            name: upload
            for name, field in FIELD_OF.items()
            if (upload := request.FILES.get(field)) is not None
            and field not in limit.too_big
            and (upload.size or 0) <= max_upload_bytes()
        }
        drop = {
            name
            for name, field in FIELD_OF.items()
            if name not in REQUIRED
            and staged is not None
            and name in staged.files
            and (
                request.POST.get(f"drop_{field}")
                # Every required file picked anew is a new upload, not a correction: the optional
                # files kept from an earlier one (judges, gold, ...) are not slipped into it.
                or (uploads.keys() >= REQUIRED and name not in uploads)
            )
        }
        if uploads or drop or staged is not None:
            staged = _restage(request, staged, uploads, drop)
    form = StudyUploadForm(
        request.POST or None,
        request.FILES or None,
        user=request.user,
        too_big=limit.too_big,
        staged=staged.files if staged is not None else None,
    )
    if request.method == "POST" and form.is_valid() and staged is not None:
        data = form.cleaned_data
        plan = read_study(staged.folder)
        staged.pending |= {
            "ok": plan.ok,
            "slug": data["replace"] or data["slug"],
            "name": data["name"],
            "replace": bool(data["replace"]),
        }
        request.session[SESSION_KEY] = staged.pending
        return _preview(request, form, plan, staged)
    status = 422 if form.errors else 200
    return _page(request, {"form": form}, status=status, staged=staged)


@allow(Audience.RESEARCHER)
@require_POST
def study_import_confirm(request: HttpRequest) -> HttpResponse:
    staged = _staged(request)
    # The posted id only says which preview the button belonged to; the session says what it holds.
    if staged is None or not staged.ok or request.POST.get("upload") != staged.id:
        messages.error(request, "That upload is no longer pending here; please preview the files again.")
        return redirect(reverse("annotations:study_import"))
    pending = staged.pending
    slug = pending["slug"]
    existing = Study.objects.filter(slug=slug).first()
    if existing is not None and (not pending["replace"] or existing not in _replaceable(request.user)):
        _not_imported(request, staged, SLUG_NOT_AVAILABLE)
        return redirect(reverse("annotations:study_import"))
    try:
        report = import_study(root=staged.folder, slug=slug, name=pending["name"], created_by=request.user)
    except BadInput as exc:
        _not_imported(request, staged, str(exc))
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


def _not_imported(request: HttpRequest, staged: Staged, why: str) -> None:
    """Nothing was imported: the files stay staged, but need a new preview before a confirm."""
    request.session[SESSION_KEY] = staged.pending | {"ok": False}
    messages.error(request, f"Nothing was imported: {why.rstrip('.')}. Your files are kept; preview them again.")


@allow(Audience.RESEARCHER)
@require_GET
def study_import_example(request: HttpRequest) -> HttpResponse:
    """A small made-up study in the format (annotations.importers.generic_example), as a zip."""
    # The judge's name carries the user id: an imported judge's name is its owner's alone.
    response = HttpResponse(example_zip(judge=f"example-judge-{request.user.pk}"), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="example-study.zip"'
    return response
