"""Issue 13 "Suites that must exist": the auth matrix, generated from reflection.

Every RPC every running service serves (server reflection lists them; a new RPC is in the matrix by
itself, and fails it until roles.py classifies it) is called

- with each bad credential below (no token, garbage, expired, wrong audience, wrong issuer, `alg: none`,
  HS256 signed with the public key, a foreign Ed25519 key, not yet valid, an unknown role, a player id
  with a platform name's colon, a kid Felt's key set does not hold, no kid; and from the players'
  identity provider (tests/suites/identity.py): a key removed from its JWKS, a kid it never published,
  another audience, expired, and a token of an issuer nobody trusts): UNAUTHENTICATED, except that a
  service open to anonymous callers (the evaluator) serves the tokenless call;
- with a valid token of every role outside the RPC's roles (players: Felt's development token and one
  from the identity provider, whose JWKS is down for the whole matrix: the cached keys verify it), on an empty request and on a request with real
  ids (a player issuing chips to herself): PERMISSION_DENIED ROLE_NOT_ALLOWED, the role checked before
  the request is read; and of every role inside them: never refused for its role;
- with player B's token on a request aimed at player A's account, hold, transfer, shoe, seat or private
  table: refused (PERMISSION_DENIED, NOT_FOUND or FAILED_PRECONDITION), and no answer to B shows A's
  private table, its invite code, A's account, hold or transfer ids;

and after each RPC's calls the ledger (summary and every account), every poker table's view, every casino
table and round, and A's shoe are as they were.

The whole matrix runs twice: over native gRPC, and through each service's browser door (Connect): one
layer of auth and roles serves both.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from servicekit import auth, testing

from tests.suites.identity import Identity
from tests.suites.roles import ROLES
from tests.suites.stack import Door, Rpc, Stack, details_of
from tests.suites.world import BOB, World

pytestmark = pytest.mark.slow

REFUSED_FOR_ANOTHER = {grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND,
                       grpc.StatusCode.FAILED_PRECONDITION}  # fmt: skip


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": auth.ISSUER, "aud": auth.AUDIENCE, "sub": "suite-ops", "role": "operator",
              "iat": now, "exp": now + 600}  # fmt: skip
    claims.update(changes)
    return claims


def _unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    head = _b64(json.dumps(header).encode())
    body = _b64(json.dumps(claims).encode())
    return f"{head}.{body}.{_b64(signature)}"


def _hs256_with_public_key(stack: Stack) -> str:
    """Algorithm confusion: an HMAC "signed" with the verifier's public key, as the secret."""
    public = stack.keys.public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64(json.dumps(_claims()).encode())
    signature = hmac.new(public, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(signature)}"


def _signed(stack: Stack, claims: dict[str, Any], kid: str | None = "") -> str:
    """Signed with Felt's signing key, naming it (or `kid`; None: no kid)."""
    keys = stack.keys
    kid_now, private = keys.signing_key(time.time())
    assert private is not None
    headers = None if kid is None else {"kid": kid or kid_now}
    return jwt.encode(claims, private, algorithm=auth.ALGORITHM, headers=headers)


def bad_credentials(stack: Stack, identity: Identity) -> dict[str, str | None]:
    """Each one claims the operator's role (the most a token can give) and is wrong in one way."""
    now = int(time.time())
    return {
        **identity.bad_credentials(),
        "a kid Felt does not hold": _signed(stack, _claims(), kid="made-up"),
        "no kid (no legacy key in the set)": _signed(stack, _claims(), kid=None),
        "no token": None,
        "garbage": "not-a-jwt.at-all",
        "expired": _signed(stack, _claims(iat=now - 7200, exp=now - 3600)),
        "wrong audience": _signed(stack, _claims(aud="someone-else")),
        "wrong issuer": _signed(stack, _claims(iss="not-felt")),
        "alg none": _unsigned({"alg": "none", "typ": "JWT"}, _claims()),
        "HS256 with the public key": _hs256_with_public_key(stack),
        "foreign key": jwt.encode(_claims(), Ed25519PrivateKey.generate(), algorithm=auth.ALGORITHM),
        "not yet valid": _signed(stack, _claims(iat=now + 3600, exp=now + 7200)),
        "unknown role": _signed(stack, _claims(role="admin")),
        "player named like a bot": _signed(stack, _claims(role="player", sub="bot:suite-nlhe:1")),
    }


