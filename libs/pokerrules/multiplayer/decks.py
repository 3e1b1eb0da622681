"""Deck orders that deal chosen cards: for tests, replays of recorded hands and hand-history import.

The engine deals hole cards one at a time clockwise starting left of the button, then burn + 3 flop,
burn + turn, burn + river (MP-1.2, MP section 3); this builds the deck order that produces given cards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pokerrules.cards import DECK_SIZE


def deck_dealing(
    seats: Sequence[int],
    button: int,
    holes: Mapping[int, Sequence[int]],
    board: Sequence[int] = (),
    hole_cards: int = 2,
) -> list[int]:
    """A 52-card order dealing `holes[seat]` to each listed seat and `board` as the community cards.

    Seats or board cards not given get the lowest unused cards, so the result is deterministic.
    """
    ordered = sorted(seats)
    n = len(ordered)
    b = ordered.index(button)
    wanted = [c for cards in holes.values() for c in cards] + list(board)
    if len(set(wanted)) != len(wanted):
        raise ValueError("a card is requested twice")
    spare = iter(c for c in range(DECK_SIZE) if c not in set(wanted))
    deck: list[int] = []
    for round_ in range(hole_cards):
        for k in range(1, n + 1):
            seat = ordered[(b + k) % n]
            given = holes.get(seat)
            deck.append(given[round_] if given is not None else next(spare))
    board_cards = list(board) + [next(spare) for _ in range(5 - len(board))]
    for street_cards in (board_cards[0:3], board_cards[3:4], board_cards[4:5]):
        deck.append(next(spare))  # burn
        deck.extend(street_cards)
    deck.extend(spare)
    return deck
