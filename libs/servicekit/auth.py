"""Bearer-token authentication: signed JWTs naming the caller and its role.

Felt's own tokens (services, operators, development players) carry `sub` (a player id, a service name or
an operator name), `role`, `iss` "felt", `aud`, `iat` and `exp`, are signed with Ed25519 (EdDSA) and name
their key in the header's `kid`: Felt's keys are a key set (servicekit.keyset) that rotates without
downtime. The keys come from FELT_AUTH_KEYSET_DIR, or from one key file as before
(FELT_AUTH_PRIVATE_KEY_FILE; verifying only: FELT_AUTH_PUBLIC_KEY_FILE); in development a key set is made
once in the data directory and shared by `felt up`, `felt serve` and `felt token`. In production
(FELT_ENV=production) the keys must be given.

Players may also come from OpenID Connect providers (servicekit.oidc): a token whose `iss` is a trusted
provider is verified against that provider's JWKS. Any other issuer is refused.
"""

from __future__ import annotations

import contextvars
import enum
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from servicekit import errors, keyset
from servicekit.config import ConfigError, setting

ALGORITHM = "EdDSA"
ISSUER = "felt"
AUDIENCE = "felt"
DEFAULT_TTL_SECONDS = 12 * 3600
DEV_KEYSET_DIR = "keys"  # in the data directory (servicekit.keyset)
DEV_KEYSET_FILE = f"{DEV_KEYSET_DIR}/{keyset.KEYSET_FILE}"  # there once the development key set is made
# The development key of data directories made before key sets: it joins the set as its legacy key.
DEV_KEY_NAME = f"{DEV_KEYSET_DIR}/{keyset.LEGACY_FILE}"


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


class Keys(Protocol):
    """Felt's own keys as token code uses them: one key pair, or a key set (servicekit.keyset)."""

    @property
    def public(self) -> Ed25519PublicKey:
        """The signing key's public half."""

    @property
    def private(self) -> Ed25519PrivateKey | None:
        """The signing key (None where the process may verify but not sign)."""

    def signing_key(self, now: float) -> tuple[str | None, Ed25519PrivateKey | None]:
        """The kid and private key that sign a token issued at `now`."""

    def verification_key(self, kid: str | None) -> Ed25519PublicKey | None:
        """The key that verifies a token naming `kid` (None: a token without one), if trusted."""

    def jwks(self) -> dict[str, Any]:
        """The public keys, published as a JWKS."""


@dataclass(frozen=True)
class KeyPair:
    """One key: its tokens carry `kid` (none when None), and tokens without a kid verify against it."""

    public: Ed25519PublicKey
    private: Ed25519PrivateKey | None  # None where the process may verify but not sign
    kid: str | None = None

    def signing_key(self, now: float) -> tuple[str | None, Ed25519PrivateKey | None]:
        return self.kid, self.private

    def verification_key(self, kid: str | None) -> Ed25519PublicKey | None:
        return self.public if kid is None or kid == self.kid else None

    def jwks(self) -> dict[str, Any]:
        return {"keys": [keyset.published_jwk(self.public, self.kid or keyset.thumbprint(self.public))]}


JWKS_PATH = "/.well-known/jwks.json"  # on every service's metrics port


def jwks_routes(keys: Keys) -> dict[str, Callable[[], bytes]]:
    """Felt's public keys as a JWKS document at JWKS_PATH (servicekit.metrics serves it)."""
    return {JWKS_PATH: lambda: json.dumps(keys.jwks()).encode()}


def _key_pair(public: Ed25519PublicKey, private: Ed25519PrivateKey | None) -> KeyPair:
    return KeyPair(public, private, keyset.thumbprint(public))


