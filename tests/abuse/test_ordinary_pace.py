"""Issue 23: limits that refuse ordinary play are wrong. A person playing the casino games as fast as a
person plays them is never refused, with every per-caller rate limit on, on the rate limiter's virtual
clock (moved by the test as the person's time passes: counts, not timings).

The person's pace, the fastest ordinary play we know of: chips tapped onto the bet spots one at a time,
5 to 12 taps a second (a 25 Ante is five taps of a 5 chip), at up to the three seats a player may hold
(Three Card Poker, TCP-6.2: several hands at once), the deal right after the last chip, decisions tapped
0.2 to 0.6 s apart, 1 to 3 s between rounds; and a Texas Hold'em Bonus player alone at a Touch table
deciding at every street. The budgets of README "Limits per caller" hold this with room; the bets'
budget (5/s, bursts of 20) refused a three-seat player over 200 times in 45 rounds."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from servicekit.auth import Role
from servicekit.errors import details_of

from services.table.casino.tables import parse_tables
from tests.abuse.conftest import Limited, limited_stack
from tests.table.conftest import FakeClock

ROUNDS = 45  # at each of the two tables: 90 rounds in all
CHIP_TAP = (0.05, 0.15)  # seconds between two chips tapped onto a spot: 7 to 20 a second, 10 on average
DECISION = (0.2, 0.6)
BETWEEN_ROUNDS = (1.0, 3.0)


@pytest.fixture
def casino(tmp_path: Path) -> Iterator[Limited]:
    tables = parse_tables("pace-thb:TEXAS_HOLDEM_BONUS:1,pace-tcp:THREE_CARD_POKER:3")
    with limited_stack(tmp_path, casino_tables=tables, clock=FakeClock()) as platform:
        yield platform


class Person:
    """One player's calls, each spending the person's time on the rate clock first; refusals counted."""

    def __init__(self, limited: Limited, name: str, seed: int) -> None:
        limited.stack.fund(name, 10_000_000)
        self.stub = cpb_grpc.CasinoServiceStub(limited.stack.table.channel(name, Role.PLAYER))
        self.rates = limited.rates
        self.rng = random.Random(seed)
        self.refused: Counter[str] = Counter()
        self.calls = 0
        self.name = name

    def after(self, pause: tuple[float, float], call: Callable[[Any], Any], request: Any) -> Any:
        self.rates.now += self.rng.uniform(*pause)
        self.calls += 1
        request.request_id = f"{self.name}-{self.calls}"
        try:
            return call(request)
        except grpc.RpcError as error:
            self.refused[f"{type(request).__name__.removesuffix('Request')} {details_of(error).reason}"] += 1
            return None

    def tap_chips(self, table: str, seat: int, spot: str, chips: int) -> None:
        for _ in range(chips):
            bet = [cpb.Bet(kind=spot, amount=5)]
            self.after(
                CHIP_TAP, self.stub.PlaceBets, cpb.PlaceBetsRequest(table_id=table, seat=seat, bets=bet)
            )


def test_a_three_seat_three_card_poker_player_tapping_chips_is_never_refused(casino: Limited) -> None:
    ana = Person(casino, "pace-ana", 1)
    for seat in (1, 2, 3):
        ana.after(
            (0.5, 1.0), ana.stub.JoinCasinoTable, cpb.JoinCasinoTableRequest(table_id="pace-tcp", seat=seat)
        )
    settled = 0
    for _ in range(ROUNDS):
        ana.rates.now += ana.rng.uniform(*BETWEEN_ROUNDS)
        for seat in (1, 2, 3):
            ana.tap_chips("pace-tcp", seat, "ANTE", 10)  # 50 in 5-chips
            ana.tap_chips("pace-tcp", seat, "PAIR_PLUS", 5)
        dealt = ana.after(CHIP_TAP, ana.stub.DealRound, cpb.DealRoundRequest(table_id="pace-tcp"))
        view = dealt.round if dealt is not None else None
        for seat in (1, 2, 3):
            decide = cpb.DecideRequest(table_id="pace-tcp", seat=seat, decision=cpb.CASINO_DECISION_PLAY)
            answer = ana.after(DECISION, ana.stub.Decide, decide)
            view = answer.round if answer is not None else view
        settled += view is not None and view.phase == "SETTLED"
    assert not ana.refused, f"{sum(ana.refused.values())} refusals in {ana.calls} calls: {dict(ana.refused)}"
    assert settled == ROUNDS and ana.calls > 45 * ROUNDS


def test_a_texas_holdem_bonus_player_alone_at_a_touch_table_is_never_refused(casino: Limited) -> None:
    ben = Person(casino, "pace-ben", 2)
    ben.after((0.5, 1.0), ben.stub.JoinCasinoTable, cpb.JoinCasinoTableRequest(table_id="pace-thb", seat=1))
    settled = 0
    for _ in range(ROUNDS):
        ben.rates.now += ben.rng.uniform(*BETWEEN_ROUNDS)
        ben.tap_chips("pace-thb", 1, "ANTE", 4)
        ben.tap_chips("pace-thb", 1, "BONUS", 2)
        dealt = ben.after(CHIP_TAP, ben.stub.DealRound, cpb.DealRoundRequest(table_id="pace-thb"))
        view = dealt.round if dealt is not None else None
        while view is not None and view.phase not in ("SETTLED", "VOIDED"):
            legal = {d.decision for s in view.seats if s.own for d in s.legal_decisions}
            choice = next(
                (d for d in (cpb.CASINO_DECISION_FLOP, cpb.CASINO_DECISION_CHECK) if d in legal), None
            )
            assert choice is not None, view
            decide = cpb.DecideRequest(table_id="pace-thb", seat=1, decision=choice)
            answer = ben.after(DECISION, ben.stub.Decide, decide)
            view = answer.round if answer is not None else None
        settled += view is not None and view.phase == "SETTLED"
    assert not ben.refused, f"{sum(ben.refused.values())} refusals in {ben.calls} calls: {dict(ben.refused)}"
    assert settled == ROUNDS
