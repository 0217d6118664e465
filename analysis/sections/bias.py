from __future__ import annotations

from analysis.profiles import Profile
from annotations.models import Study


def build(*, study: Study, profile: Profile) -> list[dict]:
    # Not implemented yet: an empty section, never made-up values.
    return []
