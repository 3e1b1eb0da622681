"""The `felt` command as a user runs it: a real process, real output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
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


def _production_env(tmp_path: Path) -> dict[str, str]:
    """FELT_ENV=production with Felt's public key given (what the previous test finds missing)."""
    public = Ed25519PrivateKey.generate().public_key()
    key_file = tmp_path / "public.pem"
    key_file.write_bytes(
        public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return {
        "FELT_DATA_DIR": str(tmp_path),
        "FELT_ENV": "production",
        "FELT_AUTH_PUBLIC_KEY_FILE": str(key_file),
    }


def test_production_refuses_to_start_without_the_identity_provider(tmp_path: Path) -> None:
    """No FELT_OIDC_PROVIDERS: players would be trusted from Felt's own key; production refuses instead."""
    result = felt("serve", "evaluator", "--port", "0", "--metrics-port", "0", env=_production_env(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "FELT_OIDC_PROVIDERS" in result.stderr and "production" in result.stderr


def test_production_refuses_to_serve_plaintext_without_certificate_files(tmp_path: Path) -> None:
    """Players' source settled (Felt-signed, deliberately), no FELT_TLS_* files: no development CA in
    production, and no plaintext either."""
    env = {**_production_env(tmp_path), "FELT_AUTH_FELT_PLAYERS": "on"}
    result = felt("serve", "evaluator", "--port", "0", "--metrics-port", "0", env=env)
    assert result.returncode == 2, result.stderr
    assert "FELT_TLS_CERT_FILE" in result.stderr and "TLS only" in result.stderr
    assert not (tmp_path / "tls").exists()  # no development certificate was made
