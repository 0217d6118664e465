from django.db import migrations


class Migration(migrations.Migration):
    """A generation job's model writes candidate answers: it is the job's ``generator``, not a judge.

    RenameField keeps every row: the column judge_id becomes generator_id (PostgreSQL renames it
    in place, keeping its index and foreign key under their old names, which Django finds by
    column; SQLite copies the table). PROTECT and related_name="generation_jobs" stay as they were.
    """

    dependencies = [
        ("judging", "0010_judgment_presentation_choices"),
    ]

    operations = [
        migrations.RenameField(model_name="generationjob", old_name="judge", new_name="generator"),
    ]
