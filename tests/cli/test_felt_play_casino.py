"""`felt play --casino` at a terminal (issue 23): the round's clocks as the prompt shows them. The real
dealer, wallet and table service over sockets; a Casino Hold'em table whose betting clock runs 2 s and
decision clock 3 s. The player bets and then types nothing: the betting clock deals (the prompt ends: "Betting
closed."), the decision prompt counts down and ends when the clock folds for the player (CH-4 / the
timeout rule: an automatic Fold), the settlement shows it; the next round's prompt takes `q`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from felt.play import casino, lobby
from felt.play.session import Console
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import casino_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.casino.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.cli.test_felt_play_seat import Scripted


@pytest.fixture
def services(tmp_path: Path) -> Iterator[tuple[RunningService, RunningService]]:
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
        running(
            table_spec,
            config_for_tests(
                "table",
                tmp_path,
                dealer_address=dealer.address,
                wallet_address=wallet.address,
                poker_tables="",
                casino_tables=parse_tables("ch-touch:CASINO_HOLDEM:1"),
                betting_seconds=2.0,
                decision_seconds=3.0,
            ),
        ) as table,
    ):
        yield wallet, table


@pytest.mark.slow
def test_the_clocks_deal_and_decide_for_a_silent_player_and_the_prompt_says_so(
    services: tuple[RunningService, RunningService],
) -> None:
    wallet, table = services
    lobby.ensure_chips(wpb_grpc.WalletServiceStub(wallet.channel("felt-play", Role.SERVICE)), "vic", 1_000)
    stub = pb_grpc.CasinoServiceStub(table.channel("vic", Role.PLAYER))
    chosen = casino.choose_table(stub, "ch")
    assert chosen.table_id == "ch-touch"
    term = Scripted([("Bets > ", "ante 10 aa 5"), ("Bets > ", "q")])
    session = casino.CasinoSession(stub, chosen, None, Console(term.read, term.write, term))
    assert session.run() == 0
    out = term.out
    assert "Betting closed." in out and "Betting closed: round 1 is dealt" in out, out
    assert "Out of time: the clock decided for you." in out, out
    assert "You (seat 1): fold (the clock decided)" in out and "  ANTE 10: loses, folded" in out, out
    # Dealt and decided by the clocks, the round still went with the player's seed, and is verified.
    assert "Round 1 verified: your seed was mixed in" in out, out
    assert "Bets (the clock deals: 2 s left) > " in term.prompts, term.prompts
    # The decision prompt comes up once the betting one saw its clock out (up to a second late).
    assert "Decide, 2 s left > " in term.prompts and "Decide, 1 s left > " in term.prompts, term.prompts
    assert "You left the casino table; bets not dealt went back to your wallet." in out


def test_a_casino_table_by_game_or_id_and_none_for_an_unknown_one(
    services: tuple[RunningService, RunningService],
) -> None:
    _, table = services
    stub = pb_grpc.CasinoServiceStub(table.channel("wes", Role.PLAYER))
    assert casino.choose_table(stub, "ch-touch").game == pb.CASINO_GAME_CASINO_HOLDEM
    with pytest.raises(LookupError, match="no Texas Hold'em Bonus table has a free seat"):
        casino.choose_table(stub, "thb")  # this service runs no such table
    with pytest.raises(LookupError, match="give a game"):
        casino.choose_table(stub, "roulette")
    with pytest.raises(grpc.RpcError):
        pb_grpc.CasinoServiceStub(table.channel(None)).ListCasinoTables(pb.ListCasinoTablesRequest())
