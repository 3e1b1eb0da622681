"""Felt command line."""
