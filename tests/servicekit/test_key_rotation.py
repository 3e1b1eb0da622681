"""Felt's own keys as a key set (issue 22): every token names its key (`kid`), keys rotate without
refusing a live token, a retired key's tokens are refused, and tokens signed before key sets (no kid)
verify against the legacy key while it is in the set. Real files in a real data directory; the processes'
view of the set is reloaded from it (servicekit.keyset)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from felt.cli import main as felt
from servicekit import auth, errors, keyset
from servicekit.config import ConfigError


def kid_of(token: str) -> str | None:
    return jwt.get_unverified_header(token).get("kid")


def unkeyed(private: Ed25519PrivateKey, subject: str = "ana") -> str:
    """A token as Felt signed them before key sets: no kid in its header."""
    now = int(time.time())
    claims = {"iss": "felt", "aud": "felt", "sub": subject, "role": "player", "iat": now, "exp": now + 600}
    return jwt.encode(claims, private, algorithm="EdDSA")


def refusal(keys: auth.Keys, token: str) -> str:
    with pytest.raises(errors.DomainError) as refused:
        auth.verify_token(keys, token)
    return refused.value.reason


class Ticks:
    """A monotonic clock the test moves (how often a KeySet looks at its file)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_fresh_data_directory_gets_a_key_set_and_every_token_names_its_key(tmp_path: Path) -> None:
    keys = auth.load_keys(tmp_path)
    directory = tmp_path / "keys"
    token = auth.issue_token(keys, "ana", auth.Role.PLAYER)
    published = json.loads((directory / keyset.JWKS_FILE).read_text())["keys"]
    assert kid_of(token) == keys.kid == published[0]["kid"]  # type: ignore[attr-defined]
    assert (published[0]["kty"], published[0]["crv"], published[0]["alg"]) == ("OKP", "Ed25519", "EdDSA")
    assert auth.verify_token(auth.load_keys(tmp_path), token) == auth.Caller("ana", auth.Role.PLAYER)
    # No legacy key in a new set: a token without kid is refused even when its signature is good.
    assert keys.private is not None
    assert refusal(keys, unkeyed(keys.private)) == "TOKEN_INVALID"
    assert (directory / f"{keys.kid}.pem").stat().st_mode & 0o077 == 0  # type: ignore[attr-defined]


