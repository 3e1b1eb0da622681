"""felt.webpage, the web table's page in development, over a real socket: the built page and nothing
outside it, /config.json with the doors, the development sign-in (a player token signed with the data
directory's key, as `felt token` signs it) and development chips through a real wallet service; what it
turns down, and why."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from felt import webpage
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.testing import RunningService, config_for_tests, running

from services.wallet.server import service_spec as wallet_spec

DOORS = {"table": "http://127.0.0.1:8084", "wallet": "http://127.0.0.1:8083"}
SHARD_DOORS = {"127.0.0.1:50054": "http://127.0.0.1:8084", "127.0.0.1:50064": "http://127.0.0.1:8094"}


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("webpage")


@pytest.fixture(scope="module")
def wallet(state: Path) -> Iterator[RunningService]:
    with running(wallet_spec, config_for_tests("wallet", state)) as service:
        yield service


@pytest.fixture(scope="module")
def page(state: Path, wallet: RunningService) -> Iterator[tuple[webpage.PageServer, str]]:
    tmp_path = state
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("<!doctype html><title>Felt</title>")
    (dist / "app.js").write_text("console.log('felt');")
    (tmp_path / "secret.txt").write_text("not for the browser")
    keys = auth.load_keys(tmp_path)  # the wallet's own key: the data directory's development key
    config = webpage.PageConfig(DOORS, SHARD_DOORS)
    # The wallet's internal port, with the certificate naming the page's service token (mutual TLS).
    sign_in = webpage.DevSignIn(keys, wallet.address, testing.client_files(webpage.WEB_SERVICE_NAME))
    server = webpage.PageServer("127.0.0.1", 0, config, sign_in, dist).start()
    try:
        yield server, server.url.rstrip("/")
    finally:
        server.close()


def fetch(
    url: str, body: Any = None, token: str = "", kind: str = "application/json"
) -> tuple[int, Any, Any]:
    """(status, body: JSON when it is JSON, headers)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    if data is not None:
        request.add_header("Content-Type", kind)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw, headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, raw, headers = error.code, error.read(), error.headers
    if headers.get_content_type() == "application/json":
        return status, json.loads(raw), headers
    return status, raw, headers


def test_the_page_its_files_and_config_and_nothing_outside_it(page: tuple[webpage.PageServer, str]) -> None:
    server, base = page
    assert server.built
    status, body, headers = fetch(f"{base}/")
    assert status == 200 and b"<title>Felt</title>" in body
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    # The page loads only its own files and calls only this server and the doors (no inline styles).
    policy = headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "style-src 'self'" in policy
    assert all(url in policy for url in [*DOORS.values(), *SHARD_DOORS.values()])
    status, body, headers = fetch(f"{base}/app.js")
    assert status == 200 and headers["Content-Type"].startswith(("text/javascript", "application/javascript"))
    status, config, _ = fetch(f"{base}/config.json")
    assert status == 200 and config == {"doors": DOORS, "shardDoors": SHARD_DOORS}
    for outside in ("/../secret.txt", "/%2e%2e/secret.txt", "/dist/../../secret.txt", "/nothing.js"):
        status, body, _ = fetch(f"{base}{outside}")
        assert status == 404 and b"not for the browser" not in body, outside


def test_a_page_not_built_says_how_to_build_it(tmp_path: Path) -> None:
    keys = auth.load_keys(tmp_path)
    config = webpage.PageConfig(DOORS)
    sign_in = webpage.DevSignIn(keys, "127.0.0.1:1", testing.client_files(webpage.WEB_SERVICE_NAME))
    server = webpage.PageServer("127.0.0.1", 0, config, sign_in, tmp_path / "absent").start()
    try:
        assert not server.built
        status, body, _ = fetch(server.url)
        assert status == 200 and b"make web" in body
    finally:
        server.close()


def test_sign_in_gives_a_player_token_signed_with_the_development_key(
    page: tuple[webpage.PageServer, str], state: Path
) -> None:
    _, base = page
    status, answer, _ = fetch(f"{base}/dev/token", {"player": "  ana  "})
    assert status == 200 and answer["player"] == "ana"
    caller = auth.verify_token(auth.load_keys(state), answer["token"])
    assert (caller.subject, caller.role) == ("ana", auth.Role.PLAYER)
    assert answer["expiresAt"] == auth.expiry_of(answer["token"])