def _token(stack: Stack, role: auth.Role, subject: str) -> str:
    return stack.token(subject, role)


def _calls(
    world: World, rpc: Rpc, identity: Identity, through_door: bool = False
) -> list[tuple[str, bytes, str | None, Callable[[grpc.StatusCode, Any], str]]]:
    """(what, body, token, check) for every call the matrix makes of `rpc`; check returns a problem or ""."""
    stack = world.stack
    rule = ROLES[rpc.name]
    fields = world.fields()
    empty = rpc.request().SerializeToString()
    bodies = [("empty request", empty)]
    if rule.example is not None:
        bodies.append(("request with real ids", rpc.request(rule.example(fields)).SerializeToString()))
    if rule.owned is not None:
        bodies.append(("request for A's resource", rpc.request(rule.owned(fields)).SerializeToString()))
    calls: list[tuple[str, bytes, str | None, Callable[[grpc.StatusCode, Any], str]]] = []

    def unauthenticated(code: grpc.StatusCode, error: Any) -> str:
        return "" if code is grpc.StatusCode.UNAUTHENTICATED else f"{code.name} {_reason(error)}"

    def anonymous_served(code: grpc.StatusCode, error: Any) -> str:
        bad = code is grpc.StatusCode.UNAUTHENTICATED or _reason(error) == "ROLE_NOT_ALLOWED"
        return f"{code.name} {_reason(error)}" if bad else ""

    for what, token in bad_credentials(stack, identity).items():
        anonymous_ok = token is None and auth.Role.ANONYMOUS in rule.roles
        for body_name, body in bodies:
            calls.append(
                (f"{what}, {body_name}", body, token, anonymous_served if anonymous_ok else unauthenticated)
            )

    def denied(code: grpc.StatusCode, error: Any) -> str:
        ok = code is grpc.StatusCode.PERMISSION_DENIED and _reason(error) == "ROLE_NOT_ALLOWED"
        return "" if ok else f"{code.name} {_reason(error)}"

    def allowed(code: grpc.StatusCode, error: Any) -> str:
        bad = code is grpc.StatusCode.UNAUTHENTICATED or _reason(error) == "ROLE_NOT_ALLOWED"
        return f"{code.name} {_reason(error)}" if bad else ""

    subjects = {auth.Role.PLAYER: BOB, auth.Role.SERVICE: "suite-svc", auth.Role.OPERATOR: "suite-ops2"}
    tokens = [(role.value, role, _token(stack, role, subject)) for role, subject in subjects.items()]
    tokens.append(("player of the identity provider", auth.Role.PLAYER, identity.token(BOB)))

    def certificate_required(code: grpc.StatusCode, error: Any) -> str:
        ok = code is grpc.StatusCode.UNAUTHENTICATED and _reason(error) == "CLIENT_CERTIFICATE_REQUIRED"
        return "" if ok else f"{code.name} {_reason(error)}"

    for who, role, token in tokens:
        if through_door and role is auth.Role.SERVICE:
            # The door has no client certificate to match a service token to (servicekit.tls).
            calls.append(
                (
                    f"{who} (no certificate through the door), empty request",
                    empty,
                    token,
                    certificate_required,
                )
            )
        elif role in rule.roles:
            calls.append((f"{who} (allowed), empty request", empty, token, allowed))
        else:
            for body_name, body in bodies:
                calls.append((f"{who} (not allowed), {body_name}", body, token, denied))

    if rule.owned is not None and auth.Role.PLAYER in rule.roles:

        def refused(code: grpc.StatusCode, error: Any) -> str:
            return "" if code in REFUSED_FOR_ANOTHER else f"{code.name} {_reason(error)}"

        body = rpc.request(rule.owned(fields)).SerializeToString()
        calls.append(("another player's resource", body, _token(stack, auth.Role.PLAYER, BOB), refused))
        calls.append(("another player's resource, from the provider", body, identity.token(BOB), refused))
    return calls


def _is_bob(token: str | None) -> bool:
    if token is None:
        return False
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return False
    from_provider = claims.get("iss") not in (None, auth.ISSUER)  # its tokens always name players
    return bool(claims.get("sub") == BOB and (claims.get("role") == "player" or from_provider))


