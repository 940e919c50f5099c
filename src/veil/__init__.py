"""veil: release record-level data without exposing the people in it."""

__version__ = "0.1.0"
