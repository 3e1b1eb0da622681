"""The big blind ante (TDA since 2019, WSOP; see `GameConfig`): posted by the big blind after its blind,
dead money in the main pot, written to PHH as PokerKit's `antes`."""

from __future__ import annotations

import random
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.multiplayer import Action, GameConfig, HandState
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.events import (
    AntePosted,
    BettingRoundEnded,
    BlindPosted,
    HandEnded,
    HandVoided,
    PlayerActed,
    PotAwarded,
)
from pokerrules.multiplayer.phh import HandRecord, to_phh

BBA = GameConfig.nlhe(50, 100, ante=100)


def received(h) -> dict[int, int]:  # type: ignore[no-untyped-def]
    out: dict[int, int] = {}
    for award in h.of(PotAwarded):
        for seat, amount in award.shares:
            out[seat] = out.get(seat, 0) + amount
    return out


def test_big_blind_posts_the_ante_after_its_blind(hand) -> None:  # type: ignore[no-untyped-def]
    """The big blind posts blind then ante; the ante is in the pot but not in the bet to call."""
    h = hand(dict.fromkeys(range(1, 7), 10_000), button=1, config=BBA)
    posted = [
        (type(ev).__name__, ev.seat, ev.amount) for ev in h.events if isinstance(ev, BlindPosted | AntePosted)
    ]
    assert posted == [("BlindPosted", 2, 50), ("BlindPosted", 3, 100), ("AntePosted", 3, 100)]
    legal = h.state.legal_actions()
    assert legal.seat == 4 and legal.call_amount == 100 and legal.min_to == 200  # the ante is not a bet
    assert legal.pot == 250 and h.state.pot == 250
    assert h.state.stack_of(3) == 9_800


def test_everyone_folds_to_the_big_blind_who_gets_its_ante_back(hand) -> None:  # type: ignore[no-untyped-def]
    h = hand(dict.fromkeys(range(1, 7), 10_000), button=1, config=BBA)
    for seat in (4, 5, 6, 1, 2):
        h.play((seat, Action.fold()))
    assert dict(h.of(HandEnded)[0].nets) == {1: 0, 2: -50, 3: 50, 4: 0, 5: 0, 6: 0}


