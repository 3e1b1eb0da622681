"""Evaluator settings: only the platform's (FELT_EVALUATOR_PORT, FELT_EVALUATOR_METRICS_PORT, ...)."""

from __future__ import annotations

from typing import Any

from servicekit.config import ServerConfig, load_server_config


def load_config(**overrides: Any) -> ServerConfig:
    return load_server_config("evaluator", **overrides)
