"""Hand histories in the PokerStars text format (issue 23, "Hand histories players take with them").

Golden files (tests/pokerrules/multiplayer/golden/*.txt), checked by hand line by line against the hands in
pokerstars_hands.py: No-Limit Hold'em to a showdown, Pot-Limit Omaha without one (an uncalled bet), four
all-ins with two side pots (the second split), and a Naiko hand (a swap, a peek, an anchor). Each is also
read back by PokerKit 0.7.7's PokerStars parser (tests/pokerstars_check.py), and so are hundreds of random
hands for every viewer, which also show no card the viewer may not know (MP-1.2, NK-4.4)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.cards import cards_text, parse_cards
from pokerrules.multiplayer import Action, GameConfig, HandState
from pokerrules.multiplayer.actions import ActionKind
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.config import Variant
from pokerrules.multiplayer.events import (
    BoardDealt,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerActed,
    PotAwarded,
)
from pokerrules.multiplayer.phh import HandRecord
from pokerrules.multiplayer.pokerstars import (
    StarsHand,
    describe,
    hand_id_of,
    join_hands,
    to_pokerstars,
)
from pokerrules.multiplayer.ranking import ranker_for

from tests.pokerrules.multiplayer.pokerstars_hands import HANDS, STARTED_MS, Played
from tests.pokerstars_check import Recorded, chips_by_the_lines, differences, odd_chips, parse

GOLDEN = Path(__file__).parent / "golden"


def recorded(hand: StarsHand, names: dict[int, str] | None = None) -> Recorded:
    """Felt's record of the hand, from its engine events."""
    events = hand.record.events
    started = next(ev for ev in events if isinstance(ev, HandStarted))
    ended = next(ev for ev in events if isinstance(ev, HandEnded))
    want = Recorded(
        names=dict(names or hand.record.players or {}),
        button=started.button,
        starting=dict(started.stacks),
        final=dict(ended.stacks),
        hand_id=hand.hand_id,
    )
    for ev in events:
        if isinstance(ev, PlayerActed):
            word = {ActionKind.FOLD: "f", ActionKind.CHECK: "cc", ActionKind.CALL: "cc"}.get(ev.kind)
            want.actions.append(f"seat {ev.seat} {word or f'cbr {ev.round_bet}'}")
        elif isinstance(ev, BoardDealt):
            want.actions.append(f"d db {cards_text(ev.cards)}")
        elif isinstance(ev, CardsShown):
            want.shown[ev.seat] = cards_text(ev.cards)
        elif isinstance(ev, PotAwarded) and len(ev.shares) > 1:
            want.split_pot = True
    return want


@pytest.mark.parametrize("name", sorted(HANDS))
def test_golden_files(name: str) -> None:
    """The text is exactly the golden file (each checked by hand: amounts, pots, order, words)."""
    played = HANDS[name]()
    text = to_pokerstars(played.hand, played.viewer)
    assert text == (GOLDEN / f"{name}.txt").read_text(), f"{name}: the PokerStars text changed:\n{text}"


@pytest.mark.parametrize("name", sorted(HANDS))
def test_golden_hands_read_back_by_pokerkit(name: str) -> None:
    """PokerKit reads each golden hand and replays it to Felt's stacks: its own showdown and pots."""
    played: Played = HANDS[name]()
    text = to_pokerstars(played.hand, played.viewer)
    (hh,) = parse(join_hands([text]))
    assert differences(hh, recorded(played.hand)) == []
    names = played.hand.record.players or {}
    assert chips_by_the_lines(text) == {names[s]: played.state.stack_of(s) for s in names}
    assert [played.state.stack_of(s) for s in hh.seats or []] == list(list(hh)[-1].stacks)


def test_golden_views_show_only_what_the_viewer_saw() -> None:
    """MP-1.2: ana's NLHE history names her own cards and the showdown's, never bob's folded 7s 2c;
    in the Naiko hand the swapper sees their own swap and not the peeked card (NK-10.4, NK-11.4)."""
    text = (GOLDEN / "nlhe.txt").read_text()
    assert "Dealt to ana [Ah Kd]" in text and "7s" not in text and "2c" not in text
    assert text.count("Dealt to") == 1
    naiko = (GOLDEN / "naiko.txt").read_text()
    assert '"cid discards 2d, receives As"' in naiko and "peeks" not in naiko
    peeker = HANDS["naiko"]()
    as_ana = to_pokerstars(peeker.hand, 1)
    assert "peeks" in as_ana and "discards" not in as_ana and "Dealt to cid" not in as_ana


