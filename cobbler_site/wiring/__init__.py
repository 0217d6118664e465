"""Code that spans the apps lives here, and only here.

``annotations``, ``judging`` and ``analysis`` depend one way (annotations <- judging <-
analysis; ``tests/foundation/test_layering.py`` checks it). A workflow that needs two of
them at once, such as an import writing the study content, the crowd's work and the
judges' results in one transaction, sits above all three in ``cobbler_site``: here, or in
the commands that call it (``cobbler_site/management/commands/``: ``import_cobbler``,
``import_mtbench``, ``seed_demo``, ``runstack``).

- ``imported_judges``: the ``RegisteredModel(kind="imported")`` rows an import attaches results to.
- ``cobbler_import``: the CoBBLEr data layout, including the evaluators' stored win counts.
- ``mtbench_import``: MT-Bench human judgments and the ``gpt4_pair`` verdicts.
"""