def test_the_key_of_an_older_data_directory_joins_the_set_as_its_legacy_key(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    directory.mkdir()
    old = Ed25519PrivateKey.generate()  # what felt up made before key sets
    (directory / keyset.LEGACY_FILE).write_bytes(
        old.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    held = unkeyed(old)  # a token a player holds from before
    keys = auth.load_keys(tmp_path)
    assert auth.verify_token(keys, held).subject == "ana"
    assert kid_of(auth.issue_token(keys, "bob", auth.Role.PLAYER)) == keyset.thumbprint(old.public_key())
    # Rotated away and retired: the legacy key goes, and with it every token without a kid.
    assert felt(["keys", "--dir", str(directory), "rotate", "--activate"]) == 0
    assert auth.verify_token(keys, held).subject == "ana"  # still in the set
    assert (
        felt(["keys", "--dir", str(directory), "retire", "--force", keyset.thumbprint(old.public_key())]) == 0
    )
    assert refusal(auth.load_keys(tmp_path), held) == "TOKEN_INVALID"
    assert not (directory / keyset.LEGACY_FILE).exists()


def test_a_rotated_key_is_published_at_once_and_signs_after_the_grace_period(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    keyset.ensure(directory)
    ticks = Ticks()
    keys = keyset.KeySet(directory, clock=ticks)
    first = keys.kid
    added = keyset.rotate(directory, grace_seconds=300)
    ticks.now += keyset.RELOAD_CHECK_SECONDS  # what a process holds is at most this old
    assert [k["kid"] for k in keys.jwks()["keys"]] == [first, added.kid]
    now = time.time()
    assert kid_of(auth.issue_token(keys, "ana", auth.Role.PLAYER, now=now)) == first
    later = auth.issue_token(keys, "ana", auth.Role.PLAYER, now=now + 301)  # past the grace period
    assert kid_of(later) == added.kid
    assert auth.verify_token(keys, later, now=now + 302).subject == "ana"
    keyset.activate(directory, added.kid)
    ticks.now += keyset.RELOAD_CHECK_SECONDS
    assert kid_of(auth.issue_token(keys, "ana", auth.Role.PLAYER)) == added.kid


def test_a_process_sees_a_rotation_without_a_restart(tmp_path: Path) -> None:
    """Another process (here: another KeySet on the same directory, as `felt keys` is) rotates: this one
    verifies the new kid at once (an unknown kid makes it look) and signs with it once it looked again."""
    directory = tmp_path / "keys"
    keyset.ensure(directory)
    ticks = Ticks()
    keys = keyset.KeySet(directory, clock=ticks)
    first = keys.kid
    added = keyset.rotate(directory, grace_seconds=0)
    signer = keyset.KeySet(directory)
    assert auth.verify_token(keys, auth.issue_token(signer, "ana", auth.Role.PLAYER)).subject == "ana"
    ticks.now += keyset.RELOAD_CHECK_SECONDS
    assert keys.kid == added.kid != first


def test_a_retired_keys_tokens_are_refused_even_those_already_verified(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    keyset.ensure(directory)
    ticks = Ticks()
    keys = keyset.KeySet(directory, clock=ticks)
    verifier = auth.TokenVerifier(keys)
    old_token = auth.issue_token(keys, "ana", auth.Role.PLAYER)
    first = kid_of(old_token)
    assert verifier.verify(old_token).subject == "ana"  # remembered from now on
    keyset.rotate(directory, grace_seconds=0)
    assert verifier.verify(old_token).subject == "ana"  # rotated: the old key still verifies
    assert first is not None
    keyset.retire(directory, first, force=True)
    ticks.now += keyset.RELOAD_CHECK_SECONDS
    with pytest.raises(errors.DomainError) as refused:
        verifier.verify(old_token)
    assert refused.value.reason == "TOKEN_INVALID" and "does not trust" in refused.value.message


def test_retire_waits_for_the_last_token_and_never_takes_the_signing_key(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    keyset.ensure(directory, max_token_seconds=600)
    first = keyset.KeySet(directory).kid
    assert first is not None
    with pytest.raises(ConfigError, match="signing key"):
        keyset.retire(directory, first)
    now = time.time()
    added = keyset.rotate(directory, grace_seconds=0, now=now)
    with pytest.raises(ConfigError, match="signing key"):
        keyset.retire(directory, added.kid, now=now)
    with pytest.raises(ConfigError, match="stay valid until"):
        keyset.retire(directory, first, now=now + 599)
    with pytest.raises(ConfigError, match="no key"):
        keyset.retire(directory, "made-up", now=now + 601)
    keyset.retire(directory, first, now=now + 601)
    assert [k.kid for k in keyset.read(directory).keys] == [added.kid]


def test_a_bad_edit_of_the_key_set_keeps_the_keys_a_process_has(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    keyset.ensure(directory)
    ticks = Ticks()
    keys = keyset.KeySet(directory, clock=ticks)
    token = auth.issue_token(keys, "ana", auth.Role.PLAYER)
    (directory / keyset.KEYSET_FILE).write_text("{ not json")
    ticks.now += keyset.RELOAD_CHECK_SECONDS
    assert auth.verify_token(keys, token).subject == "ana"
    assert kid_of(auth.issue_token(keys, "bob", auth.Role.PLAYER)) == kid_of(token)


def test_a_key_file_as_before_gets_a_kid_and_still_verifies_tokens_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = Ed25519PrivateKey.generate()
    pem = tmp_path / "felt-auth.pem"
    pem.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    monkeypatch.setenv("FELT_AUTH_PRIVATE_KEY_FILE", str(pem))
    keys = auth.load_keys(tmp_path, production=True)
    token = auth.issue_token(keys, "table", auth.Role.SERVICE)
    assert kid_of(token) == keyset.thumbprint(private.public_key())
    assert auth.verify_token(keys, token).subject == "table"
    assert auth.verify_token(keys, unkeyed(private)).subject == "ana"
    assert keys.jwks()["keys"][0]["kid"] == kid_of(token)


def test_production_needs_keys_given_and_a_key_set_that_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FELT_AUTH_KEYSET_DIR", "FELT_AUTH_PRIVATE_KEY_FILE", "FELT_AUTH_PUBLIC_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="FELT_AUTH_KEYSET_DIR"):
        auth.load_keys(tmp_path, production=True)
    monkeypatch.setenv("FELT_AUTH_KEYSET_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="no key set"):
        auth.load_keys(tmp_path, production=True)
    assert felt(["keys", "--dir", str(tmp_path / "nowhere"), "list"]) == 0  # the operator makes one
    keys = auth.load_keys(tmp_path, production=True)
    assert auth.verify_token(keys, auth.issue_token(keys, "ops", auth.Role.OPERATOR)).subject == "ops"
