"""Private information at a table (MP-1.2, NK-4.4, NK-7.6): scanning every event each viewer may receive
and every view they get, over many bot hands, for cards they must not know."""

from __future__ import annotations

import random

from pokerrules.bots import BotProfile, bot_move
from pokerrules.multiplayer import Action, Variant
from pokerrules.multiplayer.events import CardsShown, Event, HoleCardsDealt, visible_to
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.table import Mode, TableConfig, TableState, act, handle, sit, start_next_hand, table_view
from pokerrules.table import commands as c

BOT = BotProfile(pacing=False, samples=4, iterations=4)


def test_mp_1_2_viewers_receive_only_their_own_hole_cards_until_the_showdown() -> None:
    """MP-1.2: a player sees only their own hole cards; NK-4.4: the cards of players still in at showdown
    are shown to everyone; observers see no hole cards before that. Table events carry no cards."""
    state = TableState.create(TableConfig(Mode.HOLDEM, 5, 10, 200, 1_000, seats=5, bots_allowed=True))
    for k in range(1, 6):
        state = sit(state, f"bot-{k}", k, 1_000, is_bot=True).state
    rng = random.Random(8)
    viewers: list[int | None] = [None, 1, 2, 3, 4, 5]
    showdowns = 0
    for number in range(30):
        if not state.can_start_hand():
            break
        deck = list(range(52))
        rng.shuffle(deck)
        t = start_next_hand(state, deck, ranker_for(Variant.HOLDEM), 0)
        events: list[Event] = list(t.events)
        state = t.state
        assert state.hand is not None
        holes = {s: set(state.hand.hole_cards(s)) for s in state.hand.seats}
        while state.hand is not None:
            for viewer in viewers:  # the view each viewer may ask for mid-hand
                for seat in table_view(state, None if viewer is None else f"bot-{viewer}").hand.seats:  # type: ignore[union-attr]
                    assert seat.hole_cards is None or seat.seat == viewer
            move = bot_move(state, number, BOT)
            assert move is not None
            t = act(state, move.player, move.decision.action, 0)
            events.extend(t.events)
            state = t.state
        shown = {ev.seat for ev in events if isinstance(ev, CardsShown)}
        showdowns += bool(shown)
        undealt = set(deck) - set().union(*holes.values())
        for viewer in viewers:
            allowed = (holes.get(viewer, set()) if viewer is not None else set()) | {
                c for s in shown for c in holes[s]
            }
            for ev in events:
                if not visible_to(ev, viewer):
                    continue
                if isinstance(ev, HoleCardsDealt):
                    assert ev.seat == viewer
                cards = set(getattr(ev, "cards", ()))
                hidden = set().union(*holes.values()) - allowed
                assert not cards & hidden, (viewer, ev)
                if not isinstance(ev, CardsShown | HoleCardsDealt):
                    board = set(state.last_hand.board) if state.last_hand else set()  # type: ignore[union-attr]
                    assert cards <= board and not (cards & undealt - board)
    assert showdowns >= 3


def test_a_seats_new_occupant_never_sees_the_last_hands_cards_of_the_previous_one() -> None:
    """MP-1.2: between hands the view shows the last hand; a player who sat down after it is not the
    player who held that seat's cards (nor, at a Naiko table, its peeks)."""
    state = TableState.create(TableConfig(Mode.HOLDEM, 5, 10, 200, 1_000))
    for number, player in ((1, "ana"), (2, "bob")):
        state = handle(state, c.Sit(player, number, 500), 0).state
    state = handle(state, c.StartHand("shoe", 52), 0, deck=list(range(52))).state
    state = handle(state, c.Act("ana", Action.fold()), 0).state
    ana_view = table_view(state, "ana").hand
    assert ana_view is not None and ana_view.seats[0].hole_cards is not None  # her own, after the hand
    state = handle(state, c.Leave("ana"), 0).state
    state = handle(state, c.Sit("carl", 1, 500), 0).state
    carl_view = table_view(state, "carl").hand
    assert carl_view is not None and all(s.hole_cards is None for s in carl_view.seats)
