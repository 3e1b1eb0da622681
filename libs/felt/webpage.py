"""The web table's page in development (`felt up`): a small HTTP server on 127.0.0.1 that serves the built
page (web/dist, `make web`), tells the browser where the services' browser doors are, and signs a person
in by name.

- `GET /` and the page's files from web/dist (a page saying how to build it when it is not built).
- `GET /config.json`: the Connect base URL of each service's browser door, and of each table shard's
  door by the shard's gRPC address (a TABLE_MOVED names the gRPC address; the page calls that door).
- `POST /dev/token {"player": NAME}`: a player token signed with the data directory's development key,
  as `felt token --player NAME` and `felt play` make it (renewed by the page before it expires).
- `POST /dev/chips {"amount": N}` with the player's token: development chips, as `felt play` gives
  them: the player's wallet account is opened if needed and given what `amount` lacks (the wallet's
  Issue, with a service token).

Development only: anyone who reaches the port may sign in as anyone. `felt up` binds it to its own host
(127.0.0.1 by default) and never starts it when FELT_ENV is production. The POSTs take JSON only, so a
page of another origin cannot send them without a CORS preflight, which this server never grants.
"""

from __future__ import annotations

import json
import mimetypes
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, client, tls
from servicekit.config import REPO_ROOT

from felt.play import lobby

DEFAULT_PAGE_PORT = 8080
DIST = REPO_ROOT / "web" / "dist"
MAX_BODY = 4096  # bytes of a sign-in request: a name, or an amount
MAX_PLAYER = 64  # characters of a name signed in here (a token's subject may be longer)
WEB_SERVICE_NAME = "felt-web"  # the page's service token and client certificate name it
MAX_CHIPS = 1_000_000  # development chips one request may ask the wallet to hold
TOKEN_TTL_SECONDS = auth.DEFAULT_TTL_SECONDS
WALLET_SECONDS = 5.0
NOT_BUILT = b"""<!doctype html><meta charset="utf-8"><title>Felt</title>
<p>The web table is not built. Run <code>make web</code> (it needs npm), then reload this page.</p>
"""


@dataclass(frozen=True)
class PageConfig:
    """What the page is told (`/config.json`): each service's browser door by name, and each table
    shard's door by the shard's gRPC address."""

    doors: Mapping[str, str]
    shard_doors: Mapping[str, str] = field(default_factory=dict)

    def as_json(self) -> bytes:
        return json.dumps({"doors": dict(self.doors), "shardDoors": dict(self.shard_doors)}).encode()


class Refused(Exception):
    """A request this server turns down: the status and what the page shows."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def player_name(body: Mapping[str, Any]) -> str:
    """The name a person signs in with: 1-64 printable characters, no colon (the platform's own names
    have one), no spaces at the ends."""
    name = body.get("player")
    if not isinstance(name, str) or not name.strip():
        raise Refused(HTTPStatus.BAD_REQUEST, "give a player name")
    name = name.strip()
    if len(name) > MAX_PLAYER:
        raise Refused(HTTPStatus.BAD_REQUEST, f"a player name has at most {MAX_PLAYER} characters")
    problem = auth.subject_problem(name, auth.Role.PLAYER)
    if problem is not None:
        raise Refused(HTTPStatus.BAD_REQUEST, problem)
    return name


def chips_wanted(body: Mapping[str, Any]) -> int:
    amount = body.get("amount")
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_CHIPS:
        raise Refused(HTTPStatus.BAD_REQUEST, f"amount: a whole number of chips, 1 to {MAX_CHIPS}")
    return amount


class DevSignIn:
    """Tokens and development chips, with the data directory's key (the stack's own)."""

    def __init__(self, keys: auth.Keys, wallet_address: str, tls_files: tls.TlsFiles) -> None:
        self._keys = keys
        self._wallet_address = wallet_address  # its internal port: a service token needs mutual TLS
        self._tls_files = tls_files  # a certificate naming felt-web, the service token's subject

    def token(self, body: Mapping[str, Any]) -> dict[str, Any]:
        player = player_name(body)
        token = auth.issue_token(self._keys, player, auth.Role.PLAYER, TOKEN_TTL_SECONDS)
        return {"player": player, "token": token, "expiresAt": auth.expiry_of(token)}

    def chips(self, authorization: str, body: Mapping[str, Any]) -> dict[str, Any]:
        caller = self._player(authorization)
        amount = chips_wanted(body)
        service_token = auth.issue_token(self._keys, WEB_SERVICE_NAME, auth.Role.SERVICE, 300)
        try:
            with client.channel(
                self._wallet_address, service_token, timeout=WALLET_SECONDS, tls_files=self._tls_files
            ) as channel:
                wallet = wpb_grpc.WalletServiceStub(channel)  # type: ignore[no-untyped-call]
                issued = lobby.ensure_chips(wallet, caller.subject, amount)
        except grpc.RpcError as error:
            raise Refused(HTTPStatus.BAD_GATEWAY, f"the wallet did not answer: {error.code().name}") from None
        return {"issued": issued}

    def _player(self, authorization: str) -> auth.Caller:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise Refused(HTTPStatus.UNAUTHORIZED, "sign in first (Authorization: Bearer <token>)")
        try:
            caller = auth.verify_token(self._keys, token.strip())
        except Exception:  # servicekit raises its UNAUTHENTICATED error: any failure is the same here
            raise Refused(HTTPStatus.UNAUTHORIZED, "the token is not valid: sign in again") from None
        if caller.role is not auth.Role.PLAYER:
            raise Refused(HTTPStatus.FORBIDDEN, "development chips are for players")
        return caller


def static_file(dist: Path, path: str) -> Path | None:
    """The file of web/dist a URL path names (`/` is index.html), never one outside it."""
    relative = urlsplit(path).path.lstrip("/") or "index.html"
    root = dist.resolve()
    try:
        found = (root / relative).resolve()
    except (OSError, ValueError):
        return None
    if not found.is_relative_to(root) or not found.is_file():
        return None
    return found


def content_security_policy(config: PageConfig) -> str:
    """The page loads only its own files and calls only this server and the services' doors."""
    doors = sorted({*config.doors.values(), *config.shard_doors.values()})
    return "; ".join(
        [
            "default-src 'self'",
            "connect-src 'self' " + " ".join(doors),
            "img-src 'self' data:",
            "style-src 'self'",
            "script-src 'self'",
            "frame-ancestors 'none'",
        ]
    )


