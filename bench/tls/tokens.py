"""Token verification cost, in this process: CPU microseconds of this thread (time.thread_time: what a busy
shared machine inflates least) per `TokenVerifier.verify`, first sight of a
token (its signature checked: a new token each call) against a token seen before (the verified-token
cache), for Felt's own EdDSA tokens and for an OpenID Connect provider's RS256 and ES256 ones.

Baselines in the same run:
- `before issue 22`: the verifier as it was before key sets and OpenID Connect (git 140aef6^,
  libs/servicekit/auth.py, copied below as `_verify_before` / `CacheBefore`): PyJWT against one Ed25519
  key, no kid, no issuer dispatch. Felt never had a hand-written verifier: PyJWT verified its tokens
  from the first commit (95fca97), so this is "today's verifier" before the change.
- `signature only`: one Ed25519 signature check with `cryptography`, nothing else: the floor any verifier
  of these tokens pays on first sight.

The provider's JWKS is served over HTTP on loopback and fetched once by servicekit.oidc (warm, as a
service does at start); its fetches are not timed.
"""

from __future__ import annotations

import base64
import json
import statistics
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from servicekit import auth, errors, keyset, oidc
from servicekit.config import OidcProvider

Row = tuple[str, str, float, float]  # (token, verifier, µs first sight, µs cache hit)


# -- the verifier before issue 22 (git 140aef6^:libs/servicekit/auth.py), unchanged but for names ------


def _verify_before(public: Ed25519PublicKey, token: str, now: float) -> tuple[auth.Caller, int]:
    """BASELINE, copied from 140aef6^: signature, algorithm, issuer and audience by PyJWT against the one
    key; times against `now`."""
    try:
        claims = jwt.decode(
            token,
            public,
            algorithms=[auth.ALGORITHM],
            audience=auth.AUDIENCE,
            issuer=auth.ISSUER,
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
    if starts > now + auth.ISSUED_AT_LEEWAY_SECONDS:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token is not valid yet")
    try:
        role = auth.Role(claims.get("role", ""))
    except ValueError:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token names no known role") from None
    if role is auth.Role.ANONYMOUS:
        raise errors.unauthenticated("TOKEN_INVALID", "the bearer token names no known role")
    subject = claims["sub"]
    problem = (
        auth.subject_problem(subject, role) if isinstance(subject, str) else "the subject is not a string"
    )
    if problem is not None:
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token's subject is not valid: {problem}")
    return auth.Caller(subject, role), exp


def _time_claim(claims: dict[str, object], name: str) -> int:
    value = claims.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.unauthenticated("TOKEN_INVALID", f"the bearer token's {name} is not an integer")
    return value


class CacheBefore:
    """BASELINE, copied from 140aef6^ (TokenVerifier): verified tokens remembered until they expire."""

    def __init__(self, public: Ed25519PublicKey, capacity: int = 10_000) -> None:
        self._public = public
        self._capacity = capacity
        self._clock: Callable[[], float] = time.time
        self._verified: OrderedDict[str, tuple[auth.Caller, int]] = OrderedDict()
        self._lock = threading.Lock()

    def verify(self, token: str) -> auth.Caller:
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
        caller, expires = _verify_before(self._public, token, self._clock())
        with self._lock:
            self._verified[token] = (caller, expires)
            while len(self._verified) > self._capacity:
                self._verified.popitem(last=False)
        return caller


# -- an OpenID Connect provider's keys, served as a JWKS on loopback ------------------------------------


class _Jwks(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, document: dict[str, Any]) -> None:
        body = json.dumps(document).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/jwks.json"


def _provider_keys() -> dict[str, Any]:
    """alg -> private key of the provider (RSA 2048 for RS256, P-256 for ES256)."""
    return {
        "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ES256": ec.generate_private_key(ec.SECP256R1()),
    }


def _jwk(alg: str, private: Any) -> dict[str, Any]:
    algorithm = jwt.get_algorithm_by_name(alg)
    found: dict[str, Any] = json.loads(algorithm.to_jwk(private.public_key()))
    return {**found, "kid": f"bench-{alg.lower()}", "alg": alg, "use": "sig"}


# -- timing ------------------------------------------------------------------------------------------


def _us_per_call(verify: Callable[[str], object], tokens: list[str]) -> float:
    t0 = time.thread_time()
    for token in tokens:
        verify(token)
    return (time.thread_time() - t0) / len(tokens) * 1e6


def _signature_only(public: Ed25519PublicKey, tokens: list[str]) -> float:
    parts = []
    for token in tokens:
        head, body, signature = token.split(".")
        parts.append((base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)), f"{head}.{body}"))
    t0 = time.thread_time()
    for signature_bytes, signed in parts:
        public.verify(signature_bytes, signed.encode())
    return (time.thread_time() - t0) / len(parts) * 1e6


