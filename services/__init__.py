"""Felt services."""
