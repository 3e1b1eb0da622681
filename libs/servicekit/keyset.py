"""Felt's own signing keys as a key set: several verification keys, one signing key, each with a `kid`.

A key set is a directory: `keyset.json` (every key's public JWK, when it starts signing, whether it is the
legacy key), one private key file per key (`<kid>.pem`; absent where a process verifies but never signs)
and `jwks.json`, the public keys as a JWKS for whoever verifies Felt's tokens elsewhere (also served on
each service's metrics port at /.well-known/jwks.json).

Rotation without downtime (`felt keys`): a new key joins the set and is published at once, but signs only
from `signs_from` (a grace period later, or at once with --activate); the key it replaces stays trusted
until it is retired, once the last token it signed has expired. Every process that holds a `KeySet` looks
at `keyset.json`'s inode, size and mtime at most once a second (and at once for a `kid` it does not know),
and reloads it when it changed: no restart.

The key id is the key's RFC 7638 thumbprint. Tokens without a `kid` (signed before key sets) verify
against the legacy key (the development key `auth-ed25519.pem` a data directory held before) while it is
in the set.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from servicekit.config import ConfigError
from servicekit.logging import get_logger

KEYSET_FILE = "keyset.json"
JWKS_FILE = "jwks.json"
LOCK_FILE = ".lock"
LEGACY_FILE = "auth-ed25519.pem"  # the development key of data directories made before key sets
FORMAT = 1
ALGORITHM = "EdDSA"
RELOAD_CHECK_SECONDS = 1.0  # how stale a process's view of keyset.json may be (an unknown kid: none)
# A rotated key signs this long after it was published: enough for every process to have reloaded
# the set (a Kubernetes Secret reaches its pods within about a minute) before tokens carry its kid.
DEFAULT_GRACE_SECONDS = 300
# How long after a key stopped signing its last token may still be valid: the longest token Felt mints
# by itself (auth.DEFAULT_TTL_SECONDS). `felt keys retire` waits for it unless forced.
DEFAULT_MAX_TOKEN_SECONDS = 12 * 3600


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_jwk(public: Ed25519PublicKey) -> dict[str, str]:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": _b64(raw)}


def thumbprint(public: Ed25519PublicKey) -> str:
    """RFC 7638: SHA-256 of the JWK's required members, sorted, without whitespace."""
    canonical = json.dumps(public_jwk(public), sort_keys=True, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode()).digest())


def published_jwk(public: Ed25519PublicKey, kid: str) -> dict[str, str]:
    return {**public_jwk(public), "kid": kid, "alg": ALGORITHM, "use": "sig"}


@dataclass(frozen=True)
class Key:
    kid: str
    public: Ed25519PublicKey
    private: Ed25519PrivateKey | None
    created: int
    signs_from: int  # Unix time it becomes the signing key (unless a later one has started)
    legacy: bool  # tokens without a kid verify against it
    private_file: str


@dataclass(frozen=True)
class Snapshot:
    """One reading of a key set."""

    keys: tuple[Key, ...]
    max_token_seconds: int = DEFAULT_MAX_TOKEN_SECONDS

    def signing(self, now: float) -> Key | None:
        """The key that signs at `now`: of those started, the one that started last."""
        started = [(k.signs_from, i, k) for i, k in enumerate(self.keys) if k.signs_from <= now]
        return max(started, key=lambda t: (t[0], t[1]))[2] if started else None

    def find(self, kid: str | None) -> Key | None:
        for key in self.keys:
            if (key.kid == kid) if kid is not None else key.legacy:
                return key
        return None

    def signed_until(self, key: Key) -> float | None:
        """When `key` stopped signing (a later key started), or None while it signs or has not yet."""
        later = [k.signs_from for k in self.keys if k.signs_from > key.signs_from]
        return min(later) if later else None

    def jwks(self) -> dict[str, Any]:
        return {"keys": [published_jwk(k.public, k.kid) for k in self.keys]}


# -- reading and writing the directory --------------------------------------------------------------------


