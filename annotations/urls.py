from __future__ import annotations

from django.urls import path

from annotations.views import researcher, review, study_import, worker

app_name = "annotations"
urlpatterns = [
    # Crowd workers (no account; the signed cookie says who they are).
    path("s/<slug:slug>/start", worker.start, name="start"),
    path("s/<slug:slug>/consent", worker.consent, name="consent"),
    path("s/<slug:slug>/instructions", worker.instructions, name="instructions"),
    path("s/<slug:slug>/qualify", worker.qualify, name="qualify"),
    path("s/<slug:slug>/work", worker.work, name="work"),
    path("s/<slug:slug>/a/<int:assignment_id>/<int:position>", worker.task, name="task"),
    path("s/<slug:slug>/survey/pre", worker.survey, {"phase": "pre"}, name="pre-survey"),
    path("s/<slug:slug>/survey/post", worker.survey, {"phase": "post"}, name="post-survey"),
    path("s/<slug:slug>/done", worker.done, name="done"),
    # Researchers (staff).
    path("crowd/studies/", researcher.studies, name="studies"),
    path("crowd/studies/<slug:slug>/", researcher.study, name="study"),
    path("crowd/studies/<slug:slug>/generate", researcher.generate, name="generate"),
    path("crowd/studies/<slug:slug>/rounds", researcher.add_round, name="add-round"),
    path("crowd/studies/<slug:slug>/settings", researcher.study_settings, name="study-settings"),
    path("crowd/studies/<slug:slug>/review/", review.review_list, name="review-list"),
    path("crowd/studies/<slug:slug>/review/lookup", review.review_lookup, name="review-lookup"),
    path("crowd/studies/<slug:slug>/review/bulk", review.review_bulk, name="review-bulk"),
    path("crowd/studies/<slug:slug>/review/history.<str:fmt>", review.review_history, name="review-history"),
    path("crowd/studies/<slug:slug>/review/<int:assignment_id>", review.review, name="review"),
    path("crowd/studies/<slug:slug>/export.<str:fmt>", researcher.export, name="export"),
    # Upload a study in the generic format: preview (nothing written), then confirm.
    path("crowd/import/", study_import.study_import, name="study_import"),
    path("crowd/import/confirm", study_import.study_import_confirm, name="study_import_confirm"),
    path("crowd/import/example.zip", study_import.study_import_example, name="study_import_example"),
]
