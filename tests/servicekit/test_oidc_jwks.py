"""Players from an OpenID Connect provider (issue 22), against a real wallet service over real sockets and
a provider's real HTTP endpoints (tests/servicekit/jwks_server.py: its discovery document and a JWKS the
test changes). tests/oidc/test_oidc_provider.py does the same with a certified provider (oidc-provider,
under Node) issuing the tokens.

What is checked: RS256, ES256 and EdDSA tokens name players (from the configured claim); a kid the JWKS
does not hold, a key removed from it, another issuer, another audience, an algorithm its key does not
have are refused (UNAUTHENTICATED TOKEN_INVALID); while the JWKS is down the cached keys keep verifying;
a flood of made-up kids fetches the JWKS at most once an interval.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, server, testing
from servicekit.config import ConfigError, OidcProvider, load_server_config, oidc_providers
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.wallet.server import service_spec as wallet_spec
from tests.servicekit.jwks_server import JwksServer, Provider, SigningKey

AUDIENCE = "https://felt.example/api"
_ids = itertools.count(1)


def call(wallet: RunningService, token: str, owner: str) -> list[str]:
    """A player's call: its own PLAYER accounts' owners (refused with another's owner)."""
    stub = wpb_grpc.WalletServiceStub(testing.channel(wallet.address, token))
    found = stub.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=owner), timeout=10)
    return [a.owner for a in found.accounts]


def refused(wallet: RunningService, token: str, owner: str = "ana") -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.RpcError) as error:
        call(wallet, token, owner)
    details = details_of(error.value)
    return details.code, details.reason, details.message


def settings(provider: Provider, **overrides: object) -> OidcProvider:
    base: dict[str, object] = {
        "issuer": provider.issuer,
        "audience": AUDIENCE,
        "cache_seconds": 60.0,
        "refresh_interval_seconds": 0.2,
        "timeout_seconds": 2.0,
    }
    base.update(overrides)
    return OidcProvider(**base)  # type: ignore[arg-type]