def load_private(path: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{path} is not an Ed25519 private key")
    return key


def _private_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def read(directory: Path) -> Snapshot:
    """The key set in `directory` (private keys where their files are present)."""
    path = directory / KEYSET_FILE
    try:
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT:
            raise ConfigError(f"{path}: unknown key set format {data.get('format')!r}")
        keys = []
        for entry in data["keys"]:
            jwk = entry["jwk"]
            if (jwk.get("kty"), jwk.get("crv")) != ("OKP", "Ed25519"):
                raise ConfigError(f"{path}: key {entry['kid']} is not an Ed25519 key")
            public = Ed25519PublicKey.from_public_bytes(_unb64(jwk["x"]))
            if thumbprint(public) != entry["kid"]:
                raise ConfigError(f"{path}: key {entry['kid']}'s kid is not its thumbprint")
            private_path = directory / entry["private"]
            private = load_private(private_path) if private_path.exists() else None
            if private is not None and thumbprint(private.public_key()) != entry["kid"]:
                raise ConfigError(f"{private_path} is not the private half of key {entry['kid']}")
            keys.append(
                Key(
                    kid=entry["kid"],
                    public=public,
                    private=private,
                    created=int(entry["created"]),
                    signs_from=int(entry["signs_from"]),
                    legacy=bool(entry.get("legacy", False)),
                    private_file=entry["private"],
                )
            )
        return Snapshot(tuple(keys), int(data.get("max_token_seconds", DEFAULT_MAX_TOKEN_SECONDS)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path} is not a valid key set: {exc!r}") from None


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def _write(directory: Path, snapshot: Snapshot) -> None:
    """Private keys first, then the public JWKS, then keyset.json (what processes reload from)."""
    for key in snapshot.keys:
        target = directory / key.private_file
        if key.private is not None and not target.exists():
            _write_atomically(target, _private_pem(key.private))
    _write_atomically(directory / JWKS_FILE, json.dumps(snapshot.jwks(), indent=2).encode())
    data = {
        "format": FORMAT,
        "max_token_seconds": snapshot.max_token_seconds,
        "keys": [
            {
                "kid": k.kid,
                "jwk": public_jwk(k.public),
                "created": k.created,
                "signs_from": k.signs_from,
                "legacy": k.legacy,
                "private": k.private_file,
            }
            for k in snapshot.keys
        ],
    }
    _write_atomically(directory / KEYSET_FILE, json.dumps(data, indent=2).encode())


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """One writer at a time (services starting together on a fresh data directory, `felt keys`)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _new_key(now: int, signs_from: int) -> Key:
    private = Ed25519PrivateKey.generate()
    kid = thumbprint(private.public_key())
    return Key(kid, private.public_key(), private, now, signs_from, False, f"{kid}.pem")


def ensure(
    directory: Path, now: float | None = None, max_token_seconds: int = DEFAULT_MAX_TOKEN_SECONDS
) -> None:
    """Create a key set in `directory` unless it has one: the key a data directory held before key sets
    (`auth-ed25519.pem`) joins it as the legacy key, else a new key is made. `max_token_seconds`: the
    longest life of a token its keys sign (how long `retire` waits after a key stopped signing)."""
    if (directory / KEYSET_FILE).exists():
        return
    with _locked(directory):
        if (directory / KEYSET_FILE).exists():  # another process made it meanwhile
            return
        issued = int(time.time() if now is None else now)
        legacy = directory / LEGACY_FILE
        if legacy.exists():
            private = load_private(legacy)
            kid = thumbprint(private.public_key())
            key = Key(kid, private.public_key(), private, issued, 0, True, LEGACY_FILE)
        else:
            key = _new_key(issued, 0)
        _write(directory, Snapshot((key,), max_token_seconds))


def rotate(directory: Path, grace_seconds: float = DEFAULT_GRACE_SECONDS, now: float | None = None) -> Key:
    """Add a new key, published now, signing from `grace_seconds` on (0: at once)."""
    with _locked(directory):
        snapshot = read(directory)
        issued = int(time.time() if now is None else now)
        key = _new_key(issued, issued + max(0, int(grace_seconds)))
        _write(directory, replace(snapshot, keys=(*snapshot.keys, key)))
        return key


def activate(directory: Path, kid: str, now: float | None = None) -> Key:
    """Make a key that does not sign yet the signing key now."""
    with _locked(directory):
        snapshot = read(directory)
        key = snapshot.find(kid)
        if key is None:
            raise ConfigError(f"no key {kid} in {directory}")
        at = int(time.time() if now is None else now)
        if key.signs_from <= at:
            raise ConfigError(f"key {kid} has signed since {_when(key.signs_from)}: rotate to a new one")
        moved = replace(key, signs_from=at)
        _write(directory, replace(snapshot, keys=tuple(moved if k is key else k for k in snapshot.keys)))
        return moved


def retire(directory: Path, kid: str, now: float | None = None, force: bool = False) -> Key:
    """Remove a key once the last token it signed has expired (sooner with `force`: its live tokens are
    refused from then on). The signing key is never retired: rotate first."""
    with _locked(directory):
        snapshot = read(directory)
        key = snapshot.find(kid)
        if key is None:
            raise ConfigError(f"no key {kid} in {directory}")
        at = time.time() if now is None else now
        signing = snapshot.signing(at)
        if signing is not None and signing.kid == kid:
            raise ConfigError(f"key {kid} is the signing key: rotate to a new key first")
        if len(snapshot.keys) == 1:
            raise ConfigError(f"key {kid} is the only key of {directory}")
        until = snapshot.signed_until(key) if key.signs_from <= at else None
        if until is not None and at < until + snapshot.max_token_seconds and not force:
            raise ConfigError(
                f"key {kid} signed tokens until {_when(until)} that stay valid until "
                f"{_when(until + snapshot.max_token_seconds)}: retire it then (or --force)"
            )
        _write(directory, replace(snapshot, keys=tuple(k for k in snapshot.keys if k.kid != kid)))
        with contextlib.suppress(FileNotFoundError):
            (directory / key.private_file).unlink()
        return key


def describe(snapshot: Snapshot, now: float) -> list[str]:
    """One line a key: its kid, what it does now, when it was made."""
    signing = snapshot.signing(now)
    lines = []
    for key in snapshot.keys:
        if signing is not None and key.kid == signing.kid:
            state = "signing"
        elif key.signs_from > now:
            state = f"published, signs from {_when(key.signs_from)}"
        else:
            until = snapshot.signed_until(key) or now
            state = f"verifies only, retire after {_when(until + snapshot.max_token_seconds)}"
        extra = " (legacy: also tokens without kid)" if key.legacy else ""
        private = "" if key.private is not None else " [no private key here]"
        lines.append(f"{key.kid}  {state}{extra}{private}  created {_when(key.created)}")
    return lines


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


# -- the live view a process holds --------------------------------------------------------------------------


class KeySet:
    """A key set directory as a process uses it: reloaded when `keyset.json` changes.

    Signs with the key `Snapshot.signing` names at the token's issue time, and verifies a token with the
    key its `kid` names (or the legacy key for a token without one).
    """

    def __init__(self, directory: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.directory = directory
        self._clock = clock
        self._lock = threading.Lock()
        self._log = get_logger()
        self._signature = self._stat()
        self._snapshot = read(directory)
        self._checked = clock()
        if not self._snapshot.keys:
            raise ConfigError(f"{directory / KEYSET_FILE} holds no key")

    @classmethod
    def open(cls, directory: Path, create: bool) -> KeySet:
        if create:
            ensure(directory)
        elif not (directory / KEYSET_FILE).exists():
            raise ConfigError(
                f"no key set in {directory} ({KEYSET_FILE} is missing): make one with felt keys"
            )
        return cls(directory)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.directory / KEYSET_FILE)
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def current(self, force: bool = False) -> Snapshot:
        """The key set as it is on disk (looked at at most once a RELOAD_CHECK_SECONDS unless `force`)."""
        now = self._clock()
        if not force and now - self._checked < RELOAD_CHECK_SECONDS:
            return self._snapshot
        with self._lock:
            self._checked = now
            signature = self._stat()
            if signature is None or signature == self._signature:
                return self._snapshot  # unchanged, or gone: keep what we have
            try:
                snapshot = read(self.directory)
            except (OSError, ConfigError) as exc:  # a bad edit: keep serving the keys we had
                self._log.error("keyset_reload_failed", directory=str(self.directory), error=str(exc))
                return self._snapshot
            if not snapshot.keys:
                self._log.error("keyset_reload_failed", directory=str(self.directory), error="no key")
                return self._snapshot
            self._snapshot, self._signature = snapshot, signature
            self._log.info("keyset_reloaded", kids=[k.kid for k in snapshot.keys])
            return snapshot

    # The shape auth.Keys asks for.

    def signing_key(self, now: float) -> tuple[str | None, Ed25519PrivateKey | None]:
        key = self.current().signing(now)
        if key is None:
            return None, None
        return key.kid, key.private

    def verification_key(self, kid: str | None) -> Ed25519PublicKey | None:
        key = self.current().find(kid)
        if key is None and kid is not None:
            key = self.current(force=True).find(kid)  # rotated a moment ago, before our periodic look
        return key.public if key is not None else None

    def jwks(self) -> dict[str, Any]:
        return self.current().jwks()

    @property
    def kid(self) -> str | None:
        return self.signing_key(time.time())[0]

    @property
    def private(self) -> Ed25519PrivateKey | None:
        return self.signing_key(time.time())[1]

    @property
    def public(self) -> Ed25519PublicKey:
        snapshot = self.current()
        key = snapshot.signing(time.time()) or snapshot.keys[0]
        return key.public
