"""A live table: several players bet and decide at once, share the dealer's and the community cards, and
each is settled from the same cards; the money adds up across all of them."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid

PLAYERS = [f"live{n}" for n in range(1, 6)]


def test_five_players_at_once(stack: Stack) -> None:
    for player in PLAYERS:
        stack.fund(player, 1000)
    house = stack.house_balance()

    def sit_and_bet(number: int) -> None:
        player = PLAYERS[number]
        casino = stack.casino(player)
        seat = number + 1
        casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live", seat=seat))
        casino.PlaceBets(
            pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=seat, bets=bets(ante=10, bonus=2))
        )

    with ThreadPoolExecutor(5) as pool:
        list(pool.map(sit_and_bet, range(5)))
    stack.casino(PLAYERS[0]).DealRound(pb.DealRoundRequest(request_id=rid(), table_id="thb-live"))

    def play(number: int) -> None:
        casino = stack.casino(PLAYERS[number])
        decisions = {
            "PRE_FLOP": pb.CASINO_DECISION_FLOP if number % 2 else pb.CASINO_DECISION_FOLD,
            "FLOP": pb.CASINO_DECISION_BET,
            "TURN": pb.CASINO_DECISION_CHECK,
        }
        for _ in range(200):
            view = stack.round(PLAYERS[number], "thb-live")
            if view.phase in ("SETTLED", "VOIDED"):
                return
            seat = next(s for s in view.seats if s.own)
            if seat.legal_decisions:
                casino.Decide(
                    pb.DecideRequest(
                        request_id=rid(),
                        table_id="thb-live",
                        seat=seat.seat,
                        decision=decisions[view.phase],
                        phase=view.phase,
                    )
                )
            else:
                time.sleep(0.01)  # waiting for the others to decide this street

    with ThreadPoolExecutor(5) as pool:
        list(pool.map(play, range(5)))
    views = [stack.round(p, "thb-live") for p in PLAYERS]
    assert all(v.phase == "SETTLED" for v in views)
    assert len({tuple(v.board) for v in views}) == 1 and len({tuple(v.dealer_cards) for v in views}) == 1
    nets = {
        p: sum(r.won - r.lost for r in next(s for s in v.seats if s.own).results)
        for p, v in zip(PLAYERS, views, strict=True)
    }
    stack.wait_for(lambda: all(stack.account(p).pending == 0 for p in PLAYERS))
    for player in PLAYERS:
        assert stack.account(player).balance == 1000 + nets[player]
    assert stack.house_balance() == house - sum(nets.values())
    assert stack.ledger_ok()
