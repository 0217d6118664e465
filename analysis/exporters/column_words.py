"""Readable headers for the report's tables: the one mapping from a column key to words.

The page and the HTML export show these words; each header keeps its key in ``data-column``,
and the CSV and JSON keep the keys themselves (they are contracts). A key with no entry is
read from its parts: a ``_ci95_low`` / ``_ci95_high`` suffix, a dotted prefix, underscores.
"""

from __future__ import annotations

from analysis.summary.claims import CORRECTIONS

COLUMN_WORDS = {
    "a": "A",
    "advantage_prob": "Advantage probability",
    "aggregate": "Aggregate",
    "agreement": "Agreement",
    "agreement_condition": "Agreement condition",
    "agreement_n": "Agreement n",
    "alt_advantage": "Alt-test advantage",
    "alt_epsilon": "Alt-test ε",
    "alt_passed": "Alt-test passed",
    "alt_winning_rate": "Alt-test winning rate",
    "annotator_kind": "Annotators compared",
    "b": "B",
    "beta": "Length coefficient β",
    "bias": "Bias",
    "biased_toward": "Biased toward",
    "bin": "Length bin",
    "calls": "Calls",
    "category": "Category",
    "claim": "Claim",
    "claim_text": "Claim in words",
    "chance": "Chance level",
    "ci95": "95% interval",
    "clusters": "Clusters",
    "condition": "Condition",
    "correct": "Correct",
    "cost_per_1000": "$ per 1,000 calls",
    "cue_following": "Cue following",
    "design_effect": "Design effect",
    "df": "Degrees of freedom",
    "difference": "Difference",
    "draws": "Draws",
    "effect": "Effect",
    "epsilon": "ε",
    "estimand": "Estimand",
    "instructions": "Instructions",
    "even_rate": "Rate where people split evenly",
    "excluded": "Excluded",
    "family": "In the corrected family",
    "gold_accuracy": "Gold accuracy",
    "gold_n": "Gold n",
    "headline_share": "Headline share",
    "held_by_ridge": "Held by the ridge",
    "hits": "Hits",
    "interval": "Interval method",
    "judge": "Judge",
    "judge_agreement": "Judge agreement",
    "judge_n": "Judge n",
    "judge_rate": "Judge rate",
    "kappa": "Kappa",
    "kendall_tau": "Kendall tau",
    "key": "Key",
    "label": "Label",
    "kind": "Kind",
    "latency_ms": "Latency (ms)",
    "level": "Level",
    "log_strength": "Log strength",
    "matched_agreement": "Agreement on length-matched pairs",
    "matched_n": "Length-matched n",
    "matched_null": "Null judge on length-matched pairs",
    "matched_null_agreement": "Null judge on length-matched pairs",
    "matched_null_n": "Null judge length-matched n",
    "method": "Method",
    "metric": "Metric",
    "min_annotators": "Minimum annotators",
    "min_items": "Minimum items",
    "minus_humans": "Judge minus humans",
    "mirror": "Mirror",
    "mle_exists": "MLE exists",
    "n": "n",
    "n_all": "n (all answers)",
    "n_annotators": "Annotators",
    "n_comparisons": "Comparisons",
    "n_instructions": "Instructions",
    "n_items": "Items",
    "n_raters": "Raters",
    "n_systems": "Systems",
    "n_ties": "Ties",
    "n_valid": "n (valid answers)",
    "never_lost": "Never lost",
    "never_won": "Never won",
    "no_cue_agreement": "Agreement without a cue",
    "null": "Null hypothesis",
    "null_agreement": "Null judge agreement",
    "null_n": "Null judge n",
    "null_value": "Value under the null",
    "p": "p",
    "outcome": "Outcome",
    "p_above": "p (above chance)",
    "p_holm": "Holm-adjusted p",
    "p_first_slot": "P(first slot)",
    "p_longer": "P(longer)",
    "p_value": "p",
    "pairs": "Pairs",
    "passed": "Passed",
    "position_consistency": "Position consistency",
    "position_preference": "Position preference",
    "profile_epsilon": "Profile's ε",
    "q": "q",
    "random": "Random baseline",
    "range95": "95% range",
    "rank": "Rank",
    "rbo": "RBO",
    "rbo_p": "RBO p",
    "rbo_variant": "RBO variant",
    "reason": "Reason",
    "records": "Records",
    "reference": "Reference",
    "reference_detail": "Reference detail",
    "reference_rate": "Reference rate",
    "robustness": "Robustness rate",
    "role": "Role",
    "score": "Score",
    "seconds_per_1000": "Seconds per 1,000 calls",
    "sharpness": "Sharpness",
    "source": "Source",
    "subject": "Subject",
    "system": "System",
    "target": "Target",
    "test": "Test",
    "testable": "Testable",
    "tie_nu": "Tie ν",
    "ties": "Ties",
    "ties_rule": "Tie rule",
    "unmatched": "Unmatched",
    "unit": "Unit",
    "valid_rate": "Valid rate",
    "value": "Value",
    "value_all": "Value (all answers)",
    "value_valid": "Value (valid answers)",
    "variant": "Variant",
    "verdict": "Verdict",
    "verdict_reason": "Verdict reason",
    "vs_humans": "Vs humans",
    "vs_uncontrolled": "Vs uncontrolled",
    "winning_rate": "Winning rate",
    "with_cot": "With step-by-step",
    "without": "Without",
}
# The report's tables, by the name of their CSV file.
TABLE_WORDS = {
    "leaderboard": "Judge leaderboard",
    "bias": "Bias tests",
    "bias_reference": "Length and self-preference against a reference",
    "battery": "Bias battery: robustness, effect and judge minus humans",
    "cot": "Chain of thought: with minus without thinking step by step",
    "gold_accuracy": "Accuracy on gold labels",
    "alt_test": "Alternative annotator test",
    "agreement": "Agreement",
    "length_control_summary": "Length control: summary",
    "length_control_judge_vs_human": "Length control: judges vs people",
    "length_control_null_vs_human": "Length control: null judge vs people",
    "length_control_null_vs_judge": "Length control: null judge vs judges",
    "length_control_strata": "Length control: by length bin",
    "length_control_null_strata": "Length control: null judge by length bin",
    "length_control_strata_differences": "Length control: differences between bins",
    "bt_rankings": "Bradley-Terry rankings: systems",
    "bt_rankings_subjects": "Bradley-Terry rankings: per subject",
    "paper": "Comparison with the paper",
    "manifest": "Reproducibility manifest",
}
SUFFIXES = (("_ci95_low", "95% interval, low"), ("_ci95_high", "95% interval, high"), ("_ci95", "95% interval"))
ENDS = (("_low", "low"), ("_high", "high"))


