"""The blinds of a table's next hand and the seats a newcomer may take (TDA: never dealt in between the
small blind and the button; balancing to the worst position), under the table's moving button
(MP-2.1 / MP-6.8, `next_button`)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st
from pokerrules.tournament.seating import (
    Roles,
    coming_roles,
    fair_open_seats,
    hands_until_big_blind,
    is_fair_seat,
    shuffled,
    worst_position,
)


def test_coming_roles_ring_and_heads_up() -> None:
    assert coming_roles([1, 3, 5, 8], 3) == Roles(5, 8, 1)  # the button moves to the next seat dealt in
    assert coming_roles([1, 3, 5, 8], None) == Roles(1, 3, 5)  # a new table starts at the lowest seat
    assert coming_roles([2, 7], 2) == Roles(7, 7, 2)  # NK-2.2 heads-up: the button posts the small blind


def test_a_newcomer_never_sits_between_the_small_blind_and_the_button() -> None:
    """Last hand: button 2, SB 4, BB 6 at seats 2, 4, 6, 8. Next hand without a newcomer: button 4, SB 6,
    BB 8. Seats 3 (the button's left: takes the button) and 5 (would be the small blind) are not fair; 7 is
    the next big blind (the worst position); 9 and 1 (under the gun) one hand later."""
    occupied = [2, 4, 6, 8]
    fair = fair_open_seats(occupied, 9, last_button=2, last_big_blind=6)
    assert 3 not in fair and 5 not in fair
    assert fair == [1, 7, 9]
    assert worst_position(occupied, fair, 2) == 7
    assert [hands_until_big_blind([*occupied, s], s, 2) for s in fair] == [1, 0, 1]


def test_a_player_who_just_posted_the_big_blind_is_not_seated_into_the_next() -> None:
    assert 7 not in fair_open_seats([2, 4, 6, 8], 9, 2, 6, posted_big_blind=True)


def test_players_seated_since_the_last_hand_are_not_pushed_onto_the_blinds() -> None:
    """Heads-up to three: seats 2 and 5, the last button at 4 (gone), so next hand 5 has the button and 2
    the big blind. A newcomer at seat 3 takes the big blind and pushes seat 2 into the small blind: fair
    when 2 has played here, not when 2 was seated since the last hand."""
    assert coming_roles([2, 5], 4) == Roles(5, 5, 2)
    assert coming_roles([2, 3, 5], 4) == Roles(5, 2, 3)
    assert is_fair_seat([2, 5], 3, last_button=4, last_big_blind=None)
    assert not is_fair_seat([2, 5], 3, last_button=4, last_big_blind=None, fresh=[2])


@given(
    occupied=st.sets(st.integers(1, 10), min_size=2, max_size=9),
    data=st.data(),
)
def test_every_fair_seat_keeps_the_blinds_in_order(occupied: set[int], data: st.DataObject) -> None:
    """With a newcomer on any fair seat: the newcomer is not the button or the small blind (3+ players) and
    the last hand's big blind does not post it again; the worst position is the soonest big blind."""
    last_button = data.draw(st.sampled_from(sorted(occupied)))
    last_bb = coming_roles(occupied, data.draw(st.sampled_from(sorted(occupied)))).big_blind
    fair = fair_open_seats(occupied, 10, last_button, last_bb)
    for seat in fair:
        roles = coming_roles([*occupied, seat], last_button)
        assert roles.big_blind != last_bb
        assert seat not in (roles.button, roles.small_blind)
    if fair:
        worst = worst_position(occupied, fair, last_button)
        assert hands_until_big_blind([*occupied, worst], worst, last_button) == min(
            hands_until_big_blind([*occupied, s], s, last_button) for s in fair
        )


def test_shuffled_is_a_permutation_driven_by_the_draw() -> None:
    items = [f"p{k}" for k in range(20)]
    rng = random.Random(5)
    out = shuffled(items, rng.randrange)
    assert sorted(out) == sorted(items) and out != items
    assert shuffled(items, lambda n: n - 1) == items  # the identity draw keeps the order
