"""The round log: every engine command survives the trip through its JSON entry unchanged (a replayed round
is the same round), and a round replayed from its entries equals the round played live."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from pokerrules.casino import (
    BetKind,
    ClearBets,
    Deal,
    Decide,
    Decision,
    Game,
    Phase,
    PlaceBets,
    Rebet,
    Timeout,
    VoidRound,
    default_config,
)
from pokerrules.casino.replay import play_round

from services.table.casino.book import RoundBook, command_body, command_of
from services.table.casino.tables import TableSpec

seats = st.integers(1, 7)
players = st.text("abcdefgh", min_size=1, max_size=8)
commands = st.one_of(
    st.builds(
        PlaceBets, seats, players, st.dictionaries(st.sampled_from(list(BetKind)), st.integers(1, 1000))
    ),
    st.builds(ClearBets, seats, players),
    st.builds(Rebet, seats, players),
    st.builds(
        Deal,
        st.permutations(range(52)).map(tuple),
        st.one_of(st.none(), st.integers(0, 1)),
        st.integers(0, 10**6),
    ),
    st.builds(
        Decide,
        seats,
        players,
        st.sampled_from(list(Decision)),
        st.one_of(st.none(), st.sampled_from(list(Phase))),
    ),
    st.builds(Timeout, st.one_of(st.none(), seats)),
    st.builds(VoidRound, st.text(max_size=20)),
)


@given(commands)
def test_command_round_trip(command: object) -> None:
    body = command_body(command)  # type: ignore[arg-type]
    assert command_of(json.loads(json.dumps(body))) == command


@given(st.permutations(range(52)), st.sampled_from(list(Game)))
def test_replayed_round_equals_the_live_round(deck: list[int], game: Game) -> None:
    config = default_config(game)
    live, _ = play_round(game, {1: {BetKind.ANTE: 5}, 2: {BetKind.ANTE: 7}}, deck, {}, config)
    spec = TableSpec("t", game, 7)
    book = RoundBook.empty(spec, config)
    body = {
        "round": 1,
        "players": {"1": "player-1", "2": "player-2"},
        "seats": {"1": "player-1", "2": "player-2"},
        "last_bets": {},
        "deal_start_seat": 1,
    }
    book.apply_entry("round", body)
    book.apply_entry("cmd", command_body(PlaceBets(1, "player-1", {BetKind.ANTE: 5})))
    book.apply_entry("cmd", command_body(PlaceBets(2, "player-2", {BetKind.ANTE: 7})))
    book.apply_entry("cmd", command_body(Deal(tuple(deck))))
    while book.state.phase not in (Phase.SETTLED, Phase.VOIDED):
        book.apply_entry("cmd", command_body(Timeout()))
    assert book.state.settlement == live.settlement
    assert book.state.board == live.board and book.state.dealer_cards == live.dealer_cards


def test_an_unhold_is_an_intent_until_released() -> None:
    """`unhold` takes the hold out of the round at once and leaves its Release to be driven (again after a
    crash) until `released` marks it done; a log written before `released` existed re-drives its unholds
    once (the wallet replays a Release it has seen)."""
    spec = TableSpec("t", Game.CASINO_HOLDEM, 1)
    book = RoundBook.empty(spec, default_config(Game.CASINO_HOLDEM))
    seat = {"1": "p"}
    book.apply_entry(
        "round", {"round": 1, "players": seat, "seats": seat, "last_bets": {}, "deal_start_seat": 1}
    )
    for hold_id, bet in (("h-ante", "ANTE"), ("h-aa", "AA_BONUS")):
        book.apply_entry("intent", {"seat": 1, "bet": bet, "hold_id": hold_id, "amount": 5})
        book.apply_entry("hold", {"hold_id": hold_id})
    book.apply_entry("intent", {"seat": 1, "bet": "ANTE", "hold_id": "h-never", "amount": 5})
    book.apply_entry("cmd", command_body(PlaceBets(1, "p", {BetKind.ANTE: 5, BetKind.AA_BONUS: 5})))
    book.apply_entry("unhold", {"hold_id": "h-ante"})
    book.apply_entry("unhold", {"hold_id": "h-aa"})
    book.apply_entry("unhold", {"hold_id": "h-never"})  # an intent never confirmed is given back too
    book.apply_entry("cmd", command_body(ClearBets(1, "p")))
    assert (book.holds, book.intents, book.releasing) == ([], {}, {"h-ante", "h-aa", "h-never"})
    assert book.state.seat(1).bets == {}
    book.apply_entry("released", {"hold_ids": ["h-ante", "h-never"]})
    assert book.releasing == {"h-aa"}
