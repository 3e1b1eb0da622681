"""The platform's identity provider for the suites (issue 22): a real JWKS over HTTP
(tests/servicekit/jwks_server.py) that every service of the stack trusts (FELT_OIDC_PROVIDERS), so the
auth matrix calls every RPC with its players' tokens too, and with what the provider did not sign.

Before the matrix runs, `settle` takes a key out of the JWKS (each service fetches it again and drops the
key), then the provider goes down for good: its players' tokens must keep working from the services'
cached keys, and the removed key's tokens stay refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.servicekit.jwks_server import JwksServer, Provider, SigningKey

AUDIENCE = "felt-suites"
CACHE_SECONDS = 1.0


class Identity:
    def __init__(self) -> None:
        self.kept = SigningKey.make("idp-kept", "ES256")
        self.removed = SigningKey.make("idp-removed", "RS256")
        self.provider = Provider(keys=[self.kept, self.removed])
        self.server = JwksServer(self.provider)
        self.stranger = Provider(keys=[SigningKey.make("idp-kept", "ES256")])  # an issuer nobody trusts
        self.stranger.issuer = "https://stranger.example"

    def __enter__(self) -> Identity:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    @property
    def issuer(self) -> str:
        return self.provider.issuer

    def env(self) -> dict[str, str]:
        trusted = {"issuer": self.issuer, "audience": AUDIENCE, "cache_seconds": CACHE_SECONDS,
                   "refresh_interval_seconds": 0.5}  # fmt: skip
        return {"FELT_OIDC_PROVIDERS": json.dumps([trusted])}

    def token(self, player: str, key: SigningKey | None = None, **claims: Any) -> str:
        return (key or self.kept).sign(self.provider.claims(AUDIENCE, player, **claims))

    def bad_credentials(self) -> dict[str, str]:
        claims = self.provider.claims(AUDIENCE, "suite-idp")
        return {
            "provider: a key removed from its JWKS": self.removed.sign(claims),
            "provider: a kid its JWKS never held": self.kept.sign(claims, kid="made-up"),
            "provider: another audience": self.kept.sign(self.provider.claims("someone-else", "suite-idp")),
            "provider: expired": self.kept.sign(self.provider.claims(AUDIENCE, "suite-idp", ttl=-60)),
            "an untrusted issuer": self.stranger.keys[0].sign(self.stranger.claims(AUDIENCE, "suite-idp")),
        }

    def settle(self, probe: Callable[[str], None]) -> None:
        """Remove a key, let every service's cache expire and fetch the JWKS again (`probe(token)` calls
        each service once with a provider's token), then take the provider down."""
        with self.provider.lock:
            self.provider.keys = [self.kept]
        time.sleep(CACHE_SECONDS + 0.1)
        probe(self.token("suite-probe"))
        with self.provider.lock:
            self.provider.down = True