def test_heads_up_the_big_blind_not_the_button_posts_the_ante(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-2.2 heads-up: the button posts the small blind; the other player the big blind and the ante (the
    ante is not reduced when the table is short-handed, TDA 2024)."""
    h = hand({1: 5_000, 2: 5_000}, button=1, config=BBA)
    assert [(ev.seat, ev.amount) for ev in h.of(AntePosted)] == [(2, 100)]
    assert h.state.seat_to_act == 1 and h.state.legal_actions().call_amount == 50


@pytest.mark.parametrize(
    ("stack", "blind", "ante", "all_in"),
    [
        (60, 60, 0, True),
        (100, 100, 0, True),
        (150, 100, 50, True),
        (200, 100, 100, True),
        (201, 100, 100, False),
    ],
)
def test_short_big_blind_posts_the_blind_first(hand, stack: int, blind: int, ante: int, all_in: bool) -> None:  # type: ignore[no-untyped-def]
    """TDA 2024, big blind first: a stack short of blind + ante posts the blind, then what is left as ante."""
    h = hand({1: 10_000, 2: 10_000, 3: stack}, button=1, config=BBA)
    big = next(ev for ev in h.of(BlindPosted) if ev.blind == "big")
    assert big.amount == blind
    antes = h.of(AntePosted)
    assert [ev.amount for ev in antes] == ([ante] if ante else [])
    assert h.state.stack_of(3) == stack - blind - ante
    if antes:
        assert antes[0].all_in == all_in


def test_big_blind_all_in_on_the_ante_wins_the_whole_ante_and_no_side_pot(hand) -> None:  # type: ignore[no-untyped-def]
    """The ante is dead money in the main pot: a big blind all-in for blind + part of the ante wins the main
    pot (every live player's matching chips plus its whole ante) and nothing of the side pot."""
    h = hand({1: 10_000, 2: 10_000, 3: 150}, button=1, config=BBA, strengths={1: 1, 2: 0, 3: 2})
    # Seat 3 (BB) posted 100 + ante 50 and is all-in. Seat 1 raises to 300, seat 2 calls.
    h.play((1, Action.raise_to(300)), (2, Action.call()))
    while not h.state.finished:
        la = h.state.legal_actions()
        h.play((la.seat, Action.check()))
    pots = h.of(PotAwarded)
    assert [(p.amount, p.eligible) for p in pots] == [(350, (1, 2, 3)), (400, (1, 2))]
    assert received(h) == {3: 350, 1: 400}
    assert sum(s for _, s in h.of(HandEnded)[0].stacks) == 20_150


def test_pot_limit_counts_the_ante_in_the_pot(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-3.7: the pot-size raise counts every chip in the middle, the dead ante included."""
    h = hand(dict.fromkeys(range(1, 5), 10_000), button=1, config=GameConfig.plo(5, 10, ante=10))
    legal = h.state.legal_actions()
    assert legal.pot == 25 and legal.max_to == 10 + 25 + 10


def test_void_returns_the_ante(hand) -> None:  # type: ignore[no-untyped-def]
    h = hand(dict.fromkeys(range(1, 4), 1_000), button=1, config=BBA)
    events = h.state.void()
    assert isinstance(events[0], HandVoided) and dict(events[0].refunds) == {2: 50, 3: 200}
    assert tuple(h.state.stacks) == (1_000, 1_000, 1_000)


def test_negative_ante_is_refused() -> None:
    with pytest.raises(ValueError, match="ante"):
        GameConfig.nlhe(50, 100, ante=-1)


def test_heads_up_big_blind_covering_the_button_has_no_turn(hand) -> None:  # type: ignore[no-untyped-def]
    """A blind that already covers every opponent's whole stack has nothing to decide (as in PokerKit):
    heads-up, the button's all-in call for at most the big blind ends the betting."""
    for config in (GameConfig.nlhe(50, 100), BBA):
        h = hand({1: 100, 2: 10_000}, button=1, config=config)
        h.play((1, Action.call()))
        assert h.state.finished
        assert not [ev for ev in h.of(PlayerActed) if ev.seat == 2]
        assert [ev.street for ev in h.of(BettingRoundEnded)] == [0, 1, 2, 3]


def test_phh_writes_the_posted_ante_where_pokerkit_reads_it(hand) -> None:  # type: ignore[no-untyped-def]
    """PHH `antes`: PokerKit reads the big blind's ante at index 1 both ring (p2) and heads-up (p1, with the
    first two entries swapped, as for blinds). The ante actually posted is written."""
    ring = hand(dict.fromkeys(range(1, 7), 10_000), button=1, config=BBA)
    doc = tomllib.loads(to_phh(HandRecord(BBA, ring.events)))
    assert doc["antes"] == [0, 100, 0, 0, 0, 0] and doc["blinds_or_straddles"][:2] == [50, 100]
    short = hand({1: 10_000, 2: 10_000, 3: 130}, button=1, config=BBA)
    assert tomllib.loads(to_phh(HandRecord(BBA, short.events)))["antes"] == [0, 30, 0]
    heads_up = hand({1: 5_000, 2: 5_000}, button=1, config=BBA)
    assert tomllib.loads(to_phh(HandRecord(BBA, heads_up.events)))["antes"] == [0, 100]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), seats=st.integers(2, 10), ante=st.sampled_from([1, 50, 100, 250]))
def test_antes_conserve_chips_and_every_pot_is_awarded(seed: int, seats: int, ante: int) -> None:
    """Every chip posted (blinds, ante, bets) ends in a pot awarded or back in a stack; none is negative."""
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    stacks = {s: rng.choice((rng.randint(1, 300), rng.randint(1, 5_000))) for s in range(1, seats + 1)}
    config = GameConfig.nlhe(50, 100, ante)
    state, events = HandState.start(config, stacks, rng.randint(1, seats), tuple(deck), lambda h, b: h[0] % 3)
    total = sum(stacks.values())
    while not state.finished:
        assert state.total_chips() == total and min(state.stacks) >= 0
        legal = state.legal_actions()
        assert legal is not None
        events.extend(state.act(legal.seat, random_legal_action(legal, rng)))
    assert sum(state.stacks) == total and min(state.stacks) >= 0
    ended = next(ev for ev in events if isinstance(ev, HandEnded))
    assert sum(net for _, net in ended.nets) == 0
