"""Importers for external study data (CoBBLEr, MT-Bench) and the demo seed.

The judge side of an import and the whole-file workflows, which wrap everything in
one transaction, live in ``cobbler_site.wiring`` (this app imports neither
``judging`` nor ``analysis``); the management commands call those workflows.
"""
