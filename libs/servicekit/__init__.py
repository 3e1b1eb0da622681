"""Service platform."""