def play(seed: int, seats: int, omaha: bool) -> tuple[GameConfig, HandState, list[Event]]:
    """A random hand, stacks from a chip to 200 big blinds: short blinds, all-ins and side pots."""
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    config = GameConfig.plo(50, 100) if omaha else GameConfig.nlhe(50, 100)
    stacks = {
        s: rng.choice([rng.randint(1, 400), rng.randint(400, 20_000)])
        for s in rng.sample(range(1, 11), seats)
    }
    button = rng.choice(sorted(stacks))
    state, events = HandState.start(config, stacks, button, tuple(deck), ranker_for(config.variant))
    while not state.finished:
        legal = state.legal_actions()
        assert legal is not None
        events.extend(state.act(legal.seat, random_legal_action(legal, rng)))
    return config, state, events


def stars(config: GameConfig, events: list[Event], seed: int) -> StarsHand:
    seats = [s for s, _ in next(ev for ev in events if isinstance(ev, HandStarted)).stacks]
    names = {s: (f"bot:{s}a" if s % 3 == 0 else f"player {s}") for s in seats}
    record = HandRecord(config, events, names, seed + 1, "random")
    return StarsHand(record, hand_id_of("random", seed + 1), STARTED_MS, "random", 10)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**9), seats=st.integers(2, 10), omaha=st.booleans())
def test_every_view_of_random_hands_reads_back_in_pokerkit(seed: int, seats: int, omaha: bool) -> None:
    """Every viewer's history (and the full one) of random hands: PokerKit reads the same players,
    stacks, betting, board and shown cards, and its own replay settles the hand as Felt did."""
    config, state, events = play(seed, seats, omaha)
    hand = stars(config, events, seed)
    want = recorded(hand)
    texts = [to_pokerstars(hand, viewer) for viewer in (None, *state.seats)]
    histories = parse(join_hands(texts))
    assert len(histories) == len(texts)
    for hh in histories:
        diff = differences(hh, want)
        assert diff == [] or odd_chips(diff, hh, want), diff
    final = {want.names[s]: chips for s, chips in want.final.items()}
    assert all(chips_by_the_lines(text) == final for text in texts)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**9), seats=st.integers(2, 10), omaha=st.booleans())
def test_a_view_shows_no_card_the_viewer_may_not_know(seed: int, seats: int, omaha: bool) -> None:
    """MP-1.2 / NK-4.4: a player's history shows their own hole cards, the board and the cards shown at
    showdown; never a folded opponent's cards (the full view shows every dealt card)."""
    config, state, events = play(seed, seats, omaha)
    hand = stars(config, events, seed)
    board = {c for ev in events if isinstance(ev, BoardDealt) for c in ev.cards}
    shown = {c for ev in events if isinstance(ev, CardsShown) for c in ev.cards}
    dealt = {ev.seat: set(ev.cards) for ev in events if isinstance(ev, HoleCardsDealt)}
    for viewer in state.seats:
        text = to_pokerstars(hand, viewer)
        assert cards_in(text) <= dealt[viewer] | board | shown, (viewer, text)
    assert cards_in(to_pokerstars(hand, None)) == set().union(*dealt.values(), board)


CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")


def cards_in(text: str) -> set[int]:
    return set(parse_cards("".join(CARD.findall(text))))


