"""Generation jobs: a registered model answers a study's instructions and becomes a candidate."""