def column_label(key: str, *, correction: str | None = None) -> str:
    """Words for a column key: "p_adjusted" -> "Holm-adjusted p", "ci95_low" -> "95% interval, low"."""
    if key == "p_adjusted":
        name = CORRECTIONS.get(correction or "", "")
        return f"{name}-adjusted p" if name else "Adjusted p"
    if "." in key:
        head, _, rest = key.partition(".")
        return f"{column_label(head, correction=correction)}: {_lower(column_label(rest, correction=correction))}"
    if key in COLUMN_WORDS:
        return COLUMN_WORDS[key]
    for suffix, words in SUFFIXES:
        if key.endswith(suffix):
            return f"{column_label(key.removesuffix(suffix), correction=correction)}, {words}"
    for suffix, words in ENDS:
        if key.endswith(suffix) and key.removesuffix(suffix) in COLUMN_WORDS:
            return f"{COLUMN_WORDS[key.removesuffix(suffix)]}, {words}"
    words = key.replace("_", " ")
    return words[:1].upper() + words[1:]


def table_label(name: str) -> str:
    return TABLE_WORDS.get(name) or column_label(name)


def _lower(words: str) -> str:
    # "Value" after a colon reads as "value"; names and acronyms keep their capitals.
    keep = words[:2].isupper() or words.split(" ")[0].rstrip(",") in {"Kendall", "RBO", "MLE"}
    return words if keep else words[:1].lower() + words[1:]