def load_keys(data_dir: Path, production: bool = False) -> Keys:
    """FELT_AUTH_KEYSET_DIR's key set, else the one key of FELT_AUTH_PRIVATE_KEY_FILE (or, to verify only,
    FELT_AUTH_PUBLIC_KEY_FILE), else (development only) the data directory's key set, made if missing."""
    keyset_dir = setting("FELT_AUTH_KEYSET_DIR", "")
    private_file = setting("FELT_AUTH_PRIVATE_KEY_FILE", "")
    public_file = setting("FELT_AUTH_PUBLIC_KEY_FILE", "")
    if keyset_dir:
        return keyset.KeySet.open(Path(keyset_dir), create=not production)
    if private_file:
        private = keyset.load_private(Path(private_file))
        return _key_pair(private.public_key(), private)
    if public_file:
        public = serialization.load_pem_public_key(Path(public_file).read_bytes())
        if not isinstance(public, Ed25519PublicKey):
            raise ConfigError(f"{public_file} is not an Ed25519 public key")
        return _key_pair(public, None)
    if production:
        raise ConfigError(
            "missing required setting FELT_AUTH_KEYSET_DIR (or FELT_AUTH_PUBLIC_KEY_FILE, "
            "FELT_AUTH_PRIVATE_KEY_FILE): production services do not generate development keys"
        )
    return keyset.KeySet.open(data_dir / DEV_KEYSET_DIR, create=True)


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
    keys: Keys,
    subject: str,
    role: Role,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    now: float | None = None,
) -> str:
    """A token for (subject, role) valid `ttl_seconds` from `now` (the wall clock unless given)."""
    if role is Role.ANONYMOUS or not subject:
        raise ValueError("a token names a subject and a real role")
    problem = subject_problem(subject, role)
    if problem is not None:
        raise ValueError(problem)
    issued = int(time.time() if now is None else now)
    kid, private = keys.signing_key(issued)
    if private is None:
        raise ConfigError(
            "this process has no signing key (set FELT_AUTH_KEYSET_DIR with the signing key's file, "
            "or FELT_AUTH_PRIVATE_KEY_FILE)"
        )
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": subject,
        "role": role.value,
        "iat": issued,
        "exp": issued + ttl_seconds,
    }
    headers = {"kid": kid} if kid is not None else None
    return jwt.encode(claims, private, algorithm=ALGORITHM, headers=headers)


def expiry_of(token: str) -> int | None:
    """The `exp` a token claims, read without verifying it (a client's own token, to renew or warn in
    time); None when the token is not a JWT with an integer `exp`."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return None
    exp = claims.get("exp")
    return exp if isinstance(exp, int) else None


@dataclass(frozen=True)
class Verified:
    """A token's caller, its expiry, and whether the key that signed it is trusted still (a remembered
    token is refused once its key is retired, or gone from its provider's JWKS)."""

    caller: Caller
    expires: int
    still_trusted: Callable[[], bool]


class Issuers(Protocol):
    """The OpenID Connect providers whose player tokens Felt accepts (servicekit.oidc.TrustedIssuers)."""

    def __contains__(self, issuer: object) -> bool: ...

    def verify(self, token: str, header: dict[str, Any], issuer: str, now: float) -> Verified:
        """The player `token` names, verified against `issuer`'s keys; UNAUTHENTICATED otherwise."""


def verify_token(
    keys: Keys,
    token: str,
    now: float | None = None,
    issuers: Issuers | None = None,
    felt_players: bool = True,
) -> Caller:
    """The caller a token names; UNAUTHENTICATED with a reason when it is not valid."""
    return _verify(keys, token, time.time() if now is None else now, issuers, felt_players).caller


# A token issued by a host whose clock is a little ahead is still good here (iat a few seconds ahead).
ISSUED_AT_LEEWAY_SECONDS = 30


def invalid(why: str) -> errors.DomainError:
    return errors.unauthenticated("TOKEN_INVALID", f"the bearer token is not valid: {why}")


def shown(value: object) -> str:
    """A value read from an unverified token, safe and short for a message."""
    return repr(value)[:80]


