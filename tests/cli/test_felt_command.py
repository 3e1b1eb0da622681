"""The `felt` command as a user runs it: a real process, real output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from servicekit import auth


def felt(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "felt", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_eval_prints_category_best_five_and_strength() -> None:
    result = felt("eval", "As", "Ks", "Qs", "Js", "Ts", "2c", "3d")
    assert result.returncode == 0, result.stderr
    assert "Royal Flush" in result.stdout
    assert "As Ks Qs Js Ts" in result.stdout
    assert "strength:" in result.stdout


def test_eval_refuses_a_bad_card_clearly() -> None:
    result = felt("eval", "As", "Ks", "Qs", "Js", "Zz")
    assert result.returncode == 2
    assert "Zz" in result.stderr


def test_token_is_signed_with_the_data_directory_key(tmp_path: Path) -> None:
    env = {"FELT_DATA_DIR": str(tmp_path)}
    for args, subject, role in (
        (("--player", "alice"), "alice", auth.Role.PLAYER),
        (("--service", "table"), "table", auth.Role.SERVICE),
        (("--operator",), "operator", auth.Role.OPERATOR),
    ):
        result = felt("token", *args, env=env)
        assert result.returncode == 0, result.stderr
        caller = auth.verify_token(auth.load_keys(tmp_path), result.stdout.strip())
        assert caller == auth.Caller(subject, role)


def test_a_missing_required_setting_fails_at_start_naming_it(tmp_path: Path) -> None:
    env = {"FELT_DATA_DIR": str(tmp_path), "FELT_ENV": "production"}
    env.pop("FELT_AUTH_PRIVATE_KEY_FILE", None)
    result = felt("serve", "evaluator", "--port", "0", "--metrics-port", "0", env=env)
    assert result.returncode == 2
    assert "FELT_AUTH_PUBLIC_KEY_FILE" in result.stderr


def test_a_malformed_setting_names_the_variable(tmp_path: Path) -> None:
    env = {"FELT_DATA_DIR": str(tmp_path), "FELT_EVALUATOR_PORT": "not-a-port"}
    result = felt("serve", "evaluator", env=env)
    assert result.returncode == 2
    assert "FELT_EVALUATOR_PORT" in result.stderr
