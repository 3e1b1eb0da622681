"""Players signed in by a real OpenID Connect provider (issue 22): oidc-provider from the npm registry, a
certified provider, runs under Node (tests/oidc/provider.mjs) and issues players' JWT access tokens over
its real token endpoint (the platform's login service, a confidential client, with client_credentials and
a resource indicator naming Felt); a real wallet service finds the provider's JWKS through its discovery
document and verifies them. The provider rotates its keys during the tests.

`make node-deps` installs the provider into tests/oidc/node_modules (not in git); without node the tests
skip, saying so loudly.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import testing
from servicekit.config import OidcProvider
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.wallet.server import service_spec as wallet_spec

PROVIDER = Path(__file__).resolve().parents[1] / "oidc"
AUDIENCE = "https://felt.example/api"
START_SECONDS = 20.0


class NodeProvider:
    """tests/oidc/provider.mjs as a process: its issuer, tokens from its token endpoint, its test knobs."""

    def __init__(self, proc: subprocess.Popen[str], issuer: str) -> None:
        self.proc = proc
        self.issuer = issuer

    def token(self, player: str, algorithm: str = "ES256") -> str:
        form = {"grant_type": "client_credentials", "resource": AUDIENCE, "scope": "play"}
        body = urllib.parse.urlencode({**form, "player": player, "alg": algorithm}).encode()
        basic = base64.b64encode(b"felt-login:felt-login-secret").decode()
        request = urllib.request.Request(
            self.issuer + "/token", data=body, headers={"Authorization": f"Basic {basic}"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return str(json.loads(answer.read())["access_token"])

    def _test(self, path: str, post: bool = True) -> dict[str, Any]:
        request = urllib.request.Request(self.issuer + path, data=b"" if post else None)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return dict(json.loads(answer.read()))

    def rotate(self, drop_old: bool = False) -> list[str]:
        return list(self._test("/_test/rotate" + ("?drop=1" if drop_old else ""))["kids"])

    def jwks_down(self, down: bool) -> None:
        self._test(f"/_test/jwks?down={int(down)}")

    @property
    def jwks_fetches(self) -> int:
        return int(self._test("/_test/stats", post=False)["jwks_fetches"])


def _start_provider() -> NodeProvider:
    node = shutil.which("node")
    if node is None:
        print("\nnode is not installed: the oidc-provider tests are SKIPPED", file=sys.stderr)
        pytest.skip("node is not installed: the OpenID Connect provider (oidc-provider) cannot run")
    if not (PROVIDER / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("oidc-provider is not installed: run `make node-deps` (npm ci in tests/oidc)")
    proc = subprocess.Popen(
        [node, str(PROVIDER / "provider.mjs")],
        cwd=PROVIDER,
        env={**os.environ, "PORT": "0", "FELT_AUDIENCE": AUDIENCE},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # its first line, once it listens (or "" if it died)
    if not line:
        proc.wait(5)
        pytest.fail(f"oidc-provider did not start (exit {proc.returncode})")
    return NodeProvider(proc, json.loads(line)["issuer"])


@pytest.fixture
def provider() -> Iterator[NodeProvider]:
    started = _start_provider()
    try:
        yield started
    finally:
        started.proc.terminate()
        started.proc.wait(10)


def trusting(provider: NodeProvider, **overrides: float) -> tuple[OidcProvider, ...]:
    settings: dict[str, Any] = {"cache_seconds": 60.0, "refresh_interval_seconds": 0.2, **overrides}
    return (OidcProvider(provider.issuer, AUDIENCE, player_claim="player_id", **settings),)


def accounts(wallet: RunningService, token: str, owner: str) -> list[str]:
    stub = wpb_grpc.WalletServiceStub(testing.channel(wallet.address, token))
    found = stub.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=owner), timeout=10)
    return [a.owner for a in found.accounts]


def refusal(wallet: RunningService, token: str, owner: str = "ana") -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as error:
        accounts(wallet, token, owner)
    details = details_of(error.value)
    return details.code, details.reason


def with_kid(token: str, kid: str) -> str:
    """The token with another kid in its header (the signature no longer matches, and the kid is
    looked up first)."""
    head, body, signature = token.split(".")
    header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    header["kid"] = kid
    changed = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=").decode()
    return f"{changed}.{body}.{signature}"


def kid_of(token: str) -> str:
    head = token.split(".")[0]
    return str(json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"])


def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_providers_tokens_name_players_at_a_running_service(
    tmp_path: Path, provider: NodeProvider
) -> None:
    config = config_for_tests("wallet", tmp_path, oidc_providers=trusting(provider))
    with running(wallet_spec, config) as wallet:
        for algorithm in ("RS256", "ES256", "EdDSA"):
            player = f"ana-{algorithm.lower()}"
            token = provider.token(player, algorithm)
            stub = wpb_grpc.WalletServiceStub(testing.channel(wallet.address, token))
            stub.CreateAccount(
                wpb.CreateAccountRequest(
                    request_id=f"open-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player
                )
            )
            assert accounts(wallet, token, player) == [player]
            assert refusal(wallet, token, owner="bob") == (
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_YOUR_ACCOUNT",
            )


def test_a_token_whose_kid_was_changed_is_refused(tmp_path: Path, provider: NodeProvider) -> None:
    config = config_for_tests("wallet", tmp_path, oidc_providers=trusting(provider))
    with running(wallet_spec, config) as wallet:
        token = provider.token("ana")
        assert accounts(wallet, token, "ana") == []
        for kid in ("es256-9", "rs256-1", "eddsa-1"):  # unknown; another key of the JWKS, of another type
            assert refusal(wallet, with_kid(token, kid)) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")


def test_the_provider_rotates_and_drops_its_keys(tmp_path: Path, provider: NodeProvider) -> None:
    """A new key signs (the first token naming it fetches the JWKS again), the old one still verifies;
    then the provider drops the old keys: once Felt fetched the JWKS again, their tokens are refused,
    the ones it had verified and remembered included."""
    config = config_for_tests("wallet", tmp_path, oidc_providers=trusting(provider))
    with running(wallet_spec, config) as wallet:
        first = provider.token("ana")
        assert kid_of(first) == "es256-1" and accounts(wallet, first, "ana") == []
        provider.rotate()
        time.sleep(0.25)  # an interval since the last fetch
        second = provider.token("ana")
        assert kid_of(second) == "es256-2" and accounts(wallet, second, "ana") == []
        assert accounts(wallet, first, "ana") == []  # the old key is still published
        provider.rotate(drop_old=True)
        time.sleep(0.25)
        third = provider.token("ana")
        assert kid_of(third) == "es256-3" and accounts(wallet, third, "ana") == []
        for dropped in (first, second):
            assert refusal(wallet, dropped) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")


def test_while_the_jwks_is_down_the_cached_keys_keep_working(tmp_path: Path, provider: NodeProvider) -> None:
    config = config_for_tests(
        "wallet", tmp_path, oidc_providers=trusting(provider, cache_seconds=0.3, refresh_interval_seconds=0.1)
    )
    with running(wallet_spec, config) as wallet:
        assert accounts(wallet, provider.token("ana"), "ana") == []
        provider.jwks_down(True)
        fetched = provider.jwks_fetches
        for n in range(6):  # the cache expires again and again; every fetch fails
            time.sleep(0.2)
            assert accounts(wallet, provider.token(f"p{n}"), f"p{n}") == []
        assert provider.jwks_fetches > fetched
        provider.rotate()  # a key Felt could not fetch while the JWKS is down
        time.sleep(0.15)
        assert refusal(wallet, provider.token("ana")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
        provider.jwks_down(False)
        time.sleep(0.15)
        assert accounts(wallet, provider.token("ana"), "ana") == []


def test_a_token_of_an_untrusted_issuer_is_refused(tmp_path: Path, provider: NodeProvider) -> None:
    other = _start_provider()  # the same software, another issuer nobody configured
    try:
        config = config_for_tests("wallet", tmp_path, oidc_providers=trusting(provider))
        with running(wallet_spec, config) as wallet:
            assert accounts(wallet, provider.token("ana"), "ana") == []
            assert refusal(wallet, other.token("ana")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
            assert other.jwks_fetches == 0  # never asked for its keys
    finally:
        other.proc.terminate()
        other.proc.wait(10)


def test_a_flood_of_made_up_kids_fetches_the_jwks_at_most_once_an_interval(
    tmp_path: Path, provider: NodeProvider
) -> None:
    config = config_for_tests(
        "wallet", tmp_path, oidc_providers=trusting(provider, refresh_interval_seconds=30.0)
    )
    with running(wallet_spec, config) as wallet:
        wait_for(lambda: provider.jwks_fetches == 1)  # fetched when the service started
        token = provider.token("ana")
        for n in range(150):
            assert refusal(wallet, with_kid(token, f"made-up-{n}"))[1] == "TOKEN_INVALID"
        assert provider.jwks_fetches == 1
        assert accounts(wallet, token, "ana") == []
