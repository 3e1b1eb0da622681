"""Bearer-token authentication: Ed25519-signed JWTs naming the caller and its role.

Tokens carry `sub` (a player id, a service name or an operator name), `role`, `iss`, `aud`, `iat` and
`exp`; verification pins the algorithm (EdDSA) and checks all of them. The signing key comes from
FELT_AUTH_PRIVATE_KEY_FILE (services verify with FELT_AUTH_PUBLIC_KEY_FILE or the public half of the
private key); in development a key is generated once in the data directory and shared by `felt up`,
`felt serve` and `felt token`. In production (FELT_ENV=production) the key must be given.
"""

from __future__ import annotations

import contextvars
import enum
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from servicekit import errors
from servicekit.config import ConfigError, setting

ALGORITHM = "EdDSA"
ISSUER = "felt"
AUDIENCE = "felt"
DEFAULT_TTL_SECONDS = 12 * 3600
DEV_KEY_NAME = "keys/auth-ed25519.pem"


class Role(enum.Enum):
    ANONYMOUS = "anonymous"
    PLAYER = "player"
    SERVICE = "service"
    OPERATOR = "operator"


@dataclass(frozen=True)
class Caller:
    """Who is calling: a player id, a service name or an operator name, and the role."""

    subject: str
    role: Role

    @property
    def is_player(self) -> bool:
        return self.role is Role.PLAYER


ANONYMOUS = Caller("", Role.ANONYMOUS)
_current: contextvars.ContextVar[Caller] = contextvars.ContextVar("felt_caller", default=ANONYMOUS)


def current_caller() -> Caller:
    """The caller of the RPC being handled (set by the server interceptor)."""
    return _current.get()


def set_current_caller(caller: Caller) -> contextvars.Token[Caller]:
    return _current.set(caller)


def require_role(*roles: Role) -> Caller:
    """The current caller, if its role is one of `roles`; PERMISSION_DENIED otherwise."""
    caller = current_caller()
    if caller.role not in roles:
        allowed = ", ".join(r.value for r in roles)
        raise errors.permission_denied(
            "ROLE_NOT_ALLOWED", f"this call needs the role {allowed}", role=caller.role.value
        )
    return caller


@dataclass(frozen=True)
class KeyPair:
    public: Ed25519PublicKey
    private: Ed25519PrivateKey | None  # None where the process may verify but not sign