def run(calls: int, reps: int) -> list[Row]:
    """Medians over `reps` of `calls` verifications each (a new verifier per rep: an empty cache)."""
    scratch = Path(tempfile.mkdtemp(prefix="felt-bench-tokens-"))
    keys = keyset.KeySet.open(scratch / "keys", create=True)
    old_private = Ed25519PrivateKey.generate()  # the single kid-less key of before issue 22
    old_keys = auth.KeyPair(old_private.public_key(), old_private)
    providers = _provider_keys()
    jwks = _Jwks({"keys": [_jwk(alg, key) for alg, key in providers.items()]})
    issuer = f"http://127.0.0.1:{jwks.server_address[1]}"
    trusted = oidc.TrustedIssuers([OidcProvider(issuer=issuer, audience="felt", jwks_url=jwks.url)])
    trusted.keys_of(issuer).warm()

    def felt_tokens(rep: int) -> list[str]:
        return [auth.issue_token(keys, f"p{rep}-{i}", auth.Role.PLAYER) for i in range(calls)]

    def old_tokens(rep: int) -> list[str]:
        return [auth.issue_token(old_keys, f"p{rep}-{i}", auth.Role.PLAYER) for i in range(calls)]

    def provider_tokens(alg: str) -> Callable[[int], list[str]]:
        def make(rep: int) -> list[str]:
            now = int(time.time())
            return [
                jwt.encode(
                    {"iss": issuer, "aud": "felt", "sub": f"p{rep}-{i}", "iat": now, "exp": now + 3600},
                    providers[alg],
                    algorithm=alg,
                    headers={"kid": f"bench-{alg.lower()}"},
                )
                for i in range(calls)
            ]

        return make

    cases: list[tuple[str, str, Callable[[int], list[str]], Callable[[], Callable[[str], object]]]] = [
        ("Felt EdDSA", "PyJWT, key set (now)", felt_tokens, lambda: auth.TokenVerifier(keys, issuers=trusted).verify),
        ("Felt EdDSA", "PyJWT, one key (before issue 22)", old_tokens, lambda: CacheBefore(old_keys.public).verify),
        ("OIDC RS256", "PyJWT + JWKS (now)", provider_tokens("RS256"), lambda: auth.TokenVerifier(keys, issuers=trusted).verify),
        ("OIDC ES256", "PyJWT + JWKS (now)", provider_tokens("ES256"), lambda: auth.TokenVerifier(keys, issuers=trusted).verify),
    ]  # fmt: skip
    found: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    floor: list[float] = []
    for rep in range(reps):
        for token_kind, verifier_kind, make, verifier in cases:
            tokens = make(rep)
            verify = verifier()
            cold = _us_per_call(verify, tokens)  # each token new to this verifier: signature checked
            hit = _us_per_call(verify, [tokens[0]] * calls)  # the same token again: the cache
            slot = found.setdefault((token_kind, verifier_kind), ([], []))
            slot[0].append(cold)
            slot[1].append(hit)
        floor.append(_signature_only(old_keys.public, old_tokens(rep)))
    jwks.shutdown()
    rows = [(t, v, statistics.median(c), statistics.median(h)) for (t, v), (c, h) in found.items()]
    rows.append(("Felt EdDSA", "signature only (cryptography)", statistics.median(floor), float("nan")))
    return rows