def make_handler(dist: Path, config: PageConfig, sign_in: DevSignIn) -> type[BaseHTTPRequestHandler]:
    policy = content_security_policy(config)

    class PageHandler(BaseHTTPRequestHandler):
        server_version = "felt-web-page"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a page load is dozens of requests: not worth a line each in felt up's output

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            if path == "/config.json":
                self._send(HTTPStatus.OK, config.as_json(), "application/json")
                return
            found = static_file(dist, path)
            if found is None:
                if path in ("/", "/index.html"):
                    self._send(HTTPStatus.OK, NOT_BUILT, "text/html; charset=utf-8")
                else:
                    self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
                return
            kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind == "application/javascript":
                kind += "; charset=utf-8"
            self._send(HTTPStatus.OK, found.read_bytes(), kind)

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            routes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
                "/dev/token": sign_in.token,
                "/dev/chips": lambda body: sign_in.chips(self.headers.get("Authorization", ""), body),
            }
            try:
                route = routes.get(path)
                if route is None:
                    raise Refused(HTTPStatus.NOT_FOUND, "not found")
                answer = route(self._json_body())
            except Refused as refused:
                self._send(refused.status, json.dumps({"error": str(refused)}).encode(), "application/json")
                return
            self._send(HTTPStatus.OK, json.dumps(answer).encode(), "application/json")

        def _json_body(self) -> dict[str, Any]:
            if self.headers.get_content_type() != "application/json":
                raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON (Content-Type: application/json)")
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"at most {MAX_BODY} bytes")
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                raise Refused(HTTPStatus.BAD_REQUEST, "the body is not JSON") from None
            if not isinstance(body, dict):
                raise Refused(HTTPStatus.BAD_REQUEST, "the body is a JSON object")
            return body

        def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy", policy)
            self.end_headers()
            self.wfile.write(body)

    return PageHandler


class PageServer:
    """The page's HTTP server, in a thread of the process that starts it (`felt up`)."""

    def __init__(
        self, host: str, port: int, config: PageConfig, sign_in: DevSignIn, dist: Path = DIST
    ) -> None:
        self._host = host
        self._server = ThreadingHTTPServer((host, port), make_handler(dist, config, sign_in))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="felt-web-page", daemon=True)
        self.dist = dist

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self._server.server_address[1]}/"

    @property
    def built(self) -> bool:
        return (self.dist / "index.html").is_file()

    def start(self) -> PageServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def start_for_stack(
    host: str,
    port: int,
    config: PageConfig,
    data_dir: Path,
    wallet_address: str,
) -> PageServer:
    """The page of a `felt up` stack: its doors, tokens and chips with the data directory's key and the
    stack's wallet (its internal port, called with a development certificate naming felt-web). OSError
    when the port is taken."""
    files = tls.service_files(WEB_SERVICE_NAME, data_dir, production=False)
    sign_in = DevSignIn(auth.load_keys(data_dir), wallet_address, files)
    return PageServer(host, port, config, sign_in).start()