def _verify(
    keys: Keys, token: str, now: float, issuers: Issuers | None = None, felt_players: bool = True
) -> Verified:
    """Felt's own tokens against its keys, a trusted provider's against that provider's: the unverified
    `iss` only picks whose keys to try (any other issuer is refused)."""
    try:
        header = jwt.get_unverified_header(token)
        issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
    except jwt.InvalidTokenError as exc:
        raise invalid(str(exc)) from None
    if issuer == ISSUER:
        return _verify_own(keys, token, header, now, felt_players)
    if issuers is not None and isinstance(issuer, str) and issuer in issuers:
        return issuers.verify(token, header, issuer, now)
    raise invalid(f"its issuer {shown(issuer)} is not one Felt trusts")


def _verify_own(keys: Keys, token: str, header: dict[str, Any], now: float, felt_players: bool) -> Verified:
    """Signature, algorithm, issuer and audience by PyJWT; times against `now`, the verifier's clock
    (PyJWT would read the wall clock, which a test on a virtual clock does not move)."""
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise invalid("its kid is not a string")
    key = keys.verification_key(kid)
    if key is None:
        raise invalid(
            f"it is signed with a key Felt does not trust (kid {shown(kid)})"
            if kid is not None
            else "it names no key (kid) and Felt holds no legacy key"
        )
    try:
        claims = jwt.decode(
            token,
            key,
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
        raise invalid(str(exc)) from None
    exp = check_times(claims, now)
    try:
        role = Role(claims.get("role", ""))
    except ValueError:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token names no known role") from None
    if role is Role.ANONYMOUS:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token names no known role")
    if role is Role.PLAYER and not felt_players:
        raise invalid("players sign in with the identity provider here, not with Felt's own keys")
    caller = checked_caller(claims["sub"], role)
    return Verified(caller, exp, lambda: keys.verification_key(kid) is not None)


def checked_caller(subject: object, role: Role) -> Caller:
    problem = subject_problem(subject, role) if isinstance(subject, str) else "the subject is not a string"
    if problem is not None:
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token's subject is not valid: {problem}")
    assert isinstance(subject, str)
    return Caller(subject, role)


def check_times(claims: dict[str, Any], now: float, iat_required: bool = True) -> int:
    """The token's `exp`, once it is not expired and has started (iat and nbf, with a little leeway)."""
    exp = _time_claim(claims, "exp")
    starts = [_time_claim(claims, name) for name in ("iat", "nbf") if name in claims]
    if iat_required and "iat" not in claims:
        raise invalid("it has no iat")
    if now >= exp:
        raise errors.unauthenticated("TOKEN_EXPIRED", "the bearer token has expired")
    if starts and max(starts) > now + ISSUED_AT_LEEWAY_SECONDS:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token is not valid yet")
    return exp


def _time_claim(claims: dict[str, Any], name: str) -> int:
    value = claims.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token's {name} is not an integer")
    return value


class TokenVerifier:
    """Verifies tokens, remembering the ones already verified until they expire.

    A client sends the same token on every call; checking its signature each time costs more than the
    rest of a small RPC. A remembered token is still refused once its `exp` has passed, or once the key
    that signed it is no longer trusted (retired from Felt's key set, gone from its provider's JWKS).
    """

    def __init__(
        self,
        keys: Keys,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.time,
        issuers: Issuers | None = None,
        felt_players: bool = True,
    ) -> None:
        self._keys = keys
        self._capacity = capacity
        self._clock = clock
        self._issuers = issuers
        self._felt_players = felt_players
        self._verified: OrderedDict[str, Verified] = OrderedDict()
        self._lock = threading.Lock()

    def verify(self, token: str) -> Caller:
        with self._lock:
            known = self._verified.get(token)
            if known is not None:
                self._verified.move_to_end(token)
        if known is not None:
            if self._clock() < known.expires and known.still_trusted():
                return known.caller
            with self._lock:
                self._verified.pop(token, None)
        # raises for an expired or bad token
        verified = _verify(self._keys, token, self._clock(), self._issuers, self._felt_players)
        with self._lock:
            self._verified[token] = verified
            while len(self._verified) > self._capacity:
                self._verified.popitem(last=False)
        return verified.caller


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
