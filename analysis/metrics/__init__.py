"""Pure, vectorised metric functions over pandas DataFrames and numpy arrays (no ORM).

The frames come from ``analysis.loaders``; their columns are documented there.
"""
