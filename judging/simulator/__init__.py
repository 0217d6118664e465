"""A bias-injectable, OpenAI-compatible judge for demos, tests, calibration and benchmarks."""
