from __future__ import annotations

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Judge outputs travel with a study's files (annotations' generic format).
        from annotations.importers.study_extensions import register
        from judging.judge_outputs import JudgeOutputsExtension

        register(JudgeOutputsExtension())
