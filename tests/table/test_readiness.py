"""`felt up` starts the table service after dealer and wallet: with them away it is NOT_SERVING, and turns
SERVING (servicekit re-checks `ready()`) once both answer a health check."""

from __future__ import annotations

from pathlib import Path

from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import testing
from servicekit.testing import config_for_tests, free_port, running

from services.dealer.server import service_spec as dealer_spec
from services.table.config import load_config
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import wait_until


def _status(address: str) -> int:
    channel = testing.channel(address)
    response = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
    return int(response.status)


def test_defaults() -> None:
    config = load_config()
    assert config.port == 50054
    assert config.internal_listen_port() == 51054
    # The dealer's and the wallet's internal ports (mutual TLS).
    assert config.extra["dealer_address"] == "127.0.0.1:51052"
    assert config.extra["wallet_address"] == "127.0.0.1:51053"
    assert {t.game for t in config.extra["casino_tables"]} == {
        "TEXAS_HOLDEM_BONUS",
        "CASINO_HOLDEM",
        "THREE_CARD_POKER",
    }


def test_not_serving_until_dealer_and_wallet_answer(tmp_path: Path) -> None:
    dealer_port, wallet_port = free_port(), free_port()
    config = config_for_tests(
        "table",
        tmp_path,
        dealer_address=f"127.0.0.1:{dealer_port}",
        wallet_address=f"127.0.0.1:{wallet_port}",
    )
    with running(table_spec, config) as table:
        assert _status(table.address) == health_pb2.HealthCheckResponse.NOT_SERVING
        with (
            running(dealer_spec, config_for_tests("dealer", tmp_path, internal_port=dealer_port)),
            running(wallet_spec, config_for_tests("wallet", tmp_path, internal_port=wallet_port)),
        ):
            wait_until(lambda: _status(table.address) == health_pb2.HealthCheckResponse.SERVING)
