"""A whole round through CasinoService with the real wallet and dealer: holds when bets are placed, one
settlement per round, cards as text, the player's own cards only."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid


def own_seat(view: pb.RoundView) -> pb.SeatView:
    return next(s for s in view.seats if s.own)


# The first ListGames computes the exact side-bet and TCP RTPs (~1.6 s of CPU on an idle machine; over the
# client's default 5 s deadline when the machine is loaded): the tests give it time.
LIST_GAMES_SECONDS = 60.0


def test_list_games_has_rules_paytables_limits_and_rtp(stack: Stack) -> None:
    games = stack.casino("alice").ListGames(pb.ListGamesRequest(), timeout=LIST_GAMES_SECONDS).games
    assert {g.game for g in games} == {
        pb.CASINO_GAME_TEXAS_HOLDEM_BONUS,
        pb.CASINO_GAME_CASINO_HOLDEM,
        pb.CASINO_GAME_THREE_CARD_POKER,
    }
    thb = next(g for g in games if g.game == pb.CASINO_GAME_TEXAS_HOLDEM_BONUS)
    bonus = next(b for b in thb.bets if b.kind == "BONUS")
    assert bonus.rtp_known and 80 < bonus.rtp_percent < 100
    assert any(line.line and "1000" in line.pays for p in thb.paytables for line in p.lines)  # THB-6.2 AA/AA
    assert any(d.automatic_on_timeout and d.decision == pb.CASINO_DECISION_FOLD for d in thb.decisions)
    tcp = next(g for g in games if g.game == pb.CASINO_GAME_THREE_CARD_POKER)
    assert {r.name for r in tcp.readings} >= {"ante_rule", "deck_sets"}
    # In the client's terms, each rule cited by its ID.
    ch = next(g for g in games if g.game == pb.CASINO_GAME_CASINO_HOLDEM)
    qualifying = next(r for r in ch.readings if r.name == "dealer_qualifying_pair")
    assert (qualifying.value, qualifying.rule) == ("4", "CH-5.2") and "pair of 4s" in qualifying.meaning
    assert [g.rule_prefix for g in games] == ["THB", "CH", "TCP"]
    assert all(d.rule.startswith("THB-") for d in thb.decisions)
    assert next(p for p in thb.paytables if "BONUS" in p.bets).rule == "THB-6.2"
    assert {s.line for s in ch.settlement_lines} >= {"PLAYER_WINS", "DEALER_DOES_NOT_QUALIFY", "FOLDED"}


def test_list_games_serves_the_holdem_main_games_exact_rtp(stack: Stack) -> None:
    """THB-4 / CH-5 under optimal strategy: the figures `felt math` wrote (known_rtp.json) for the default
    configuration the service's tables use, on the Ante (the main game's placeable bet; per Ante)."""
    from pokerrules.casino import ChConfig, ThbConfig
    from pokerrules.casino.gamemath.known_rtp import main_game_rtp

    listed = stack.casino("alice").ListGames(pb.ListGamesRequest(), timeout=LIST_GAMES_SECONDS).games
    games = {g.game: g for g in listed}
    for game, config, kinds in (
        (pb.CASINO_GAME_TEXAS_HOLDEM_BONUS, ThbConfig(), {"ANTE"}),
        (pb.CASINO_GAME_CASINO_HOLDEM, ChConfig(), {"ANTE"}),
    ):
        rtp = main_game_rtp(config)
        assert rtp is not None
        served = {b.kind: b for b in games[game].bets if b.kind in kinds}
        assert set(served) == kinds
        for bet in served.values():
            assert bet.rtp_known and bet.rtp_percent == pytest.approx(float(rtp * 100), abs=1e-9)


def test_list_tables_and_join(stack: Stack) -> None:
    stack.fund("alice", 100)
    stack.fund("bob", 100)
    casino = stack.casino("alice")
    tables = casino.ListCasinoTables(pb.ListCasinoTablesRequest(game=pb.CASINO_GAME_CASINO_HOLDEM)).tables
    assert {t.table_id for t in tables} == {"ch-touch", "ch-live"}
    joined = casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-live"))
    assert joined.seat == 1 and joined.table.seats[0].player_id == "alice"
    with pytest.raises(grpc.RpcError) as error:
        stack.casino("bob").JoinCasinoTable(
            pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-live", seat=1)
        )
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_casino_holdem_round_moves_money_once(stack: Stack) -> None:
    """CH-2.4: Call is 2 x Ante; every bet is a hold until the round settles in one batch."""
    stack.fund("alice", 1000)
    house_before = stack.house_balance()
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    assert own_seat(stack.round("alice", "ch-touch")).status == "WAITING"
    view = casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10, aa_bonus=5))
    ).round
    assert {b.kind: b.amount for b in own_seat(view).bets} == {"ANTE": 10, "AA_BONUS": 5}
    assert own_seat(view).status == "BET_PLACED"  # bets placed, not yet dealt: not SITTING_OUT
    account = stack.account("alice")
    assert (account.balance, account.available, account.pending) == (1000, 985, 15)

    view = casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch")).round
    assert view.phase == "FLOP" and len(view.board) == 3 and len(own_seat(view).cards) == 2
    assert not view.dealer_cards and view.dealer_cards_dealt == 2  # the dealer's cards stay hidden
    assert all(len(c) == 2 for c in own_seat(view).cards)  # cards as text
    assert {d.decision: d.stake for d in own_seat(view).legal_decisions} == {
        pb.CASINO_DECISION_FOLD: 0,
        pb.CASINO_DECISION_CALL: 20,
    }
    view = casino.Decide(
        pb.DecideRequest(
            request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_CALL, phase="FLOP"
        )
    ).round
    assert view.phase == "SETTLED" and len(view.dealer_cards) == 2 and len(view.board) == 5
    results = own_seat(view).results
    net = sum(r.won - r.lost for r in results)
    # Every line is one ListGames serves for this game (a paytable row or a settlement line).
    ch = next(
        g
        for g in casino.ListGames(pb.ListGamesRequest(), timeout=LIST_GAMES_SECONDS).games
        if g.game == pb.CASINO_GAME_CASINO_HOLDEM
    )
    lines = {line.line for p in ch.paytables for line in p.lines} | {s.line for s in ch.settlement_lines}
    assert {r.line for r in results} <= lines
    stack.wait_for(lambda: stack.account("alice").pending == 0)
    account = stack.account("alice")
    assert account.balance == 1000 + net and account.available == account.balance
    assert stack.house_balance() == house_before - net
    assert stack.ledger_ok()


def test_three_card_poker_several_hands_and_deck_sets(stack: Stack) -> None:
    """TCP-6.2: one player, several hands; TCP-1.1: the two deck sets alternate round by round."""
    stack.fund("carol", 1000)
    casino = stack.casino("carol")
    for seat in (1, 2):
        casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="tcp-touch", seat=seat))
        casino.PlaceBets(
            pb.PlaceBetsRequest(
                request_id=rid(), table_id="tcp-touch", seat=seat, bets=bets(ante=5, pair_plus=5)
            )
        )
    view = casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="tcp-touch")).round
    assert view.phase == "DECISION" and view.deck_set == 0
    for seat in (1, 2):
        view = casino.Decide(
            pb.DecideRequest(
                request_id=rid(), table_id="tcp-touch", seat=seat, decision=pb.CASINO_DECISION_PLAY
            )
        ).round
    assert view.phase == "SETTLED"
    casino.Rebet(pb.RebetRequest(request_id=rid(), table_id="tcp-touch", seat=1))
    view = casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="tcp-touch")).round
    assert view.round == 2 and view.deck_set == 1
    assert stack.ledger_ok()


def test_leaving_during_a_hand_frees_the_seat_after_it(stack: Stack) -> None:
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=5)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    left = casino.LeaveCasinoTable(pb.LeaveCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    assert list(left.seats_left) == [] and list(left.seats_leaving_after_round) == [1]
    casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    )
    table = stack.casino("bob").ListCasinoTables(pb.ListCasinoTablesRequest()).tables
    assert next(t for t in table if t.table_id == "ch-touch").seats[0].player_id == ""
    assert stack.account("alice").balance == 95


def test_leaving_while_betting_returns_the_bets(stack: Stack) -> None:
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live", seat=4))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=4, bets=bets(ante=10, bonus=5))
    )
    assert stack.account("alice").pending == 15
    left = casino.LeaveCasinoTable(pb.LeaveCasinoTableRequest(request_id=rid(), table_id="thb-live", seat=4))
    assert list(left.seats_left) == [4]
    account = stack.account("alice")
    assert (account.balance, account.pending) == (100, 0)
    assert not stack.round("alice", "thb-live").seats


def test_clear_bets_releases_the_holds(stack: Stack) -> None:
    """CH-8 Clear Bets."""
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10, aa_bonus=5))
    )
    view = casino.ClearBets(pb.ClearBetsRequest(request_id=rid(), table_id="ch-touch", seat=1)).round
    assert not own_seat(view).bets and stack.account("alice").pending == 0


def test_casino_holdem_auto_adjusts_a_bet_over_the_maximum(stack: Stack) -> None:
    """CH-2.5 / CH-A2: an Ante over the maximum (100) becomes the maximum; only that much is held."""
    stack.fund("alice", 500)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    view = casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=150))
    ).round
    assert {b.kind: b.amount for b in own_seat(view).bets} == {"ANTE": 100}
    assert stack.account("alice").pending == 100


def test_round_metrics(stack: Stack) -> None:
    import urllib.request

    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="tcp-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="tcp-touch", seat=1, bets=bets(ante=5)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="tcp-touch"))
    casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="tcp-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    )
    text = urllib.request.urlopen(stack.table.metrics_url, timeout=5).read().decode()
    assert 'poker_casino_rounds_total{end="settled",game="THREE_CARD_POKER"}' in text
    assert "alice" not in text and "tcp-touch" not in text  # no player or table id as a label
