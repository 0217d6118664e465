"""Done criterion of issue 9 (3): on the demo pairs, a judge with a 30% first-slot preference
gets a significant ``position_preference`` and an unbiased verbose judge gets none.

The judgments are built the way a judge job builds them, without a worker: the demo study's
real pairs, planned by ``judging.conditions`` (the order run with its counterbalanced first
slot), rendered to the real prompts, answered by the simulator's ``behaviour.decide`` (what
the simulator endpoint returns for those messages) and read by the project's ``robust``
parser, exactly as ``judging.runner`` stores a Judgment. The bias table is then the real one
(``analysis.sections.bias.judge_rows`` + ``analysis.metrics.bias_rows.finish_rows``). The knob
seeds were picked once (1, 2, 3) and not tuned; the figures are printed for the report.
"""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.metrics.bias_rows import finish_rows
from analysis.profiles import get_profile
from analysis.sections.bias import judge_rows
from annotations.importers.demo import seed_demo_study
from annotations.models import Pair
from judging import conditions, parsers
from judging.simulator.behaviour import decide, parse_knobs

pytestmark = pytest.mark.django_db
SEED, VERSION = 2024, "v1"  # seed_demo's DEMO_SEED; the default prompt version


def simulated_judgments(pairs: list[Pair], *, judge: str, knobs: str, condition: str) -> pd.DataFrame:
    """``loaders.judgments_frame`` rows for ``knobs`` answering every pair under ``condition``."""
    k = parse_knobs(knobs)
    a_first = conditions.a_first_plan(pairs, seed=SEED, version=VERSION) if hasattr(conditions, "a_first_plan") else {}
    rows = []
    for pair in pairs:
        extra = {"a_first": a_first[pair.pk]} if pair.pk in a_first else {}
        for item in conditions.plan(
            pair=pair, condition=condition, seed=SEED, version=VERSION, bandwagon_percent=85, self_key="", **extra
        ):
            slot1 = item["slot1_response"]
            prompt = conditions.render_for(
                version=VERSION, condition=condition, pair=pair, slot1_response_id=slot1.pk, cue=item["cue"]
            )
            text = decide(k, prompt.messages).text
            choice = parsers.parse("robust", text, labels=prompt.answer_labels, echo_strings=prompt.echo_strings)
            slot1_is_a = slot1.pk == pair.response_a_id
            rows.append(
                {
                    "judge": judge,
                    "self_key": "",
                    "job": 1,
                    "instruction": pair.instruction.index,
                    "pair": pair.pk,
                    "cand_a": pair.response_a.candidate.key,
                    "cand_b": pair.response_b.candidate.key,
                    "len_a": len(pair.response_a.text),
                    "len_b": len(pair.response_b.text),
                    "condition": condition,
                    "presentation": item["presentation"],
                    "slot1_is_a": slot1_is_a,
                    "choice": choice or "",
                    "chosen_is_a": choice is not None and ((choice == "first") == slot1_is_a),
                    "valid": choice is not None,
                    "cue_slot": item["cue"].get("cue_slot"),
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def demo_pairs() -> list[Pair]:
    study = seed_demo_study()
    return list(
        Pair.objects.filter(instruction__study=study)
        .select_related("instruction", "response_a__candidate", "response_b__candidate")
        .order_by("pk")
    )


def bias_table(frame: pd.DataFrame, profile_name: str = "default") -> dict[tuple[str, str], dict]:
    profile = get_profile(profile_name)
    observed, units = judge_rows(frame, profile=profile)
    return {(r["subject"], r["bias"]): r for r in finish_rows(observed, units, correction=profile.correction)}


def test_a_30_percent_first_slot_judge_is_detected_and_an_unbiased_verbose_judge_is_not(demo_pairs):
    frame = pd.concat(
        [
            simulated_judgments(demo_pairs, judge="first30", knobs="sim:order_first=0.3,seed=1", condition="order"),
            simulated_judgments(
                demo_pairs, judge="verbose-unbiased", knobs="sim:style=hedge_naming_loser,seed=2", condition="order"
            ),
            simulated_judgments(
                demo_pairs, judge="verbose-unbiased", knobs="sim:style=hedge_naming_loser,seed=2", condition="bandwagon"
            ),
            simulated_judgments(
                demo_pairs, judge="bandwagon50", knobs="sim:bandwagon=0.5,seed=3", condition="bandwagon"
            ),
        ],
        ignore_index=True,
    )
    for profile_name in ("default", "cobbler-paper"):
        rows = bias_table(frame, profile_name)
        biased, unbiased = rows[("first30", "position_preference")], rows[("verbose-unbiased", "position_preference")]
        print(f"\n[{profile_name}] demo pairs: {len(demo_pairs)}")
        for name, r in (("first30", biased), ("verbose-unbiased", unbiased)):
            print(
                f"  {name}: position_preference {r['value']:.4f} ci95 {r['ci95']} first twice {r['hits']} "
                f"last twice {r['mirror']} n {r['n']} p {r['p_value']:.3g} p_adjusted {r['p_adjusted']:.3g}"
            )
        for name in ("verbose-unbiased", "bandwagon50"):
            r = rows[(name, "bandwagon")]
            print(
                f"  {name}: bandwagon {r['value']:.4f} followed twice {r['hits']} against twice {r['mirror']} "
                f"cue_following {r.get('cue_following')} p_adjusted {r['p_adjusted']:.3g}"
            )
        # Injected 0.3: P(first twice) = 0.3 and P(last twice) = 0 for this knob (test_calibration).
        assert biased["p_adjusted"] < 0.01, biased
        assert biased["ci95"][0] <= 0.3 <= biased["ci95"][1], biased
        assert unbiased["p_adjusted"] >= 0.05, unbiased
        assert rows[("verbose-unbiased", "bandwagon")]["p_adjusted"] >= 0.05
        assert rows[("bandwagon50", "bandwagon")]["p_adjusted"] < 0.01