def _reason(error: Any) -> str:
    return details_of(error).reason if error is not None else ""


def test_every_rpc_is_classified(rpcs: list[Rpc]) -> None:
    """A served RPC missing from the role table fails here: classify it (roles.py) to cover it."""
    served = {rpc.name for rpc in rpcs}
    missing = sorted(served - set(ROLES))
    assert not missing, f"RPCs served but not in tests/suites/roles.py: {missing}"
    # An RPC classified but not served is stale, unless its whole service is not in this checkout yet.
    services = {name.partition("/")[0] for name in served}
    gone = sorted(name for name in set(ROLES) - served if name.partition("/")[0] in services)
    assert not gone, f"roles.py classifies RPCs nobody serves: {gone}"
    for name, rule in ROLES.items():
        if auth.Role.PLAYER in rule.roles:
            assert rule.owned is not None or rule.public, f"{name}: a player may call it: owned or public?"


def _probe(platform: World, rpcs: list[Rpc]) -> Callable[[str], None]:
    """One call to each service with `token` (what its handler answers does not matter here)."""

    def probe(token: str) -> None:
        first = {rpc.service: rpc for rpc in reversed(rpcs)}
        for service, rpc in first.items():
            with testing.channel(platform.stack.addresses[service], token) as channel:
                rpc.exchange(channel, rpc.request().SerializeToString(), token)

    return probe


@pytest.mark.parametrize("door", ["grpc", "connect"])
def test_auth_matrix(
    platform: World, rpcs: list[Rpc], identity: Identity, capsys: pytest.CaptureFixture[str], door: str
) -> None:
    identity.settle(_probe(platform, rpcs))  # a key removed from the JWKS, then the provider down
    started = time.monotonic()
    problems: list[str] = []
    total = 0
    before = platform.snapshot()
    # What only alice (and the platform) may see: never in an answer to player B.
    secrets = {
        "private table": platform.private_table,
        "invite code": platform.invite_code,
        "account": platform.alice_account,
        "hold": platform.hold_id,
        "transfer": platform.funding_transfer,
    }
    for rpc in rpcs:
        if rpc.name not in ROLES:
            continue  # test_every_rpc_is_classified says so
        channels: dict[str, grpc.Channel | Door] = {}
        for what, body, token, check in _calls(platform, rpc, identity, through_door=door != "grpc"):
            total += 1
            # A service's token comes with its certificate (the internal port's mutual TLS): the matrix
            # checks what the token may do, not the transport (tests/servicekit/test_tls.py does). The
            # browser door has no client certificates: a service token is refused there.
            name = testing.certificate_name(token) if door == "grpc" else "door"
            if name not in channels:
                channels[name] = (
                    testing.channel(platform.stack.addresses[rpc.service], name=name)
                    if door == "grpc"
                    else Door(platform.stack.web_urls[rpc.service])
                )
            channel = channels[name]
            code, error, answer = rpc.exchange(channel, body, token)
            problem = check(code, error)
            if not problem and answer and _is_bob(token):
                shown = [name for name, secret in secrets.items() if secret.encode() in answer]
                problem = f"OK, showing player B alice's {shown}" if shown else ""
            if problem:
                problems.append(f"{rpc.name} [{what}]: got {problem}")
        for opened in channels.values():
            opened.close()
        after = platform.snapshot()
        if after != before:
            problems.append(f"{rpc.name}: the state changed:\n  {_diff(before, after)}")
            before = after
    with capsys.disabled():
        print(
            f"\nauth matrix ({door}): {total} calls over {len(rpcs)} RPCs in {time.monotonic() - started:.1f} s"
        )
    assert not problems, "\n".join(problems)


def _diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    lines = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            a, b = before.get(key), after.get(key)
            if isinstance(a, dict) and isinstance(b, dict):
                for k in sorted(set(a) | set(b)):
                    if a.get(k) != b.get(k):
                        lines.append(f"{key}.{k}: {a.get(k)!r} -> {b.get(k)!r}")
            else:
                lines.append(f"{key}: {a!r} -> {b!r}")
    return "\n  ".join(lines)[:4000]
