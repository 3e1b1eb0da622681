"""Pot-Limit Omaha and Naiko tables over gRPC: four hole cards and the pot-size maximum (NK-3.7, NK-EX-1)
in PLO, PHH variant PO; a Naiko table (No-Limit Hold'em with powers, NK-A1) deals and plays with bots,
who use their powers (NK-7.6); `felt up`'s default tables include a public Naiko table with bots."""

from __future__ import annotations

import tomllib

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from services.table.poker.tables import default_tables
from tests.table.poker.conftest import Stack, Watcher, heads_up, reason, rid, wait_until


def test_plo_deals_four_cards_and_caps_raises_at_the_pot_nk_3_7(stack: Stack) -> None:
    view = heads_up(stack, "plo")
    mine = next(p for p in view.players if p.seat.seat == view.your_seat)
    assert len(mine.hole_cards) == 4
    legal = view.legal
    # Blinds 50/100, the button to act: call 50, pot after the call 200, raise to 100 + 200 = 300.
    assert (legal.call_amount, legal.min_to, legal.max_to) == (50, 200, 300)
    assert legal.all_in_to > legal.max_to and not legal.can_all_in  # the stack is above the pot-size raise
    with pytest.raises(grpc.RpcError) as over:
        stack.act("ana", "plo", pb.ACTION_KIND_RAISE, 301)
    assert reason(over.value) == "ABOVE_POT_LIMIT"
    with pytest.raises(grpc.RpcError) as over:
        stack.act("ana", "plo", pb.ACTION_KIND_ALL_IN)
    assert reason(over.value) == "ABOVE_POT_LIMIT"
    stack.act("ana", "plo", pb.ACTION_KIND_RAISE, 300)
    stack.act("bob", "plo", pb.ACTION_KIND_FOLD)
    wait_until(lambda: stack.view("ana", "plo").hand_number == 2)
    doc = tomllib.loads(
        stack.tables("ana").GetHandHistory(pb.GetHandHistoryRequest(table_id="plo", hand_number=1)).phh
    )
    assert doc["variant"] == "PO"
    assert sorted(doc["finishing_stacks"]) == [4_900, 5_100]


def test_a_naiko_table_plays_with_bots(stack: Stack) -> None:
    settings = pb.TableSettings(
        game=pb.GAME_NAIKO,
        small_blind=10,
        big_blind=20,
        min_buy_in=400,
        max_buy_in=2_000,
        seats=4,
        bots_allowed=True,
        bot_seats=3,
    )
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=settings)
    )
    table_id = made.table.table_id
    rail = Watcher(stack.tables("eve"), table_id)
    try:
        wait_until(lambda: stack.view("eve", table_id).hand_number >= 3, timeout=30)
        view = stack.view("eve", table_id)
        assert view.table.settings.game == pb.GAME_NAIKO
        assert all(s.is_bot for s in view.table.seats)
        wait_until(lambda: "power_used" in rail.kinds(), timeout=30)  # the bots use powers
        assert "carrusel_drawn" in rail.kinds() and "destellos_granted" in rail.kinds()
    finally:
        rail.close()


def test_felt_ups_default_tables_include_a_public_naiko_table_with_bots() -> None:
    naiko = [t for t in default_tables() if t.settings.game == pb.GAME_NAIKO]
    assert len(naiko) == 1 and naiko[0].settings.bots_allowed and naiko[0].settings.bot_seats == 5
    assert not naiko[0].settings.private and naiko[0].settings.shield_window_seconds == 8
