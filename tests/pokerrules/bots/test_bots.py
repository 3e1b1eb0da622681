"""Table bots (NK-7.6): legal actions only, their own information only, a real edge over random play,
deterministic given a seed, preset bet sizes (MP-4.12, MP-4.13) and a human-like think time."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.bots import BotProfile, bot_move, decide, estimate_equity
from pokerrules.cards import parse_cards
from pokerrules.multiplayer import ActionKind, GameConfig, HandState, Variant, apply, start_hand
from pokerrules.multiplayer.bots import preset_bot_action, random_legal_action
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.presets import sizing
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.multiplayer.views import view_for
from pokerrules.table import Mode, TableConfig, TableState, act, sit, start_next_hand, table_view

FAST = BotProfile(pacing=False, samples=12, iterations=8)
RANKS = {v: ranker_for(v) for v in Variant}


def config_for(variant: Variant) -> GameConfig:
    return GameConfig.nlhe(50, 100) if variant is Variant.HOLDEM else GameConfig.plo(50, 100)


def shuffled(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return deck


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 10),
    variant=st.sampled_from(list(Variant)),
    randoms=st.integers(0, 3),
)
def test_nk_7_6_bots_only_ever_take_legal_actions(
    seed: int, players: int, variant: Variant, randoms: int
) -> None:
    """NK-7.6: bots play by the same rules: every bot action goes through `apply` (which refuses anything
    illegal) and lies within the legal min/max, over whole hands with short and deep stacks."""
    rng = random.Random(seed)
    config = config_for(variant)
    for _ in range(3):
        stacks = {s: rng.choice([30, 150, 1_000, 10_000, 40_000]) for s in range(1, players + 1)}
        state = start_hand(config, stacks, rng.choice(list(stacks)), shuffled(rng), RANKS[variant]).state
        while not state.finished:
            legal = state.legal_actions()
            assert legal is not None
            if legal.seat <= randoms:
                action = random_legal_action(legal, rng)
            else:
                action = decide(view_for(state, legal.seat), rng.getrandbits(32), FAST).action
                if action.kind in (ActionKind.BET, ActionKind.RAISE):
                    assert legal.min_to <= action.amount <= legal.max_to
                if action.kind is ActionKind.FOLD:
                    assert not legal.can_check
            state = apply(state, legal.seat, action).state  # IllegalAction would fail the test
        assert state.total_chips() == sum(stacks.values())


def heads_up_net(variant: Variant, hands: int, seed: int, opponent: object = random_legal_action) -> int:
    """The bot (seat 1) against another player (seat 2; by default uniformly random legal actions),
    100 big blinds each hand, button alternating; returns the bot's net chips."""
    rng = random.Random(seed)
    config = config_for(variant)
    net = 0
    for number in range(hands):
        state = start_hand(
            config, {1: 10_000, 2: 10_000}, 1 + number % 2, shuffled(rng), RANKS[variant]
        ).state
        while not state.finished:
            legal = state.legal_actions()
            assert legal is not None
            if legal.seat == 1:
                action = decide(view_for(state, 1), rng.getrandbits(32), FAST).action
            else:
                action = opponent(legal, rng)  # type: ignore[operator]
            state = apply(state, legal.seat, action).state
        net += state.stack_of(1) - 10_000
    return net


@pytest.mark.parametrize(("variant", "hands"), [(Variant.HOLDEM, 300), (Variant.OMAHA, 200)])
def test_bots_beat_a_random_player_by_a_clear_margin(variant: Variant, hands: int) -> None:
    """Over a few hundred hands the bot wins well over 50 big blinds per 100 hands from random play."""
    net = heads_up_net(variant, hands, seed=11)
    assert net / 100 / (hands / 100) > 50


def test_bots_also_beat_the_engines_loose_passive_preset_bot() -> None:
    """Against `multiplayer.bots.preset_bot_action` (calls too much, never reads its cards) the equity bot
    wins too: well over 30 big blinds per 100 hands over 300 hands (about 170-260 measured)."""
    net = heads_up_net(Variant.HOLDEM, 300, seed=12, opponent=preset_bot_action)
    assert net / 100 / 3 > 30


def _hand_with_opponent_cards(opponent: str) -> HandState:
    holes = {1: parse_cards("Ah Kh"), 2: parse_cards(opponent), 3: parse_cards("2c 7d")}
    deck = deck_dealing([1, 2, 3], 3, holes, parse_cards("Qh Jh 2s 9d 9c"))
    t = start_hand(GameConfig.nlhe(50, 100), {1: 5_000, 2: 5_000, 3: 5_000}, 3, deck, RANKS[Variant.HOLDEM])
    return t.state  # button 3, blinds 1 and 2... seat 3 to act first


