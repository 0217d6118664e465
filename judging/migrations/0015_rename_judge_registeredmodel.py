"""The model registry's record is a ``RegisteredModel``: it judges, generates answers, or both,
so "Judge" named one of its roles (issue 25: one word per meaning)."""

from django.conf import settings
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("judging", "0014_rewrite_jobs_sentiment"),
    ]

    operations = [
        migrations.RenameModel(old_name="Judge", new_name="RegisteredModel"),
    ]
