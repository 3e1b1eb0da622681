"""A small identity provider's key publication, for tests: a real HTTP server with the discovery document
and a JWKS that a test changes (keys added and removed, the JWKS down), counting the fetches; and the
provider's signing keys (RS256, ES256, EdDSA) that sign players' tokens."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

DISCOVERY = "/.well-known/openid-configuration"
JWKS = "/jwks"


@dataclass
class SigningKey:
    kid: str
    algorithm: str
    private: Any

    @classmethod
    def make(cls, kid: str, algorithm: str = "RS256") -> SigningKey:
        private: Any
        if algorithm == "RS256":
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif algorithm == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        else:
            private = ed25519.Ed25519PrivateKey.generate()
        return cls(kid, algorithm, private)

    def public_jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.algorithm)
        jwk = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**jwk, "kid": self.kid, "alg": self.algorithm, "use": "sig"}

    def sign(self, claims: dict[str, Any], kid: str | None = "", algorithm: str | None = None) -> str:
        """A token with `claims`; its header names this key's kid (or `kid` when given; None: no kid)."""
        headers = {"typ": "at+jwt"}
        if kid is not None:
            headers["kid"] = kid or self.kid
        return jwt.encode(claims, self.private, algorithm=algorithm or self.algorithm, headers=headers)


@dataclass
class Provider:
    """The keys a provider publishes, whether it answers, and the fetches it served."""

    keys: list[SigningKey] = field(default_factory=list)
    down: bool = False
    jwks_fetches: int = 0
    discovery_fetches: int = 0
    issuer: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def claims(self, audience: str, subject: str, ttl: int = 600, **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        return {"iss": self.issuer, "aud": audience, "sub": subject, "iat": now, "exp": now + ttl, **extra}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        provider = self.server.provider
        with provider.lock:
            if self.path == JWKS:
                provider.jwks_fetches += 1
            elif self.path == DISCOVERY:
                provider.discovery_fetches += 1
            down = provider.down
            keys = [k.public_jwk() for k in provider.keys]
        if down:
            self.send_error(503, "down for the test")
            return
        if self.path == DISCOVERY:
            document: dict[str, Any] = {"issuer": provider.issuer, "jwks_uri": provider.issuer + JWKS}
        elif self.path == JWKS:
            document = {"keys": keys}
        else:
            self.send_error(404)
            return
        body = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    provider: Provider


class JwksServer:
    """Serves `provider` on 127.0.0.1; its issuer is the server's own URL."""

    def __init__(self, provider: Provider) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.provider = provider
        self.provider = provider
        provider.issuer = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})

    def __enter__(self) -> JwksServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
