from __future__ import annotations

from django.db import models

from annotations.models import Candidate, Condition, Instruction, Pair, Response, Study
from annotations.vocabulary import JudgeSlot
from cobbler_site.foundation.access import owned_by
from judging.models.judges import RegisteredModel
from judging.models.templates import PromptTemplate
from judging.models.work import LLMJob, WorkRow
from judging.prompts import templates
from judging.vocabulary import Parser, Presentation, Strength, Verdict, VerdictFormat


class JudgeJobQuerySet(models.QuerySet):
    def manageable_by(self, user) -> JudgeJobQuerySet:  # a user or AnonymousUser
        """Jobs ``user`` may watch, pause, resume and cancel: their own (or unowned) jobs on a
        study they manage (cobbler_site.foundation.access). Another researcher's job on a shared study
        still counts in that study's reports, but only its creator controls it."""
        return self.filter(owned_by(user), study__in=Study.objects.manageable_by(user))

    def latest_completed(self, study: Study) -> dict[tuple[int, str], int]:
        """The re-run rule's default (docs/methods.md "Re-runs"): for each (judge id, condition)
        the latest (highest id) COMPLETED job of the study that has calls of that condition."""
        chosen: dict[tuple[int, str], int] = {}
        combos = Judgment.objects.filter(job__study=study, job__status=JudgeJob.Status.COMPLETED)
        for job, judge, condition in combos.values_list("job_id", "job__judge_id", "condition").distinct():
            chosen[(judge, condition)] = max(job, chosen.get((judge, condition), job))
        return chosen


class JudgeJob(LLMJob):
    """study x judge x conditions x pair set, fanned out through Celery."""

    class PairSet(models.TextChoices):
        ALL = "all", "All pairs per instruction (as in the paper)"
        HUMAN = "human", "Exactly the pairs the humans saw"

    study = models.ForeignKey(Study, models.CASCADE, related_name="judge_jobs")
    judge = models.ForeignKey(RegisteredModel, models.PROTECT, related_name="jobs")
    conditions = models.JSONField(default=list)
    pair_set = models.CharField(max_length=8, choices=PairSet, default=PairSet.ALL)
    # The CoBBLEr prompt version ("v1", "v1-paper"), or the judge's template version at start:
    # a built-in's name ("arena-hard-v1") or a researcher's "<name>@<hash12>" (``own_template``).
    prompt_version = models.CharField(max_length=80, blank=True)
    own_template = models.ForeignKey(PromptTemplate, models.PROTECT, null=True, blank=True, related_name="jobs")
    template_hash = models.CharField(max_length=64, blank=True)  # sha256 of the template's content
    # How answers are read, fixed when the job starts (the judge may be edited later):
    # cobbler uses ``parser``; the other formats judging.verdicts (with ``verdict_spec`` for regex).
    verdict_format = models.CharField(max_length=16, choices=VerdictFormat, default=VerdictFormat.COBBLER)
    verdict_spec = models.JSONField(default=dict, blank=True)
    parser = models.CharField(max_length=16, choices=Parser, default=Parser.ROBUST)
    bandwagon_percent = models.PositiveSmallIntegerField(default=85)
    invalid = models.PositiveIntegerField(default=0)  # outputs with no verdict (a tie is a verdict)
    ties = models.PositiveIntegerField(default=0)
    # The study's candidate that is this judge's own model, resolved when the job starts:
    # the candidate a generation job of the same registered model produced, else the
    # judge's ``self_candidate_key``. Egocentric bias is measured against it.
    self_candidate_key = models.CharField(max_length=64, blank=True)

    objects = JudgeJobQuerySet.as_manager()

    def __str__(self) -> str:
        return f"job {self.pk}: {self.judge} on {self.study}"

    @property
    def called_model(self) -> RegisteredModel:
        return self.judge

    def template(self) -> templates.Template | None:
        """The template this job's prompts are rendered from; None for a CoBBLEr prompt version."""
        if self.own_template_id:
            assert self.own_template is not None
            return self.own_template.as_template()
        return templates.builtin(self.prompt_version) if templates.is_builtin(self.prompt_version) else None


