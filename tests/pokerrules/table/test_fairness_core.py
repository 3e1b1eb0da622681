"""The table core's part of deals nobody can choose (pokerrules.table.fairness, docs/fairness.md section 11):
seeds only for the hand whose shoe is committed, and only from seated players; a hand dealt with client
seeds is dealt from the committed shoe with every seated player's own seed; its seed goes, once revealed,
to the players dealt into it by name; all of it survives the log, the codec and the snapshot."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pokerrules.multiplayer import Action
from pokerrules.multiplayer.events import HandStarted
from pokerrules.table import (
    Mode,
    TableConfig,
    TableError,
    TableState,
    Transition,
    decode,
    encode,
    handle,
    sit,
)
from pokerrules.table import commands as c
from pokerrules.table.events import ClientSeedGiven, ShoeCommitted, ShoeRevealed
from pokerrules.table.fairness import Contribution, from_json, to_json

CONFIG = TableConfig(Mode.HOLDEM, 50, 100, 2_000, 10_000, seats=6)


def seated(*players: str) -> TableState:
    state = TableState.create(CONFIG)
    for number, player in enumerate(players, start=1):
        state = sit(state, player, number, 5_000).state
    return state


def deck() -> list[int]:
    cards = list(range(52))
    random.Random(3).shuffle(cards)
    return cards[:20]


def committed(state: TableState, shoe: str = "shoe-1") -> TableState:
    return handle(state, c.CommitShoe(state.hand_number + 1, shoe, "c" * 64), 10).state


def seeds_for(state: TableState, fill: str = "table") -> tuple[tuple[int, str, str, bool, int], ...]:
    """Every seated player's contribution as the service builds it: their own, else the table's."""
    assert state.commitment is not None
    out = []
    for number, seat in sorted(state.seats.items()):
        own = state.commitment.seeds.get(seat.player)
        given = Contribution(
            number, seat.player, own.seed if own else fill, own is not None, own.given_ms if own else 0
        )
        out.append(given.as_tuple())
    return tuple(out)


def deal(state: TableState, now: int = 100, revealed: tuple[int, str, str] = (0, "", "")) -> Transition:
    assert state.commitment is not None
    command = c.StartHand(
        state.commitment.shoe_id,
        20,
        None,
        seeds_for(state),
        f"shoe-{state.hand_number + 2}",
        "n" * 64,
        *revealed,
    )
    return handle(state, command, now, deck=deck())


def fold_out(t: Transition) -> Transition:
    while t.state.hand_in_progress:
        hand = t.state.hand
        assert hand is not None
        legal = hand.legal_actions()
        assert legal is not None
        t = handle(t.state, c.Act(t.state.seats[legal.seat].player, Action.fold()), 200)
    return t


def test_a_seed_is_taken_for_the_committed_hand_from_a_seated_player_only() -> None:
    state = seated("ana", "bob")
    with pytest.raises(TableError) as early:  # nothing committed yet
        handle(state, c.GiveSeed("ana", 1, "s"), 1)
    assert early.value.reason == "SEED_HAND_NOT_OPEN" and early.value.details["open_hand"] == "0"
    state = committed(state)
    t = handle(state, c.GiveSeed("ana", 1, "first"), 20)
    assert t.events == [ClientSeedGiven(1, 1, "first")] and t.events[0].private_to == 1
    t = handle(t.state, c.GiveSeed("ana", 1, "second"), 30)  # the last one counts
    assert t.state.commitment is not None and t.state.commitment.seeds["ana"].seed == "second"
    with pytest.raises(TableError) as other_hand:
        handle(t.state, c.GiveSeed("bob", 2, "s"), 40)
    assert other_hand.value.reason == "SEED_HAND_NOT_OPEN"
    with pytest.raises(TableError) as stranger:
        handle(t.state, c.GiveSeed("eve", 1, "s"), 40)
    assert stranger.value.reason == "NOT_SEATED"


def test_a_hand_is_dealt_from_its_commitment_with_every_players_own_seed() -> None:
    state = committed(seated("ana", "bob"))
    state = handle(state, c.GiveSeed("ana", 1, "ana-1"), 20).state
    forged = c.StartHand("another-shoe", 20, None, seeds_for(state), "shoe-2", "n" * 64)
    with pytest.raises(TableError):  # not the committed shoe
        handle(state, forged, 100, deck=deck())
    left_out = c.StartHand("shoe-1", 20, None, tuple(s for s in seeds_for(state) if s[1] != "ana"))
    with pytest.raises(TableError):  # ana's own seed is not in it
        handle(state, left_out, 100, deck=deck())
    t = deal(state)
    kinds = [type(e) for e in t.events]
    assert kinds.index(HandStarted) < kinds.index(ShoeCommitted)  # the hand's events first, then the new
    assert t.state.commitment is not None and t.state.commitment.hand == 2  # the next hand's, from now
    assert t.state.commitment.seeds == {}
    assert t.state.dealt_shoe == "shoe-1"


def test_the_seed_goes_to_the_hands_players_by_name_once_revealed() -> None:
    t = fold_out(deal(committed(seated("ana", "bob", "cy"))))
    assert t.state.unrevealed is not None and t.state.unrevealed.players == ("ana", "bob", "cy")
    state = handle(t.state, c.Leave("cy"), 300).state  # cy goes; dee takes the seat
    state = sit(state, "dee", 3, 5_000).state
    state = handle(state, c.RecordReveal(1, "other-shoe", "ab" * 32), 400).state  # not that hand's: nothing
    assert state.unrevealed is not None
    revealed = handle(state, c.RecordReveal(1, "shoe-1", "ab" * 32), 500)
    assert [e.player for e in revealed.events if isinstance(e, ShoeRevealed)] == ["ana", "bob", "cy"]
    for event in revealed.events:  # seat privacy does not apply: the service sends it to `player`
        assert event.private_to is None
    assert revealed.state.unrevealed is None
    assert handle(revealed.state, c.RecordReveal(1, "shoe-1", "ab" * 32), 600).events == []  # once


def test_a_table_closed_after_its_last_hand_still_reveals_that_hand() -> None:
    """No deal follows a closed table's last hand: the clock's reveal is all its players get (it was
    refused TABLE_CLOSED, and retried by the service's clock every second, for ever)."""
    t = fold_out(deal(committed(seated("ana", "bob"))))
    closed = handle(t.state, c.CloseTable(), 300).state
    assert closed.closed and closed.unrevealed is not None
    revealed = handle(closed, c.RecordReveal(1, "shoe-1", "ab" * 32), 1_500)
    assert [e.player for e in revealed.events if isinstance(e, ShoeRevealed)] == ["ana", "bob"]
    assert revealed.state.closed and revealed.state.unrevealed is None


def test_the_next_deal_reveals_the_last_hand_and_a_lost_seed_is_dropped() -> None:
    t = fold_out(deal(committed(seated("ana", "bob"))))
    nxt = deal(t.state, 300, (1, "shoe-1", "cd" * 32))
    assert [(e.player, e.hand) for e in nxt.events if isinstance(e, ShoeRevealed)] == [("ana", 1), ("bob", 1)]
    t2 = fold_out(nxt)
    assert t2.state.unrevealed is not None and t2.state.unrevealed.hand == 2
    lost = deal(t2.state, 500, (2, "shoe-2", ""))  # the dealer no longer had it: nobody gets a seed
    assert not [e for e in lost.events if isinstance(e, ShoeRevealed)]
    assert lost.state.unrevealed is None


names = st.text(min_size=1, max_size=8)
fairness_commands = st.one_of(
    st.builds(c.GiveSeed, names, st.integers(0, 10**6), names),
    st.builds(c.CommitShoe, st.integers(0, 10**6), names, names),
    st.builds(c.RecordReveal, st.integers(0, 10**6), names, names),
    st.builds(
        c.StartHand,
        names,
        st.integers(1, 52),
        st.none() | st.integers(0, 2),
        st.lists(
            st.tuples(st.integers(1, 10), names, names, st.booleans(), st.integers(0, 10**12)), max_size=4
        ).map(tuple),
        names,
        names,
        st.integers(0, 10**6),
        names,
        names,
    ),
)


@given(fairness_commands)
def test_the_log_reads_back_every_fairness_command(command: c.Command) -> None:
    assert decode(*encode(command)) == command


def test_the_fairness_state_reads_back_from_its_json() -> None:
    t = fold_out(deal(committed(seated("ana", "bob"))))
    state = handle(t.state, c.GiveSeed("bob", 2, "bob-2"), 250).state
    assert from_json(to_json(state.commitment, state.unrevealed, state.dealt_shoe)) == (
        state.commitment,
        state.unrevealed,
        state.dealt_shoe,
    )
    assert from_json({}) == (None, None, "")  # a snapshot written before client seeds
