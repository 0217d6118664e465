"""Importers for external study data (CoBBLEr, MT-Bench) and the demo seed.

The judge side of an import lives in ``judging.importers`` (dependencies point
analysis -> judging -> annotations); the management commands call those
workflows, which wrap everything in one transaction.
"""
