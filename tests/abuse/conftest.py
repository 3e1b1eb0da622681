"""The real dealer, wallet and table service in this process over real sockets, with the per-caller rate
limits ON (the other tests lift them) on a virtual clock that only a test moves: a budget spent stays
spent, so the counts are exact and nothing depends on how fast this machine is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from servicekit.testing import config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, table_config


class RateClock:
    """Seconds; stands still unless a test moves it."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Limited:
    stack: Stack
    rates: RateClock


@contextmanager
def limited_stack(data_dir: Path, **table_extra: Any) -> Iterator[Limited]:
    rates = RateClock()
    on = {"rate_limits": True, "rate_clock": rates}
    with (
        running(dealer_spec, config_for_tests("dealer", data_dir, **on)) as dealer,
        running(wallet_spec, config_for_tests("wallet", data_dir, **on)) as wallet,
    ):
        clock = MsClock()
        config = table_config(data_dir, dealer, wallet, poker_clock=clock, **on, **table_extra)
        with running(table_spec, config) as table:
            yield Limited(Stack(data_dir, dealer, wallet, table, clock), rates)


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Limited]:
    with limited_stack(tmp_path) as platform:
        yield platform


def outcomes(calls: list[Callable[[], Any]]) -> list[str]:
    """Each call's outcome: "OK" or the refusal's reason."""
    import grpc
    from servicekit.errors import details_of

    found = []
    for call in calls:
        try:
            call()
            found.append("OK")
        except grpc.RpcError as refused:
            found.append(details_of(refused).reason or refused.code().name)
    return found