def _load_private(path: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{path} is not an Ed25519 private key")
    return key


def _create_dev_key(path: Path) -> None:
    """Write a new development key once; concurrent starters race safely on O_EXCL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    try:
        os.link(tmp, path)  # atomic; fails if another process won the race
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


def load_keys(data_dir: Path, production: bool = False) -> KeyPair:
    private_file = setting("FELT_AUTH_PRIVATE_KEY_FILE", "")
    public_file = setting("FELT_AUTH_PUBLIC_KEY_FILE", "")
    if private_file:
        private = _load_private(Path(private_file))
        return KeyPair(private.public_key(), private)
    if public_file:
        public = serialization.load_pem_public_key(Path(public_file).read_bytes())
        if not isinstance(public, Ed25519PublicKey):
            raise ConfigError(f"{public_file} is not an Ed25519 public key")
        return KeyPair(public, None)
    if production:
        raise ConfigError(
            "missing required setting FELT_AUTH_PUBLIC_KEY_FILE (or FELT_AUTH_PRIVATE_KEY_FILE): "
            "production services do not generate development keys"
        )
    dev_key = data_dir / DEV_KEY_NAME
    if not dev_key.exists():
        _create_dev_key(dev_key)
    private = _load_private(dev_key)
    return KeyPair(private.public_key(), private)


MAX_SUBJECT = 128  # as every id on the wire
# The platform's own names are namespaced with a colon (a table's bots `bot:<table>:<seat>`, escrows
# `table:<id>`): a player id never has one, so no player can be issued, or present, a bot's identity
# (and take the chips the table issues to its bots' wallet accounts).
RESERVED_IN_PLAYER_IDS = ":"


def subject_problem(subject: str, role: Role) -> str | None:
    """Why `subject` cannot name a caller of `role`, or None."""
    if not subject or len(subject) > MAX_SUBJECT or not subject.isprintable():
        return f"a subject has 1-{MAX_SUBJECT} printable characters"
    if role is Role.PLAYER and RESERVED_IN_PLAYER_IDS in subject:
        return f"a player id never contains {RESERVED_IN_PLAYER_IDS!r} (the platform's own names do)"
    return None


def issue_token(
    keys: KeyPair,
    subject: str,
    role: Role,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    now: float | None = None,
) -> str:
    """A token for (subject, role) valid `ttl_seconds` from `now` (the wall clock unless given)."""
    if keys.private is None:
        raise ConfigError("this process has no signing key (set FELT_AUTH_PRIVATE_KEY_FILE)")
    if role is Role.ANONYMOUS or not subject:
        raise ValueError("a token names a subject and a real role")
    problem = subject_problem(subject, role)
    if problem is not None:
        raise ValueError(problem)
    issued = int(time.time() if now is None else now)
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": subject,
        "role": role.value,
        "iat": issued,
        "exp": issued + ttl_seconds,
    }
    return jwt.encode(claims, keys.private, algorithm=ALGORITHM)


def expiry_of(token: str) -> int | None:
    """The `exp` a token claims, read without verifying it (a client's own token, to renew or warn in
    time); None when the token is not a JWT with an integer `exp`."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return None
    exp = claims.get("exp")
    return exp if isinstance(exp, int) else None


def verify_token(keys: KeyPair, token: str, now: float | None = None) -> Caller:
    """The caller a token names; UNAUTHENTICATED with a reason when it is not valid."""
    return _verify(keys, token, time.time() if now is None else now)[0]


# A token issued by a host whose clock is a little ahead is still good here (iat a few seconds ahead).
ISSUED_AT_LEEWAY_SECONDS = 30


def _verify(keys: KeyPair, token: str, now: float) -> tuple[Caller, int]:
    """Signature, algorithm, issuer and audience by PyJWT; times against `now`, the verifier's clock
    (PyJWT would read the wall clock, which a test on a virtual clock does not move)."""
    try:
        claims = jwt.decode(
            token,
            keys.public,
            algorithms=[ALGORITHM],
            audience=AUDIENCE,
            issuer=ISSUER,
            options={
                "require": ["exp", "iat", "iss", "aud", "sub"],
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
            },
        )
    except jwt.InvalidTokenError as exc:
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token is not valid: {exc}") from None
    exp, iat = _time_claim(claims, "exp"), _time_claim(claims, "iat")
    starts = max(iat, _time_claim(claims, "nbf")) if "nbf" in claims else iat
    if now >= exp:
        raise errors.unauthenticated("TOKEN_EXPIRED", "the bearer token has expired")
    if starts > now + ISSUED_AT_LEEWAY_SECONDS:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token is not valid yet")
    try:
        role = Role(claims.get("role", ""))
    except ValueError:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token names no known role") from None
    if role is Role.ANONYMOUS:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token names no known role")
    subject = claims["sub"]
    problem = subject_problem(subject, role) if isinstance(subject, str) else "the subject is not a string"
    if problem is not None:
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token's subject is not valid: {problem}")
    return Caller(subject, role), exp


def _time_claim(claims: dict[str, object], name: str) -> int:
    value = claims.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token's {name} is not an integer")
    return value


class TokenVerifier:
    """Verifies tokens, remembering the ones already verified until they expire.

    A client sends the same token on every call; checking its Ed25519 signature each time costs more
    than the rest of a small RPC. A remembered token is still refused once its `exp` has passed.
    """

    def __init__(self, keys: KeyPair, capacity: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        self._keys = keys
        self._capacity = capacity
        self._clock = clock
        self._verified: OrderedDict[str, tuple[Caller, int]] = OrderedDict()
        self._lock = threading.Lock()

    def verify(self, token: str) -> Caller:
        with self._lock:
            known = self._verified.get(token)
            if known is not None:
                self._verified.move_to_end(token)
        if known is not None:
            caller, expires = known
            if self._clock() < expires:
                return caller
            with self._lock:
                self._verified.pop(token, None)
        caller, expires = _verify(self._keys, token, self._clock())  # raises for an expired or bad token
        with self._lock:
            self._verified[token] = (caller, expires)
            while len(self._verified) > self._capacity:
                self._verified.popitem(last=False)
        return caller


def bearer_metadata(token: str) -> tuple[tuple[str, str]]:
    """Call metadata carrying `token`, for clients."""
    return (("authorization", f"Bearer {token}"),)


def token_from_metadata(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str | None:
    for key, value in metadata or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            if scheme.lower() != "bearer" or not token:
                raise errors.unauthenticated(
                    "TOKEN_MALFORMED", "the authorization metadata must be 'Bearer <token>'"
                )
            return token.strip()
    return None
