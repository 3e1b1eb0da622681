"""A Naiko hand's history as the table service writes it (its events stored as TableEvents, read back by
`history.phh_of`) is the PHH the core's writer makes of the hand's own events, for the operator and for
each player: the powers as comments, a swapped hand with the cards it ended with, the peeked and received
cards in the full view and in their own player's only (NK-10.4, NK-11.4). The core's writer is the one
PokerKit 0.7.7 replays to the same finishing stacks (bench/engine/check_naiko_phh.py, and the service's
own histories: bench/engine/check_phh_dir.py)."""

from __future__ import annotations

import random

from pokerrules.bots import BotProfile, bot_move, bot_power_move
from pokerrules.multiplayer.events import Event, HandStarted, HoleCardSwapped
from pokerrules.multiplayer.phh import HandRecord, to_phh
from pokerrules.naiko.events import BoardCardPeeked, PowerUsed
from pokerrules.table import Mode, TableConfig, TableState, Transition, handle
from pokerrules.table import commands as c

from services.table.poker.cards import HandShoe
from services.table.poker.convert import event_protos
from services.table.poker.history import phh_of
from services.table.poker.store import HandRow, StoredEvent

BOT = BotProfile(pacing=False, samples=4, iterations=4)


class Table:
    """A table of the core whose events are also kept as the service stores them."""

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.seq = 0
        self.now = 0
        self.core: list[Event] = []
        self.stored: list[StoredEvent] = []

    def run(self, command: c.Command, cards: list[int] | None = None) -> Transition:
        t = handle(self.state, command, self.now, deck=cards)
        self.core.extend(t.events)
        shoe = HandShoe("shoe", "commitment", ())
        for event, private in event_protos(t.events, t.state, shoe, self.now):
            self.seq += 1
            body = event.SerializeToString()
            self.stored.append(StoredEvent(self.seq, t.state.hand_number, private, body, self.now))
        self.state = t.state
        return t


def played_hands(count: int, seed: int) -> list[tuple[TableState, list[Event], list[StoredEvent]]]:
    """Naiko hands of six bots through the table core: (the table before the hand, the core's events of
    the hand, the same events as the service stores them)."""
    rng = random.Random(seed)
    config = TableConfig(Mode.NAIKO, 50, 100, 2_000, 10_000, seats=6, bots_allowed=True)
    table = Table(TableState.create(config))
    for seat in range(1, 7):
        table.run(c.Sit(f"bot:{seat}", seat, 10_000, is_bot=True))
    hands = []
    for _ in range(count):
        for seat in list(table.state.seats.values()):
            if seat.stack == 0:
                table.run(c.TopUp(seat.player, 10_000))
        before = table.state
        table.core, table.stored = [], []
        deck = list(range(52))
        rng.shuffle(deck)
        table.run(c.StartHand("shoe", len(deck), rng.randrange(3)), deck)
        while table.state.hand_in_progress:
            table.now += 1_000
            power = bot_power_move(table.state, table.now)
            if power is not None:
                table.run(power)
                continue
            move = bot_move(table.state, seed, BOT)
            assert move is not None
            table.run(c.Act(move.player, move.decision.action))
        hands.append((before, table.core, table.stored))
    return hands


def test_the_services_naiko_histories_are_the_cores() -> None:
    powers = swaps = peeks = 0
    for before, core, stored in played_hands(60, 3):
        started = next(e for e in core if isinstance(e, HandStarted))
        seats = [s for s, _ in started.stacks]
        players = {s: before.seats[s].player for s in seats}
        number = before.hand_number + 1
        row = HandRow("naiko-t", number, 0, False, players)
        game = before.config.game
        for viewer in (None, *seats):
            expected = to_phh(HandRecord(game, core, players, number, "naiko-t"), viewer)
            assert phh_of(row, game, stored, viewer) == expected, viewer
        powers += sum(isinstance(e, PowerUsed) for e in core)
        swaps += sum(isinstance(e, HoleCardSwapped) for e in core)
        peeks += sum(isinstance(e, BoardCardPeeked) for e in core)
    assert powers > 30 and swaps > 5 and peeks > 3, (powers, swaps, peeks)
