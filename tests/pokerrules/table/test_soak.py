"""Several tables in virtual time: bots (with their think time) and scripted players play hundreds of hands
through the pure table core; a player disconnects mid-hand and reconnects, others time out, busted players
re-buy. Chips are conserved at every step and every decision comes from the owner of the seat. At the
Naiko table bots also use powers and answer the windows aimed at them (NK-7.6), and every balance of
Destellos stays within 0..3 (NK-5.1)."""

from __future__ import annotations

import random

from pokerrules.bots import BotProfile, bot_move, bot_power_move
from pokerrules.multiplayer import Variant
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.naiko.events import PowerUsed
from pokerrules.table import (
    Mode,
    TableConfig,
    TableState,
    act,
    apply_due,
    disconnect,
    handle,
    legal_actions,
    next_wakeup,
    reconnect,
    sit,
    sit_in,
    start_next_hand,
    top_up,
)
from pokerrules.table.events import PlayerReconnected, TimedOut

BOT = BotProfile(samples=6, iterations=6)  # pacing on: think times advance the virtual clock


def run_table(mode: Mode, seed: int, hands: int) -> dict[str, int]:
    rng = random.Random(seed)
    rank = ranker_for(Variant.OMAHA if mode is Mode.OMAHA else Variant.HOLDEM)
    state = TableState.create(TableConfig(mode, 5, 10, 400, 2_000, seats=6, bots_allowed=True))
    humans = {"ana", "ben"}
    for k, player in enumerate(["ana", "ben", "bot-1", "bot-2", "bot-3", "bot-4"], start=1):
        state = sit(state, player, k, 1_000, is_bot=player.startswith("bot")).state
    now = 0
    stats = {"timeouts": 0, "reconnects": 0, "expired": 0, "hands": 0, "powers": 0}
    for number in range(hands):
        for seat in list(state.seats.values()):  # busted players re-buy between hands
            if seat.stack == 0:
                state = top_up(state, seat.player, 1_000).state
        deck = list(range(52))
        rng.shuffle(deck)
        carrusel = rng.randrange(3) if mode is Mode.NAIKO else None
        state = start_next_hand(state, deck, rank, now, carrusel).state
        stats["hands"] += 1
        drop_at = rng.randrange(4) if number % 10 == 3 else None  # ana drops mid-hand now and then
        steps = 0
        while state.hand is not None:
            while (power := bot_power_move(state, now)) is not None:  # Naiko: answers and powers first
                t = handle(state, power, now)
                stats["powers"] += sum(isinstance(ev, PowerUsed) for ev in t.events)
                state = t.state
            if state.naiko is not None:
                assert all(0 <= n <= 3 for n in state.naiko.destellos.values())
                assert set(state.naiko.destellos) == set(state.seats)
            hand = state.hand
            seat = hand.seat_to_act
            assert seat is not None
            player = state.seats[seat].player
            if steps == drop_at and 1 in state.seats and state.seats[1].connected:
                state = disconnect(state, "ana", now).state
            if player in humans and not state.seats[seat].connected:
                wake = next_wakeup(state)  # nobody answers: the clock runs (NK-7.3)
                assert wake is not None
                now = wake
                t = apply_due(state, now)
                stats["timeouts"] += sum(isinstance(ev, TimedOut) for ev in t.events)
                state = t.state
                ana = state.seats.get(1)
                if ana is not None and not ana.connected and now - (ana.disconnected_at or 0) < 40_000:
                    t = reconnect(state, "ana", now)  # back within the window (NK-7.4, NK-7.5)
                    stats["reconnects"] += any(isinstance(ev, PlayerReconnected) for ev in t.events)
                    state = t.state
            elif player in humans:
                now += rng.randrange(200, 3_000)
                legal = legal_actions(state)  # at a Naiko table: capped inside an anchor's window
                assert legal is not None
                state = act(state, player, random_legal_action(legal, rng), now).state
            else:
                move = bot_move(state, seed, BOT)
                assert move is not None and move.player == player
                now += move.decision.think_ms
                state = act(state, player, move.decision.action, now).state
            steps += 1
            assert state.chips_bought_in == state.chips_on_table() + state.chips_returned
        ana = state.seats.get(1)
        if ana is not None and not ana.connected:
            disconnected_at = ana.disconnected_at or 0
            if now < disconnected_at + 60_000:
                state = reconnect(state, "ana", now).state
                stats["reconnects"] += 1
            else:  # the window ran out: she is paid out and stands up (NK-7.4), then buys in again
                state = apply_due(state, now).state
                assert 1 not in state.seats
                stats["expired"] += 1
                state = sit(state, "ana", 1, 1_000).state
        for player in ("ana", "ben"):  # sat out after time-outs: sit back in
            n = state.find_seat(player)
            if n is not None and state.seats[n].sitting_out and state.seats[n].stack > 0:
                state = sit_in(state, player).state
        now += 5_000
    assert all(s.stack >= 0 for s in state.seats.values())
    return stats


def test_bots_and_players_play_hundreds_of_hands_across_tables_in_virtual_time() -> None:
    totals = {"timeouts": 0, "reconnects": 0, "expired": 0, "hands": 0, "powers": 0}
    for mode, seed in ((Mode.HOLDEM, 1), (Mode.OMAHA, 2), (Mode.NAIKO, 3)):
        for key, value in run_table(mode, seed, 120).items():
            totals[key] += value
    assert totals["hands"] == 360
    assert totals["timeouts"] >= 5 and totals["reconnects"] >= 5 and totals["expired"] >= 1
    assert totals["powers"] >= 50
