"""Four hands played through the engine with chosen cards, for the PokerStars golden files: No-Limit
Hold'em to a showdown, Pot-Limit Omaha won without one, all-ins with two side pots (one split), and a
Naiko hand with a swap, a peek and an anchor. Each is written as one player saw it."""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.cards import parse_cards
from pokerrules.multiplayer import Action, GameConfig, HandState
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.phh import HandRecord
from pokerrules.multiplayer.pokerstars import StarsHand, hand_id_of
from pokerrules.multiplayer.ranking import ranker_for

from tests.pokerrules.naiko.harness import ANCHOR, NO_SHIELD, PEEK, SWAP, Naiko

STARTED_MS = 1_796_400_000_000  # 2026/12/04 16:00:00 UTC


@dataclass(frozen=True)
class Played:
    """A finished hand: its record as the table service keeps it, who reads it, and its final state."""

    hand: StarsHand
    viewer: int
    state: HandState


def _start(
    config: GameConfig, stacks: dict[int, int], button: int, holes: dict[int, str], board: str
) -> tuple[HandState, list[Event]]:
    cards = {s: parse_cards(c) for s, c in holes.items()}
    deck = deck_dealing(list(stacks), button, cards, parse_cards(board), config.variant.hole_cards)
    return HandState.start(config, stacks, button, deck, ranker_for(config.variant))


def _play(state: HandState, events: list[Event], *moves: tuple[int, Action]) -> None:
    for seat, action in moves:
        events.extend(state.act(seat, action))


def _stars(
    config: GameConfig, events: list[Event], names: dict[int, str], table: str, number: int, seats: int
) -> StarsHand:
    record = HandRecord(config, events, names, number, table)
    return StarsHand(record, hand_id_of(table, number), STARTED_MS, table, seats)


def nlhe() -> Played:
    """Six-max, four dealt in: ana (seat 1, small blind) calls a raise and folds the flop; cid's set of
    nines beats dan's queens on the river after a raise. Ana's view: bob's 7s 2c are never shown."""
    config = GameConfig.nlhe(50, 100)
    stacks = {1: 10_000, 3: 10_000, 4: 10_000, 6: 10_000}
    holes = {1: "AhKd", 3: "9c9d", 4: "7s2c", 6: "QsJs"}
    state, events = _start(config, stacks, 6, holes, "Qh9s4c2hAd")
    call, check, fold = Action.call(), Action.check(), Action.fold()
    _play(state, events, (4, fold), (6, Action.raise_to(300)), (1, call), (3, call))  # pre-flop
    _play(state, events, (1, check), (3, Action.bet(600)), (6, call), (1, fold))  # flop Qh 9s 4c
    _play(state, events, (3, check), (6, check))  # turn 2h
    _play(state, events, (3, Action.bet(1_500)), (6, Action.raise_to(4_000)), (3, call))  # river Ad
    names = {1: "ana", 3: "cid", 4: "bob", 6: "dan"}
    return Played(_stars(config, events, names, "nlhe-50-100", 17, 6), 1, state)


def plo() -> Played:
    """Pot-Limit Omaha three-handed: ana (the button) raises the pot, the small blind calls and bets the
    pot on the flop, ana calls, and folds the river to a bet: no showdown, the bet comes back uncalled."""
    config = GameConfig.plo(50, 100)
    stacks = {2: 5_000, 5: 5_000, 7: 5_000}
    holes = {2: "AsAdKsQd", 5: "JhTh9c8c", 7: "7d6d5s4s"}
    state, events = _start(config, stacks, 2, holes, "Kh8h2c3d9d")
    _play(state, events, (2, Action.raise_to(350)), (5, Action.call()), (7, Action.fold()))
    _play(state, events, (5, Action.bet(800)), (2, Action.call()))  # flop: a pot-size bet
    _play(state, events, (5, Action.check()), (2, Action.check()))  # turn
    _play(state, events, (5, Action.bet(1_000)), (2, Action.fold()))  # river
    names = {2: "ana", 5: "bob", 7: "bot:3f9a"}
    return Played(_stars(config, events, names, "plo-50-100", 4, 9), 2, state)


def side_pots() -> Played:
    """Four all-in for different amounts: the short stack's aces take the main pot, bob's kings the first
    side pot, and the two queen-jack hands split the second. Bob's view."""
    config = GameConfig.nlhe(50, 100)
    stacks = {1: 800, 2: 2_500, 3: 6_000, 4: 6_000}
    holes = {1: "AsAh", 2: "KsKh", 3: "QcJc", 4: "QdJd"}
    state, events = _start(config, stacks, 4, holes, "2c7d9h3s8s")
    call = Action.call()
    _play(state, events, (3, Action.raise_to(300)), (4, call), (1, Action.all_in()), (2, Action.all_in()))
    _play(state, events, (3, call), (4, call))
    _play(state, events, (3, Action.bet(1_000)), (4, call))  # flop: seats 3 and 4 go on
    _play(state, events, (3, Action.all_in()), (4, call))  # turn
    names = {1: "ana", 2: "bob", 3: "cid", 4: "dan"}
    return Played(_stars(config, events, names, "nlhe-50-100", 18, 6), 2, state)


def naiko() -> Played:
    """The Naiko hand of tests/pokerrules/naiko/test_phh.py, as its swapper (seat 3, the button) saw it:
    swaps 2d for the As; seat 1 peeks the turn; seat 2 anchors seat 3, who cannot shield; checked down."""
    n = Naiko(
        {1: 1000, 2: 1000, 3: 1000},
        3,
        carrusel=NO_SHIELD,
        destellos={1: 2, 2: 2, 3: 2},
        holes={1: "KcKd", 2: "QcQd", 3: "7c2d"},
        board="AsJh8c4d3s",
    )
    n.power(3, SWAP, card="2d")
    n.play((3, Action.call()), (1, Action.call()), (2, Action.check()))
    n.power(1, PEEK)
    n.act(1, Action.check())
    n.power(2, ANCHOR, target=3)
    n.play((2, Action.check()), (3, Action.check()))
    for _ in range(2):
        n.play((1, Action.check()), (2, Action.check()), (3, Action.check()))
    names = {1: "ana", 2: "bob", 3: "cid"}
    return Played(_stars(GameConfig.nlhe(50, 100), n.events, names, "naiko-50-100", 5, 6), 3, n.hand)


HANDS = {"nlhe": nlhe, "plo": plo, "side-pots": side_pots, "naiko": naiko}