def wait_for(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def idp() -> Iterator[JwksServer]:
    provider = Provider(keys=[SigningKey.make("rsa-1", "RS256")])
    with JwksServer(provider) as server_:
        yield server_


def test_tokens_of_every_algorithm_name_players_at_a_running_service(tmp_path: Path) -> None:
    """Two providers trusted at once (a platform moving between them): one found by discovery, whose
    player id is `sub`; one with its JWKS URL given, whose player id is another claim."""
    first = Provider(keys=[SigningKey.make(f"k-{a}", a) for a in ("RS256", "ES256", "EdDSA")])
    second = Provider(keys=[SigningKey.make("other", "ES256")])
    with JwksServer(first), JwksServer(second):
        trusted = (
            settings(first),
            settings(second, jwks_url=second.issuer + "/jwks", player_claim="player_id"),
        )
        config = config_for_tests("wallet", tmp_path, oidc_providers=trusted)
        with running(wallet_spec, config) as wallet:
            for key in first.keys:
                token = key.sign(first.claims(AUDIENCE, f"ana-{key.algorithm}"))
                stub = wpb_grpc.WalletServiceStub(testing.channel(wallet.address, token))
                stub.CreateAccount(
                    wpb.CreateAccountRequest(
                        request_id=f"open-{key.algorithm}",
                        kind=wpb.ACCOUNT_KIND_PLAYER,
                        owner=f"ana-{key.algorithm}",
                    )
                )
                assert call(wallet, token, f"ana-{key.algorithm}") == [f"ana-{key.algorithm}"]
                code, reason, _ = refused(wallet, token, owner="bob")  # the player is who the token says
                assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_ACCOUNT")
            moved = second.keys[0].sign(second.claims(AUDIENCE, "opaque-sub-1", player_id="cy"))
            assert call(wallet, moved, "cy") == []
            assert first.discovery_fetches == 1 and second.discovery_fetches == 0
            # Felt's own tokens keep working beside them: services, operators and (development) players.
            assert call(wallet, wallet.token("ops", auth.Role.OPERATOR), "ana-RS256") == ["ana-RS256"]
            assert call(wallet, wallet.token("dev-player"), "dev-player") == []


def test_what_the_provider_did_not_sign_for_felt_is_refused(tmp_path: Path, idp: JwksServer) -> None:
    provider = idp.provider
    key = provider.keys[0]
    stranger = Provider(keys=[SigningKey.make("rsa-1", "RS256")])  # same kid, another key
    with JwksServer(stranger):
        config = config_for_tests("wallet", tmp_path, oidc_providers=(settings(provider),))
        with running(wallet_spec, config) as wallet:
            good = provider.claims(AUDIENCE, "ana")
            assert call(wallet, key.sign(good), "ana") == []
            cases = {
                "a kid the JWKS does not hold": key.sign(good, kid="made-up"),
                "the kid of a key it holds, signed with another key": stranger.keys[0].sign(good),
                "an untrusted issuer": stranger.keys[0].sign(stranger.claims(AUDIENCE, "ana")),
                "another audience": key.sign(provider.claims("https://elsewhere.example", "ana")),
                "expired": key.sign(provider.claims(AUDIENCE, "ana", ttl=-10)),
                "a player id with the platform's colon": key.sign(provider.claims(AUDIENCE, "bot:t:1")),
                "an algorithm its key does not have": SigningKey("rsa-1", "HS256", b"x" * 32).sign(good),
                "no player claim": key.sign({k: v for k, v in good.items() if k != "sub"}),
            }
            for what, token in cases.items():
                code, reason, message = refused(wallet, token)
                assert code is grpc.StatusCode.UNAUTHENTICATED, what
                assert reason == ("TOKEN_EXPIRED" if what == "expired" else "TOKEN_INVALID"), (what, message)
            # A provider's token never names a service or an operator, whatever it claims.
            as_operator = key.sign(provider.claims(AUDIENCE, "ana", role="operator"))
            stub = wpb_grpc.WalletServiceStub(testing.channel(wallet.address, as_operator))
            with pytest.raises(grpc.RpcError) as error:
                stub.GetLedgerSummary(wpb.GetLedgerSummaryRequest())
            assert details_of(error.value).reason == "ROLE_NOT_ALLOWED"


def test_a_key_removed_from_the_jwks_is_refused_after_the_refresh(tmp_path: Path, idp: JwksServer) -> None:
    """The provider rotates: a new key signs, the old one leaves its JWKS. The first token naming the new
    kid fetches the JWKS again; from then on the old key's tokens are refused, the one the service had
    already verified and remembered included."""
    provider = idp.provider
    old = provider.keys[0]
    config = config_for_tests("wallet", tmp_path, oidc_providers=(settings(provider),))
    with running(wallet_spec, config) as wallet:
        held = old.sign(provider.claims(AUDIENCE, "ana"))
        assert call(wallet, held, "ana") == []
        new = SigningKey.make("rsa-2", "RS256")
        with provider.lock:
            provider.keys = [new]
        time.sleep(0.25)  # one refresh interval since the last fetch
        assert call(wallet, new.sign(provider.claims(AUDIENCE, "bob")), "bob") == []
        code, reason, message = refused(wallet, held)
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID") and "rsa-1" in message
        code, reason, _ = refused(wallet, old.sign(provider.claims(AUDIENCE, "cy")), "cy")
        assert reason == "TOKEN_INVALID"


def test_while_the_jwks_is_down_the_cached_keys_keep_working(tmp_path: Path, idp: JwksServer) -> None:
    provider = idp.provider
    key = provider.keys[0]
    trusted = (settings(provider, cache_seconds=0.3, refresh_interval_seconds=0.1),)
    with running(wallet_spec, config_for_tests("wallet", tmp_path, oidc_providers=trusted)) as wallet:
        assert call(wallet, key.sign(provider.claims(AUDIENCE, "ana")), "ana") == []
        with provider.lock:
            provider.down = True
            fetched = provider.jwks_fetches
        for n in range(8):  # 1.6 s: the cache expires several times over, every fetch fails
            time.sleep(0.2)
            assert call(wallet, key.sign(provider.claims(AUDIENCE, f"p{n}")), f"p{n}") == []
        assert provider.jwks_fetches > fetched  # it did try, and kept the keys it had
        # What it does not hold it cannot verify while the provider is down.
        _, reason, _ = refused(wallet, SigningKey.make("rsa-9").sign(provider.claims(AUDIENCE, "ana")))
        assert reason == "TOKEN_INVALID"
        with provider.lock:
            provider.down = False
        assert call(wallet, key.sign(provider.claims(AUDIENCE, "back")), "back") == []


def test_a_flood_of_made_up_kids_fetches_the_jwks_at_most_once_an_interval(
    tmp_path: Path, idp: JwksServer
) -> None:
    provider = idp.provider
    key = provider.keys[0]
    trusted = (settings(provider, refresh_interval_seconds=30.0),)
    with running(wallet_spec, config_for_tests("wallet", tmp_path, oidc_providers=trusted)) as wallet:
        wait_for(lambda: provider.jwks_fetches == 1)  # the service fetched the keys when it started
        assert call(wallet, key.sign(provider.claims(AUDIENCE, "ana")), "ana") == []
        tokens = [key.sign(provider.claims(AUDIENCE, "ana"), kid=uuid.uuid4().hex) for _ in range(200)]
        with ThreadPoolExecutor(8) as pool:
            reasons = list(pool.map(lambda t: refused(wallet, t)[1], tokens))
        assert set(reasons) == {"TOKEN_INVALID"}
        assert provider.jwks_fetches == 1  # within the 30 s interval since start-up: not one more
        assert call(wallet, key.sign(provider.claims(AUDIENCE, "ana")), "ana") == []


def test_settings_of_the_providers_and_the_production_rules(tmp_path: Path) -> None:
    parsed = oidc_providers(
        '[{"issuer": "https://id.example", "audience": "felt", "player_claim": "uid", "algorithms": ["ES256"]}]'
    )
    assert parsed == (OidcProvider("https://id.example", "felt", "uid", algorithms=("ES256",)),)
    for bad in ("{}", "[1]", '[{"issuer": "x"}]', '[{"issuer": "x", "audience": "y", "colour": 1}]',
                '[{"issuer": "x", "audience": "y", "algorithms": ["HS256"]}]',
                '[{"issuer": "x", "audience": "y"}, {"issuer": "x", "audience": "z"}]'):  # fmt: skip
        with pytest.raises(ValueError):
            oidc_providers(bad)
    env = {"FELT_DATA_DIR": str(tmp_path), "FELT_ENV": "production"}
    production = load_server_config("wallet", environ={**env, "FELT_AUTH_FELT_PLAYERS": "off"})
    with pytest.raises(ConfigError, match="FELT_OIDC_PROVIDERS"):
        server.player_issuers(production)  # no source of players: the service does not start
    idp = '[{"issuer": "https://id.example", "audience": "felt"}]'
    with_idp = load_server_config("wallet", environ={**env, "FELT_OIDC_PROVIDERS": idp})
    assert server.player_issuers(with_idp) is not None and not with_idp.accepts_felt_players
    plain = '[{"issuer": "http://id.example", "audience": "felt"}]'
    with pytest.raises(ConfigError, match="https"):
        server.player_issuers(load_server_config("wallet", environ={**env, "FELT_OIDC_PROVIDERS": plain}))
    development = load_server_config("wallet", environ={"FELT_DATA_DIR": str(tmp_path)})
    assert development.accepts_felt_players and server.player_issuers(development) is None


def test_felt_signed_players_can_be_turned_off_beside_a_provider(tmp_path: Path, idp: JwksServer) -> None:
    provider = idp.provider
    config = config_for_tests("wallet", tmp_path, oidc_providers=(settings(provider),), felt_players=False)
    with running(wallet_spec, config) as wallet:
        _, reason, message = refused(wallet, wallet.token("ana"))
        assert reason == "TOKEN_INVALID" and "identity provider" in message
        assert call(wallet, wallet.token("ops", auth.Role.OPERATOR), "ana") == []
        assert call(wallet, provider.keys[0].sign(provider.claims(AUDIENCE, "ana")), "ana") == []