def test_hand_descriptions_in_pokerstars_words() -> None:
    holdem, omaha = Variant.HOLDEM, Variant.OMAHA
    cases = [
        (holdem, "AhKd", "2c7d9h3s8s", "high card Ace"),
        (holdem, "AhAd", "2c7d9h3s8s", "a pair of Aces"),
        (holdem, "6h6d", "6c7d9h3s8s", "three of a kind, Sixes"),
        (holdem, "KhKd", "4c4d9h3s8s", "two pair, Kings and Fours"),
        (holdem, "Ah2d", "3c4d5h9s8s", "a straight, Ace to Five"),
        (holdem, "AhKd", "QcJdTh3s8s", "a straight, Ten to Ace"),
        (holdem, "Ah2h", "9h7h4hKsKc", "a flush, Ace high"),
        (holdem, "KhKd", "Kc4d4h3s8s", "a full house, Kings full of Fours"),
        (holdem, "9h9d", "9c9s4h3s8s", "four of a kind, Nines"),
        (holdem, "5h6h", "7h8h9h3s8s", "a straight flush, Five to Nine"),
        (holdem, "AhKh", "QhJhTh3s8s", "a Royal Flush"),
        # Omaha: exactly two hole cards and three of the board (NK-1.4): the four hearts make no flush.
        (omaha, "AhKhQhJh", "2h7h9c3s8d", "high card Ace"),
        (omaha, "AhKh2c3c", "Qh7h9h3s8d", "a flush, Ace high"),
    ]
    for variant, hole, board, words in cases:
        assert describe(variant, parse_cards(hole), parse_cards(board)) == words, (hole, board)


def test_hand_numbers_are_stable_and_distinct_across_tables() -> None:
    """A tracker keys hands by `Hand #`: the same hand keeps its number, another table's hand 1 gets
    another, and the table's own hand number is the last nine digits."""
    assert hand_id_of("nlhe-50-100", 17) == hand_id_of("nlhe-50-100", 17)
    ids = {hand_id_of(f"t-{k:016x}", n) for k in range(300) for n in (1, 2, 3)}
    assert len(ids) == 900
    assert all(0 < i < 2**63 and i % 10**9 in (1, 2, 3) for i in ids)


def test_heads_up_the_button_posts_the_small_blind() -> None:
    """NK-2.2: heads-up the button is the small blind; PokerStars marks the seat with both."""
    config = GameConfig.nlhe(50, 100)
    state, events = HandState.start(
        config, {2: 5_000, 5: 5_000}, 5, tuple(range(52)), ranker_for(Variant.HOLDEM)
    )
    events += state.act(5, Action.fold())
    text = to_pokerstars(stars(config, events, 1), None)
    assert "player 5: posts small blind 50" in text and "player 2: posts big blind 100" in text
    assert "Seat 5: player 5 (button) (small blind) folded before Flop" in text
    assert "Uncalled bet (50) returned to player 2" in text
    assert "Seat 2: player 2 (big blind) collected (100)" in text
    (hh,) = parse(text)
    assert list(list(hh)[-1].stacks) == [5_050, 4_950]  # p1 is the big blind (seat 2), as PokerKit has it


def test_the_big_blind_ante_is_posted_after_the_blind() -> None:
    """The big blind ante (TDA, GameConfig): the big blind posts its blind, then the ante for the table;
    a short big blind is all-in on what it could post."""
    config = GameConfig.nlhe(50, 100, ante=100)
    rank = ranker_for(Variant.HOLDEM)
    state, events = HandState.start(config, {1: 5_000, 2: 150, 3: 5_000}, 3, tuple(range(52)), rank)
    hand = stars(config, [*events, *_fold_out(state)], 2)
    text = to_pokerstars(hand, None)
    assert text.splitlines()[5:8] == [
        "player 1: posts small blind 50",
        "player 2: posts big blind 100",
        "player 2: posts the ante 50 and is all-in",
    ]
    names = hand.record.players or {}
    assert chips_by_the_lines(text) == {names[s]: state.stack_of(s) for s in (1, 2, 3)}


def _fold_out(state: HandState) -> list[Event]:
    out: list[Event] = []
    while not state.finished:
        legal = state.legal_actions()
        assert legal is not None
        out += state.act(legal.seat, Action.check() if legal.can_check else Action.fold())
    return out


def test_a_file_of_several_hands() -> None:
    """Hands separated as PokerStars' files are (two empty lines): PokerKit reads each of them."""
    texts = [to_pokerstars(HANDS[name]().hand, HANDS[name]().viewer) for name in sorted(HANDS)]
    joined = join_hands(texts)
    assert joined.count("\n\n\n") == len(texts)
    assert len(parse(joined)) == len(texts)


def test_a_history_needs_a_finished_hand() -> None:
    config = GameConfig.nlhe(50, 100)
    _, events = HandState.start(config, {1: 500, 2: 500}, 1, tuple(range(52)), ranker_for(Variant.HOLDEM))
    with pytest.raises(ValueError):
        to_pokerstars(stars(config, events, 3), None)
