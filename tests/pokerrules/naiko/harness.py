"""A Naiko hand with chosen cards, Destellos and Carrusel, driven on a virtual clock (integer ms)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from pokerrules.cards import parse_cards
from pokerrules.multiplayer import Action, GameConfig, HandState, IllegalAction, start_hand
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.naiko import (
    CARRUSELS,
    Carrusel,
    NaikoSettings,
    NaikoTable,
    Outcome,
    Power,
    act,
    deal,
    expire,
    respond_to_anchor,
    use_power,
)

PEEK = Power.LIRIKAN_DIAM_DIAM
SWAP = Power.TUKAR_LENGAN_BAJU
ANCHOR = Power.JANGKAR_PENDEK
SHIELD = Power.PERISAI_SEGEL
WITH_SHIELD = CARRUSELS[1]  # Lirikan Diam-diam, Jangkar Pendek, Perisai Segel
NO_SHIELD = CARRUSELS[0]  # Lirikan Diam-diam, Tukar Lengan Baju, Jangkar Pendek
SWAP_SHIELD = CARRUSELS[2]  # Tukar Lengan Baju, Jangkar Pendek, Perisai Segel


def hand_state_snapshot(s: HandState) -> tuple[object, ...]:
    return (
        s.version,
        tuple(s.deck),
        s.deck_pos,
        tuple(s.holes),
        tuple(s.pot_capped),
        tuple(s.stacks),
        tuple(s.bets),
        tuple(s.board),
        s.actor,
        s.street,
    )


class Naiko:
    """`n = Naiko({1: 1000, 2: 1000}, button=1, destellos={1: 2})`; `n.power(1, PEEK)`; `n.act(1, call)`.

    `destellos` are the balances in the hand right after the deal (the grant is made by `deal` from
    balances one lower, so NK-5.1 runs as in a real hand); seats not named get the plain grant (1)."""

    def __init__(
        self,
        stacks: Mapping[int, int],
        button: int,
        *,
        carrusel: Carrusel = WITH_SHIELD,
        destellos: Mapping[int, int] | None = None,
        holes: Mapping[int, str] | None = None,
        board: str = "",
        config: GameConfig | None = None,
        window_ms: int = 8_000,
    ) -> None:
        config = config or GameConfig.nlhe(50, 100)
        seats = sorted(stacks)
        holes_cards = {s: parse_cards(c) for s, c in (holes or {}).items()}
        deck = deck_dealing(seats, button, holes_cards, parse_cards(board), config.variant.hole_cards)
        rank = ranker_for(config.variant)
        start = start_hand(config, stacks, button, deck, rank)
        wanted = dict(destellos or {})
        before = {s: max(0, wanted.get(s, 1) - 1) for s in seats}
        naiko = NaikoTable(NaikoSettings(window_ms), before)
        out = deal(naiko, start.state, carrusel)
        assert out.naiko is not None and out.naiko.hand is not None
        zero = {s for s, n in wanted.items() if n == 0}
        if zero:  # a balance of 0 in the hand: spent before (as if), granted 0
            balances = {s: (0 if s in zero else n) for s, n in out.naiko.destellos.items()}
            hand = out.naiko.hand.replace(granted={s: balances[s] for s in seats})
            out = Outcome(out.naiko.replace(destellos=balances, hand=hand), out.hand, out.events)
        self.naiko: NaikoTable = out.naiko  # type: ignore[assignment]
        self.hand: HandState = out.hand
        self.events: list[Event] = list(start.events) + out.events
        self.now = 0
        self.total = self.hand.total_chips()

    # -- commands ----------------------------------------------------------------------------------

    def _take(self, out: Outcome) -> list[Event]:
        assert out.naiko is not None
        self.naiko, self.hand = out.naiko, out.hand
        self.events.extend(out.events)
        assert self.hand.total_chips() == self.total
        return out.events

    def power(
        self, seat: int, power: Power, target: int | None = None, card: str | None = None
    ) -> list[Event]:
        code = parse_cards(card)[0] if card else None
        return self._take(use_power(self.naiko, self.hand, seat, power, self.now, target, code))

    def respond(self, seat: int, shield: bool) -> list[Event]:
        return self._take(respond_to_anchor(self.naiko, self.hand, seat, shield, self.now))

    def act(self, seat: int, action: Action) -> list[Event]:
        return self._take(act(self.naiko, self.hand, seat, action, self.now))

    def play(self, *moves: tuple[int, Action]) -> None:
        for seat, action in moves:
            self.act(seat, action)

    def tick(self, ms: int) -> list[Event]:
        self.now += ms
        return self._take(expire(self.naiko, self.hand, self.now))

    def refused(
        self,
        seat: int,
        power: Power,
        target: int | None = None,
        card: str | None = None,
        *,
        shield: bool | None = None,
    ) -> str:
        """The refusal's reason; checks the refused command changed nothing and cost nothing (NK-5.10)."""
        naiko, hand, before = self.naiko, self.hand, hand_state_snapshot(self.hand)
        with pytest.raises(IllegalAction) as info:
            if shield is not None:
                self.respond(seat, shield)
            else:
                self.power(seat, power, target, card)
        assert self.naiko is naiko and self.hand is hand and hand_state_snapshot(hand) == before
        return info.value.reason

    def refused_action(self, seat: int, action: Action) -> str:
        naiko, hand, before = self.naiko, self.hand, hand_state_snapshot(self.hand)
        with pytest.raises(IllegalAction) as info:
            self.act(seat, action)
        assert self.naiko is naiko and self.hand is hand and hand_state_snapshot(hand) == before
        return info.value.reason

    # -- queries -----------------------------------------------------------------------------------

    def balance(self, seat: int) -> int:
        return self.naiko.balance(seat)

    def of(self, kind: type) -> list:  # type: ignore[type-arg]
        return [ev for ev in self.events if isinstance(ev, kind)]

    def max_to(self) -> int:
        legal = self.hand.legal_actions()
        assert legal is not None
        return legal.max_to
