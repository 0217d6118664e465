"""Length control on the MT-Bench-schema sample, imported with the real importer.

Hand count (judged-turn chars; conversation = all assistant messages):
  901 t1 x-y: votes x, x(reversed), tie; gpt-4 x.   x 183 / y 22      (conv 299 / 41)
  901 t2 x-z: vote x; gpt-4 x.                      x 116 / z 39      (conv 299 / 131)
  902 t1 y-z: vote y; gpt-4 tie (inconsistent).     y 77 / z 0 (empty)(conv 114 / 25)
  902 t2 x-y: vote x; gpt-4 x.                      x 76 / y 37       (conv 149 / 114)
  903 t1 x-z: vote x (written z,x); gpt-4 x (x,z).  x 44 / z 44       (conv 118 / 88)
  903 t1 y-z: vote y; gpt-4 tie.                    y 13 / z 44       (conv 37 / 88)
"""

from __future__ import annotations

import pytest
from django.core.management import call_command

from analysis.profiles import get_profile
from analysis.sections import length_control
from annotations.models import Study
from tests.conftest import SAMPLES_DIR

pytestmark = pytest.mark.django_db


@pytest.fixture
def sample():
    call_command("import_mtbench", str(SAMPLES_DIR / "mtbench_sample.jsonl"), "--study", "sample", verbosity=0)
    return Study.objects.get(slug="sample")


def test_default_profile_on_the_sample(sample):
    s = length_control.build(study=sample, profile=get_profile("default"))
    (row,) = s["judge_vs_human"]
    assert (row["agreement"], row["n"]) == (1.0, 4)  # 901t1, 901t2, 902t2, 903 x-z; both 903 y-z and 902t1 tie
    assert (row["s1_agreement"], row["s1_n"]) == (5 / 8, 8)  # misses: the tie vote, 902t1 y, 903 y-z y
    assert (row["s2_agreement"], row["s2_n"]) == (1.0, 5)
    # Null: 901t1 2/2, 901t2 1/1, 902t1 1/1 (77 vs an empty answer), 902t2 1/1, 903 x-z equal (dropped), 903 y-z 0/1.
    assert (s["null_vs_human"]["agreement"], s["null_vs_human"]["n"]) == (pytest.approx(5 / 6), 6)
    assert [(r["agreement"], r["n"]) for r in s["null_vs_judge"]] == [(1.0, 3)]
    strata = {r["bin"]: (r["judge_agreement"], r["judge_n"]) for r in s["strata"]}
    assert strata == {"<5%": (1.0, 1), "<10%": (1.0, 1), "10-30%": (None, 0), ">30%": (1.0, 3)}
    assert row["headline_share"] == pytest.approx((5 / 6 - 0.5) / 0.5)


def test_mtbench_post_profile_on_the_sample(sample):
    s = length_control.build(study=sample, profile=get_profile("mtbench-post"))
    (row,) = s["judge_vs_human"]
    # Ordered: 903's human key (z,x) misses the judge's (x,z); 3 keys left, all agree.
    assert (row["agreement"], row["n"]) == (1.0, 3)
    assert (row["s1_agreement"], row["s1_n"]) == (0.5, 6)
    # Whole conversations: 903 x-z is now 118 vs 88, so that vote counts: 6/7.
    assert (s["null_vs_human"]["agreement"], s["null_vs_human"]["n"]) == (pytest.approx(6 / 7), 7)