@pytest.mark.parametrize(
    ("body", "kind", "status", "says"),
    [
        ({"player": ""}, "application/json", 400, "give a player name"),
        ({}, "application/json", 400, "give a player name"),
        ({"player": "bot:t:1"}, "application/json", 400, "never contains ':'"),
        ({"player": "x" * 65}, "application/json", 400, "at most 64"),
        ({"player": "ana\n"}, "application/json", 200, ""),  # trimmed
        ({"player": "a\tb"}, "application/json", 400, "printable"),
        (["ana"], "application/json", 400, "JSON object"),
        (b"{not json", "application/json", 400, "not JSON"),
        # Not JSON: a form another site's page could post without asking (no CORS preflight).
        (b"player=ana", "application/x-www-form-urlencoded", 415, "send JSON"),
        (b'{"player": "' + b"a" * 5000 + b'"}', "application/json", 413, "at most 4096 bytes"),
    ],
)
def test_sign_in_turns_down_what_is_not_a_player_name(
    page: tuple[webpage.PageServer, str], body: Any, kind: str, status: int, says: str
) -> None:
    _, base = page
    got, answer, _ = fetch(f"{base}/dev/token", body, kind=kind)
    assert got == status, answer
    if status != 200:
        assert says in answer["error"]


def test_development_chips_fill_the_players_wallet_up_to_the_buy_in(
    page: tuple[webpage.PageServer, str], wallet: RunningService
) -> None:
    _, base = page
    token = fetch(f"{base}/dev/token", {"player": "cy"})[1]["token"]
    assert fetch(f"{base}/dev/chips", {"amount": 5000}, token)[:2] == (200, {"issued": 5000})
    assert fetch(f"{base}/dev/chips", {"amount": 3000}, token)[:2] == (200, {"issued": 0})
    assert fetch(f"{base}/dev/chips", {"amount": 7000}, token)[:2] == (200, {"issued": 2000})
    ops = wpb_grpc.WalletServiceStub(wallet.channel("ops", auth.Role.OPERATOR))  # type: ignore[no-untyped-call]
    request = wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner="cy")
    assert ops.ListAccounts(request).accounts[0].balance == 7000


@pytest.mark.parametrize(
    ("token_of", "body", "status", "says"),
    [
        (None, {"amount": 100}, 401, "sign in first"),
        ("garbage", {"amount": 100}, 401, "not valid"),
        ("operator", {"amount": 100}, 403, "for players"),
        ("player", {"amount": 0}, 400, "amount"),
        ("player", {"amount": 10**9}, 400, "amount"),
        ("player", {"amount": "100"}, 400, "amount"),
        ("player", {"amount": True}, 400, "amount"),
    ],
)
def test_development_chips_are_for_a_signed_in_player_and_a_sane_amount(
    page: tuple[webpage.PageServer, str], state: Path, token_of: str | None, body: Any, status: int, says: str
) -> None:
    _, base = page
    keys = auth.load_keys(state)
    token = {
        None: "",
        "garbage": "not-a-token",
        "operator": auth.issue_token(keys, "ops", auth.Role.OPERATOR),
        "player": auth.issue_token(keys, "ana", auth.Role.PLAYER),
    }[token_of]
    got, answer, _ = fetch(f"{base}/dev/chips", body, token)
    assert got == status and says in answer["error"], answer


def test_a_token_from_another_key_is_not_taken(page: tuple[webpage.PageServer, str], tmp_path: Path) -> None:
    _, base = page
    other = auth.load_keys(tmp_path / "elsewhere")
    token = auth.issue_token(other, "ana", auth.Role.PLAYER)
    status, answer, _ = fetch(f"{base}/dev/chips", {"amount": 100}, token)
    assert status == 401 and "not valid" in answer["error"]


def test_page_origins_name_the_page_under_every_name_a_browser_gives_it() -> None:
    from felt.commands.up import page_origins

    assert page_origins("127.0.0.1", 8080) == "http://127.0.0.1:8080,http://localhost:8080"
    assert page_origins("0.0.0.0", 9000) == "http://127.0.0.1:9000,http://localhost:9000"
    assert (
        page_origins("10.1.2.3", 8080) == "http://127.0.0.1:8080,http://localhost:8080,http://10.1.2.3:8080"
    )
