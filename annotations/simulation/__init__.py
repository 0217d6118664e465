"""A simulated crowd for the demo: seeded workers answering through the real services."""