def test_nk_7_6_bots_never_see_or_use_other_players_cards() -> None:
    """NK-7.6: a bot gets only its own view (no other hole cards) and decides the same whatever the
    opponents hold: two deals that differ only in an opponent's cards give identical decisions."""
    a = _hand_with_opponent_cards("Ac Ad")
    b = _hand_with_opponent_cards("3d 4c")
    a = apply(a, 3, random_legal_action(a.legal_actions(), random.Random(1))).state  # type: ignore[arg-type]
    b = apply(b, 3, random_legal_action(b.legal_actions(), random.Random(1))).state  # type: ignore[arg-type]
    seat = a.seat_to_act
    assert seat is not None and seat == b.seat_to_act
    view = view_for(a, seat)
    assert [s.hole_cards is None for s in view.seats] == [s.seat != seat for s in view.seats]
    for seed in range(20):
        assert decide(view_for(a, seat), seed, FAST) == decide(view_for(b, seat), seed, FAST)
    with pytest.raises(ValueError):
        decide(view_for(a, None), 1, FAST)  # an observer's view has no legal actions for the bot


def test_bots_are_deterministic_given_a_seed_and_pace_like_people() -> None:
    state = _hand_with_opponent_cards("Ac Ad")
    seat = state.seat_to_act
    paced = [decide(view_for(state, seat), s, BotProfile(samples=8)) for s in range(30)]
    assert paced == [decide(view_for(state, seat), s, BotProfile(samples=8)) for s in range(30)]
    assert all(600 <= d.think_ms <= 5_000 for d in paced) and len({d.think_ms for d in paced}) > 5
    assert all(decide(view_for(state, seat), s, FAST).think_ms == 0 for s in range(5))  # tests switch it off


def test_bot_bets_and_raises_use_the_presets() -> None:
    """MP-4.12 / MP-4.13: bot bet sizes come from the presets, resolved to legal amounts."""
    rng = random.Random(3)
    seen = 0
    for _ in range(60):
        state = start_hand(
            GameConfig.nlhe(50, 100),
            {1: 10_000, 2: 10_000, 3: 10_000},
            1,
            shuffled(rng),
            RANKS[Variant.HOLDEM],
        ).state
        while not state.finished:
            legal = state.legal_actions()
            assert legal is not None
            action = decide(view_for(state, legal.seat), rng.getrandbits(32), FAST).action
            if action.kind in (ActionKind.BET, ActionKind.RAISE):
                sizes = sizing(legal)
                assert sizes is not None and action.amount in {p.amount for p in sizes.presets}
                seen += 1
            state = apply(state, legal.seat, action).state
    assert seen > 10


def test_equity_estimate_from_own_cards_only() -> None:
    rng = random.Random(9)
    aces = estimate_equity(parse_cards("As Ah"), (), 1, rng, samples=64, iterations=64)
    trash = estimate_equity(parse_cards("7c 2d"), (), 1, rng, samples=64, iterations=64)
    assert 0.78 < aces < 0.92 and 0.25 < trash < 0.42
    assert estimate_equity(parse_cards("As Ah"), (), 0, rng) == 1.0
    nuts = estimate_equity(
        parse_cards("As Ks"), parse_cards("Qs Js Ts 2d 3c"), 3, rng, samples=8, iterations=4
    )
    assert nuts == 1.0


def test_equity_estimate_is_one_seeded_c_call_over_samples_times_iterations_deals() -> None:
    """NK-1.4 for Omaha hands; the deals come from `handeval.equity_vs_random`, seeded from the bot's rng,
    so the same rng state gives the same estimate (and `decide` stays deterministic)."""
    handeval = pytest.importorskip("handeval")
    hole, board = parse_cards("As Ah Ks Kh"), parse_cards("2c 7d 9h")
    estimate = estimate_equity(hole, board, 3, random.Random(5), samples=8, iterations=16)
    assert estimate == estimate_equity(hole, board, 3, random.Random(5), samples=8, iterations=16)
    seed = random.Random(5).getrandbits(62) | 1
    assert estimate == handeval.equity_vs_random(handeval.Rule.OMAHA, hole, board, 3, 8 * 16, seed)
    strong = estimate_equity(hole, (), 1, random.Random(6), samples=64, iterations=64)
    assert 0.6 < strong < 0.8  # AAKK double-suited against one random Omaha hand


def test_nk_7_6_bots_fill_seats_and_play_at_a_table() -> None:
    """NK-7.6 with NK-6.1: bots sit where allowed, are marked BOT, and play many hands at the table core
    through `bot_move` + `act` like people; chips are conserved throughout."""
    config = TableConfig(Mode.OMAHA, 5, 10, 200, 1_000, seats=4, bots_allowed=True)
    state = TableState.create(config)
    for k in range(1, 5):
        state = sit(state, f"bot-{k}", k, 1_000, is_bot=True).state
    rng = random.Random(4)
    hands = 0
    while hands < 40 and state.can_start_hand():
        state = start_next_hand(state, shuffled(rng), RANKS[Variant.OMAHA], 0).state
        while state.hand is not None:
            move = bot_move(state, seed=hands, profile=FAST)
            assert move is not None
            state = act(state, move.player, move.decision.action, 0).state
            assert state.chips_bought_in == state.chips_on_table() + state.chips_returned
        hands += 1
    assert hands >= 10 and state.hand_number == hands
    assert all(s.is_bot for s in table_view(state, None).seats)
    assert bot_move(state, 0) is None  # between hands nobody is to act