class Judgment(WorkRow):
    """One judge call: a pair, under a condition, in one presentation.

    Semantics shared by the judging and analysis apps (docs/methods.md, 'Order run
    counterbalancing' and 'Rows, hits and mirrors'):
    - ``presentation`` 1 is the prompt that feeds rankings, 2 its switched twin.
    - order / compassion: presentation 1 puts a seeded, balanced choice of the two
      responses in the first slot (half the pairs ``pair.response_a``, half
      ``response_b``; ``judging.conditions.a_first_plan``), or always ``pair.response_a``
      (the candidate earlier in the study's order, "m1") under a paper prompt version;
      presentation 2 swaps the responses and keeps the slot labels.
    - bandwagon / attentional / selective: one seeded random arrangement, the same in
      both presentations; presentation 1 cues the first slot, 2 the second
      (``cue = {"cue_slot": "first"|"second", "percent": 85}`` or ``{..., "distractor": s}``).
    - plain: presentation 1 only, with a seeded random arrangement.
    - ``choice`` is the *slot* chosen ("first" = System Star, "second" = System Square),
      ``chosen_response`` the response behind it; both empty when ``valid`` is False.
    - ``verdict`` is what the judge said: "first" / "second" (= ``choice``), "tie", or "" (no
      verdict). A tie is ``valid`` False with ``choice`` "": ``valid`` keeps meaning "a slot was
      chosen", which is what every slot count in analysis reads, so a tie never counts as a slot.
      ``strength`` is "strong" / "slight" where the verdict format grades it (Arena-Hard), else "".
    - ``template_version`` / ``template_hash``: the prompt template (or CoBBLEr prompt version)
      the call was rendered from and the sha256 of its content; ``prompt_hash`` the messages'.
    """

    job = models.ForeignKey(JudgeJob, models.CASCADE, related_name="judgments")
    pair = models.ForeignKey(Pair, models.CASCADE, related_name="judgments")
    condition = models.CharField(max_length=16, choices=Condition)
    presentation = models.PositiveSmallIntegerField(choices=Presentation)
    # The response shown in the first slot ("System Star").
    slot1_response = models.ForeignKey(Response, models.CASCADE, related_name="+")
    # Condition details: cue slot, percent, distractor sentence, frequency layout...
    cue = models.JSONField(default=dict, blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    # The slot chosen: "first" / "second" ("" when invalid or not yet judged).
    choice = models.CharField(max_length=8, choices=JudgeSlot, blank=True)
    chosen_response = models.ForeignKey(Response, models.CASCADE, null=True, blank=True, related_name="+")
    valid = models.BooleanField(default=False)
    verdict = models.CharField(max_length=8, choices=Verdict, blank=True)  # "" = no verdict
    strength = models.CharField(max_length=8, choices=Strength, blank=True)  # "" = not graded
    template_version = models.CharField(max_length=80, blank=True)
    template_hash = models.CharField(max_length=64, blank=True)
    # The prompt of an imported call, as the file gave it (judgments.jsonl ``prompt``); the
    # platform's own calls are rendered again from their template, so theirs is not kept.
    imported_prompt = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "pair", "condition", "presentation"], name="one_judgment_per_call"),
        ]
        indexes = [models.Index(fields=["job", "status"])]

    def __str__(self) -> str:
        return f"{self.job_id}/{self.pair_id}/{self.condition}/{self.presentation}"


class AggregateJudgment(models.Model):
    """Imported per-instruction win counts (CoBBLEr published no per-pair logs).

    ``wins`` = pairs the candidate won in prompt 1 of ``run``. Kept apart from
    Judgment so nobody mistakes them for single calls.
    """

    judge = models.ForeignKey(RegisteredModel, models.CASCADE, related_name="aggregates")
    study = models.ForeignKey(Study, models.CASCADE, related_name="aggregate_judgments")
    run = models.CharField(max_length=16)  # order, compassion, bandwagon, distraction, ...
    # v1 = model_annotations/, acl = model_annotations/new/, bias = model_bias/<run>/
    collection = models.CharField(max_length=8)
    instruction = models.ForeignKey(Instruction, models.CASCADE, related_name="+")
    candidate = models.ForeignKey(Candidate, models.CASCADE, related_name="+")
    wins = models.PositiveIntegerField()
    source_file = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "study", "run", "collection", "instruction", "candidate"],
                name="one_aggregate_per_cell",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge}/{self.run}/{self.collection}/{self.instruction_id}/{self.candidate}"
