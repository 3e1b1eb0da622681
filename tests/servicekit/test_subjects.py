"""Who a token may name: capped, printable subjects; player ids without the platform's ':' namespace, so
no player is ever a table's bot (`bot:<table>:<seat>`) or escrow (`table:<id>`) (issue 13: request ids and
resources a player could squat)."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from servicekit import auth, errors


@pytest.fixture
def keys() -> auth.KeyPair:
    private = Ed25519PrivateKey.generate()
    return auth.KeyPair(private.public_key(), private)


def forged(keys: auth.KeyPair, subject: object, role: str = "player") -> str:
    now = int(time.time())
    claims = {"iss": "felt", "aud": "felt", "sub": subject, "role": role, "iat": now, "exp": now + 60}
    return jwt.encode(claims, keys.private, algorithm="EdDSA")  # type: ignore[arg-type]


@pytest.mark.parametrize("subject", ["bot:t1:3", "table:t-1", "x" * 129, "tab\there"])
def test_a_player_token_never_names_a_platform_name_or_an_oversized_id(
    keys: auth.KeyPair, subject: str
) -> None:
    with pytest.raises(ValueError):
        auth.issue_token(keys, subject, auth.Role.PLAYER)
    with pytest.raises(errors.DomainError) as refused:
        auth.verify_token(keys, forged(keys, subject))
    assert refused.value.reason == "TOKEN_INVALID"


def test_services_keep_their_namespaced_names_and_players_their_own(keys: auth.KeyPair) -> None:
    assert auth.verify_token(keys, forged(keys, "ana@example.org")).subject == "ana@example.org"
    assert auth.verify_token(keys, auth.issue_token(keys, "table", auth.Role.SERVICE)).subject == "table"
    assert auth.verify_token(keys, forged(keys, "ops:eu", "operator")).subject == "ops:eu"
