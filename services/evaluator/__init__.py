"""Evaluator service."""
