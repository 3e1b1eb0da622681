"""Three Card Poker: every TCP rule, ambiguity reading and worked example (TCP-EX-*) by its ID."""

from __future__ import annotations

import pytest
from pokerrules.casino import (
    BetKind,
    CasinoError,
    Deal,
    Decide,
    Decision,
    Game,
    Outcome,
    PlaceBets,
    ProgressiveLine,
    RoundState,
    TcpAnteRule,
    TcpConfig,
    Timeout,
    VoidRound,
    apply,
    default_ranker,
    new_round,
    next_round,
)
from pokerrules.casino.cards import cards
from pokerrules.casino.model import BetResult, Phase, SeatStatus
from pokerrules.casino.paylines import tcp_dealer_qualifies
from pokerrules.casino.replay import deck_for, play_round
from pokerrules.casino.tcp import action_button_seat

GAME = Game.THREE_CARD_POKER
ANTE, PLAY, PP, SIX, PROG = (
    BetKind.ANTE,
    BetKind.PLAY,
    BetKind.PAIR_PLUS,
    BetKind.SIX_CARD_BONUS,
    BetKind.PROGRESSIVE,
)
FOLD, PLAY_D = Decision.FOLD, Decision.PLAY


def tcp(
    player: str, dealer: str, decision: Decision = PLAY_D, config: TcpConfig | None = None, **side: int
) -> RoundState:
    bets = {ANTE: 10, **{BetKind[k.upper()]: v for k, v in side.items()}}
    state, _ = play_round(GAME, {1: bets}, deck_for([cards(player)], cards(dealer)), {1: [decision]}, config)
    return state


def result(state: RoundState, bet: BetKind) -> BetResult:
    assert state.settlement is not None
    return next(r for r in state.settlement.results if r.bet == bet)


def net(state: RoundState) -> int:
    assert state.settlement is not None
    return state.settlement.player_net


@pytest.mark.parametrize(
    ("player", "won"),
    [
        ("Ah Kh Qh", 2000),
        ("7s 8s 9s", 400),
        ("5d 5c 5h", 300),
        ("4c 5d 6h", 60),
        ("As 2d 3c", 60),
        ("Qc Kd Ah", 60),
        ("2h 7h Jh", 30),
        ("Ks Kd 4c", 10),
        ("Ac 9d 4s", -10),
        ("Ks Ad 2c", -10),
    ],
)
def test_tcp_ex_1_pair_plus_paytable(player: str, won: int) -> None:
    """TCP-EX-1, TCP-2.3, TCP-5.1, TCP-5.3, TCP-A4, TCP-A5 (Mini Royal on the Royal row only)."""
    s = tcp(player, "Jd 8d 3s", pair_plus=10)
    assert result(s, PP).net == won


def test_tcp_ex_2_dealer_not_qualifying_player_higher() -> None:
    """TCP-EX-2, TCP-3.6."""
    s = tcp("Kh 6c 2d", "Js 8d 3c")
    assert result(s, PLAY).outcome == Outcome.PUSH and result(s, ANTE).won == 10 and net(s) == 10


def test_tcp_ex_3_dealer_not_qualifying_player_lower_literal_push() -> None:
    """TCP-EX-3, TCP-3.6, TCP-A3 (literal reading, the default)."""
    s = tcp("Tc 9h 7d", "Js 8d 3c")
    assert result(s, ANTE).outcome == Outcome.PUSH and net(s) == 0


def test_tcp_a3_standard_reading_pays_the_ante() -> None:
    """TCP-A3 as configuration: the standard rule pays the Ante whenever the P/D does not qualify."""
    s = tcp("Tc 9h 7d", "Js 8d 3c", config=TcpConfig(ante_rule=TcpAnteRule.STANDARD))
    assert result(s, ANTE).won == 10 and net(s) == 10


def test_tcp_ex_4_dealer_not_qualifying_equal_ranks() -> None:
    """TCP-EX-4, TCP-3.6."""
    s = tcp("Jh 8c 3d", "Js 8d 3c")
    assert net(s) == 0 and result(s, ANTE).outcome == Outcome.PUSH


def test_tcp_ex_5_queen_high_qualifies_player_pair_wins() -> None:
    """TCP-EX-5, TCP-3.5, TCP-3.7, TCP-3.9."""
    s = tcp("4s 4h 9c", "Qd 7s 2c", pair_plus=10)
    assert result(s, ANTE).won == 10 and result(s, PLAY).won == 10 and net(s) == 30


def test_tcp_ex_6_dealer_pair_wins() -> None:
    """TCP-EX-6, TCP-3.7."""
    assert net(tcp("Kc Qc 8d", "6s 6d 3h")) == -20


def test_tcp_ex_7_tie_all_ranks_match() -> None:
    """TCP-EX-7, TCP-3.8: suits never break ties."""
    s = tcp("Qc 9d 5s", "Qs 9h 5d")
    assert {r.outcome for r in s.settlement.results} == {Outcome.PUSH}


def test_tcp_ex_8_a23_is_the_lowest_straight() -> None:
    """TCP-EX-8, TCP-4.2, TCP-A4."""
    s = tcp("Ac 2d 3h", "2s 3s 4d", pair_plus=10)
    assert result(s, ANTE).net == -10 and result(s, PLAY).net == -10 and result(s, PP).won == 60


def test_tcp_ex_9_fold_with_six_card_bonus_in_action() -> None:
    """TCP-EX-9, TCP-3.2, TCP-3.10, TCP-5.2."""
    s = tcp("8c 5d 2s", "8h 8s 2d", decision=FOLD, pair_plus=10, six_card_bonus=5)
    assert result(s, ANTE).net == -10 and result(s, PP).outcome == Outcome.LOSE
    assert result(s, SIX).won == 100 and net(s) == 80
    assert PLAY not in s.seat(1).bets


@pytest.mark.parametrize(
    ("player", "dealer", "line", "won"),
    [
        ("As Ks Qs", "Js Ts 3d", "ROYAL_FLUSH", 5000),
        ("9h 8h 7h", "6h 5h Kc", "STRAIGHT_FLUSH", 1000),
        ("9h 9d 4c", "9s 9c Kh", "FOUR_OF_A_KIND", 500),
        ("8c 5d 2s", "8h 8s 2d", "FULL_HOUSE", 100),
        ("Kh 4h 2c", "9h 7h 5h", "FLUSH", 75),
        ("5c 6d 7h", "8s 9c 2d", "STRAIGHT", 45),
        ("3c 3d 3h", "Ks 7d 2c", "THREE_OF_A_KIND", 40),
        ("Jc Jd 4s", "7h 7c 2d", "NO_WINNING_ROW", -5),
    ],
)
def test_tcp_ex_10_six_card_bonus_paytable(player: str, dealer: str, line: str, won: int) -> None:
    """TCP-EX-10, TCP-2.4, TCP-4.3, TCP-5.2, TCP-5.4."""
    s = tcp(player, dealer, six_card_bonus=5)
    assert result(s, SIX).line == line and result(s, SIX).net == won


@pytest.mark.parametrize(
    ("dealer", "qualifies"),
    [("Qh 3s 2c", True), ("Jh Ts 8c", False), ("2c 2d 3s", True), ("Jh 7h 3h", True)],
)
def test_tcp_ex_11_qualification_boundary(dealer: str, qualifies: bool) -> None:
    """TCP-EX-11, TCP-3.5."""
    hand = cards(dealer)
    assert tcp_dealer_qualifies(hand, default_ranker().three_card(hand)) is qualifies


@pytest.mark.parametrize(
    ("card", "seats", "seat"),
    [("As", 7, 1), ("7d", 7, 7), ("Kc", 7, 6), ("Qh", 6, 6), ("Jc", 7, 4), ("Th", 5, 5)],
)
def test_tcp_ex_12_action_button(card: str, seats: int, seat: int) -> None:
    """TCP-EX-12, TCP-7.1, TCP-7.2 (Ace 1 … King 13), TCP-7.3, TCP-A6."""
    assert action_button_seat(cards(card)[0], seats) == seat


def test_tcp_a6_action_button_from_the_last_pd_card_sets_next_deal_order() -> None:
    """TCP-7.1, TCP-A6: the leftmost (last dealt) P/D card places the button; the next round deals from there."""
    players = {1: "a", 2: "b", 3: "c"}
    config = TcpConfig(seats=3)
    bets = {1: {ANTE: 10}, 2: {ANTE: 10}, 3: {ANTE: 10}}
    deck = deck_for([cards("2c 3c 4d"), cards("5c 6c 8d"), cards("9c Tc Qd")], cards("Kh Qs 2h"))
    state, events = play_round(GAME, bets, deck, {}, config, players=players)
    assert state.action_button == 2  # a Two: seat 2
    assert [e.data["seat"] for e in events if e.kind == "ACTION_BUTTON"] == [2]
    nxt = next_round(state)
    for seat, player in players.items():
        nxt = apply(nxt, PlaceBets(seat, player, {ANTE: 10})).state
    dealt = apply(nxt, Deal(list(range(52)), deck_set=1)).state
    assert (
        dealt.seat(2).cards == (0, 1, 2)
        and dealt.seat(3).cards == (3, 4, 5)
        and dealt.seat(1).cards == (6, 7, 8)
    )


def test_tcp_1_1_two_deck_sets_alternate() -> None:
    """TCP-1.1: round 1 uses deck set 0, round 2 deck set 1, round 3 deck set 0; the wrong set is refused."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10})).state
    assert state.deck_set == 0
    with pytest.raises(CasinoError) as err:
        apply(state, Deal(list(range(52)), deck_set=1))
    assert err.value.reason == "WRONG_DECK_SET"
    sets = []
    for _ in range(3):
        sets.append(state.deck_set)
        state = apply(state, Deal(list(range(52)), deck_set=state.deck_set)).state
        state = apply(state, Timeout()).state
        state = apply(next_round(state), PlaceBets(1, "p", {ANTE: 10})).state
    assert sets == [0, 1, 0]


def test_tcp_6_2_one_player_several_hands_and_6_3_no_going_back() -> None:
    """TCP-6.2: a player sets each of their hands in turn; TCP-6.3: a set hand cannot change; TCP-A1: every
    hand plays the one P/D hand."""
    state = new_round(GAME, {1: "p", 2: "p", 3: "q"})
    for seat, player in ((1, "p"), (2, "p"), (3, "q")):
        state = apply(state, PlaceBets(seat, player, {ANTE: 10})).state
    state = apply(
        state, Deal(deck_for([cards("Ah Kd 2c"), cards("3h 5d 7c"), cards("Qs Qh 4d")], cards("Jd 9s 6h")))
    ).state
    state = apply(state, Decide(1, "p", PLAY_D)).state
    with pytest.raises(CasinoError) as err:
        apply(state, Decide(1, "p", FOLD))
    assert err.value.reason == "ALREADY_DECIDED"
    with pytest.raises(CasinoError) as err:
        apply(state, Decide(3, "p", FOLD))  # not this player's hand
    assert err.value.reason == "SEAT_NOT_YOURS"
    state = apply(state, Decide(2, "p", FOLD)).state
    assert state.phase == Phase.DECISION  # TCP-3.4: the P/D waits for every hand
    state = apply(state, Decide(3, "q", PLAY_D)).state
    assert state.phase == Phase.SETTLED and state.settlement is not None
    assert state.settlement.net_for_seat(1) == 10  # P/D J-high does not qualify: Ante wins, Play back
    assert state.settlement.net_for_seat(2) == -10


def test_tcp_a2_side_bets_need_an_ante() -> None:
    """TCP-2.3, TCP-A2: Pair Plus, 6-Card Bonus and Progressive only with an Ante."""
    state = new_round(GAME, {1: "p"})
    for bet in (PP, SIX, PROG):
        with pytest.raises(CasinoError) as err:
            apply(state, PlaceBets(1, "p", {bet: 1}))
        assert err.value.reason == "SIDE_BET_WITHOUT_ANTE"


def test_tcp_2_4_six_card_bonus_may_differ_from_the_ante() -> None:
    """TCP-2.4: the 6-Card Bonus may be more or less than the Ante."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10, SIX: 25})).state
    assert state.seat(1).bets[SIX] == 25


def test_tcp_2_5_progressive_pays_from_the_pool_and_contributes() -> None:
    """TCP-2.5 (configured default): a Mini Royal takes the pool; each stake feeds the pool."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10, PROG: 1})).state
    state = apply(
        state, Deal(deck_for([cards("Ah Kh Qh")], cards("2c 5d 9s")), progressive_pool=12_345)
    ).state
    state = apply(state, Decide(1, "p", PLAY_D)).state
    assert state.settlement is not None
    prog = result(state, PROG)
    assert prog.from_pool and prog.won == 12_345 and prog.returned == 1
    # 20 % of 1 chip is not a whole chip yet: it is carried (in basis points) to the next round.
    assert state.settlement.pool_contribution == 0 and state.settlement.pool_carry == 2_000
    assert state.settlement.house_net == -state.settlement.player_net - 0 + 12_345


def test_tcp_2_5_progressive_configuration() -> None:
    """TCP-2.5: paytable and contribution are configuration (fixed odds and pool share lines)."""
    config = TcpConfig(
        progressive_paytable={
            "STRAIGHT_FLUSH": ProgressiveLine(pool_basis_points=5_000),
            "PAIR": ProgressiveLine(odds=2),
        },
        progressive_contribution_basis_points=5_000,
        limits={ANTE: TcpConfig().limits[ANTE], PROG: TcpConfig().limits[ANTE]},
    )
    s = tcp("7s 8s 9s", "2c 5d 9d", config=config, progressive=10)
    assert state_pool_paid(s) == 0  # no pool given at the deal: half of 0
    assert s.settlement.pool_contribution == 5
    t = tcp("7s 7h 9s", "2c 5d 9d", config=config, progressive=10)
    assert result(t, PROG).won == 20 and not result(t, PROG).from_pool


def state_pool_paid(state: RoundState) -> int:
    assert state.settlement is not None
    return state.settlement.pool_paid


def test_tcp_progressive_lost_on_fold_by_default() -> None:
    """TCP-2.5 silent on folds: by default (configurable) a fold loses the Progressive like the Pair Plus."""
    s = tcp("Ah Kh Qh", "2c 5d 9s", decision=FOLD, progressive=1)
    assert result(s, PROG).outcome == Outcome.LOSE
    t = tcp(
        "Ah Kh Qh", "2c 5d 9s", decision=FOLD, progressive=1, config=TcpConfig(progressive_lost_on_fold=False)
    )
    assert result(t, PROG).outcome == Outcome.WIN


def test_tcp_progressive_not_offered() -> None:
    """TCP-2.5: a table without the Progressive refuses it."""
    state = new_round(GAME, {1: "p"}, TcpConfig(progressive_offered=False))
    with pytest.raises(CasinoError) as err:
        apply(state, PlaceBets(1, "p", {ANTE: 10, PROG: 1}))
    assert err.value.reason == "BET_NOT_OFFERED"


def test_tcp_3_1_timeout_folds() -> None:
    """TCP-3.1 (silent on timeouts): a hand not set in time folds, risking no more money."""
    state, _ = play_round(GAME, {1: {ANTE: 10}}, deck_for([cards("Ah Ad 2c")], cards("2d 5d 9s")), {})
    assert state.seat(1).status == SeatStatus.FOLDED and state.seat(1).decisions[0].automatic


def test_tcp_void_round_returns_every_bet() -> None:
    """Voiding a TCP round (silent in the document): every bet returned, as CH-11.2."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10, PP: 5})).state
    state = apply(state, Deal(list(range(52)))).state
    done = apply(state, VoidRound("malfunction")).state
    assert done.settlement is not None and done.settlement.player_net == 0


def test_tcp_6_1_other_hands_stay_private() -> None:
    """TCP-6.1, TCP-6.4: each hand's cards go to its own seat only."""
    state = new_round(GAME, {1: "p", 2: "q"})
    state = apply(state, PlaceBets(1, "p", {ANTE: 10})).state
    state = apply(state, PlaceBets(2, "q", {ANTE: 10})).state
    step = apply(state, Deal(list(range(52))))
    assert all(e.seat == e.data["seat"] for e in step.events if e.kind == "HOLE_CARDS")
    assert all(e.seat is not None for e in step.events if "cards" in e.data)


def test_tcp_1_2_five_bets_and_2_2_play_equals_the_ante() -> None:
    """TCP-1.2 (Ante, Play, Pair Plus, 6-Card Bonus, Progressive), TCP-1.3 (three cards each), TCP-2.1 (the
    Ante buys the cards), TCP-2.2 / TCP-3.3 (Play = Ante)."""
    from pokerrules.casino import legal_decisions, rules_of

    assert rules_of(GAME).placeable | {PLAY} == {ANTE, PLAY, PP, SIX, PROG}
    state = new_round(GAME, {1: "p", 2: "q"})
    state = apply(state, PlaceBets(1, "p", {ANTE: 25, PP: 5, SIX: 5, PROG: 1})).state
    state = apply(state, Deal(list(range(52)))).state
    assert len(state.seat(1).cards) == 3 and len(state.dealer_cards) == 3
    assert state.seat(2).cards == () and state.seat(2).status == SeatStatus.SITTING_OUT
    assert {(d.decision, d.stake) for d in legal_decisions(state, 1)} == {(FOLD, 0), (PLAY_D, 25)}


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        ("Ah Kh Qh", "Jh Th 9h"),  # Mini Royal above Straight Flush
        ("2c 3c 4c", "As Ad Ac"),  # Straight Flush above Three of a Kind
        ("2c 2d 2h", "Qs Kd Ah"),  # Three of a Kind above Straight
        ("As 2d 3c", "Ah Kh 9h"),  # Straight above Flush (TCP-EX-ranking of three cards)
        ("2h 5h 7h", "As Ad Kc"),  # Flush above Pair
        ("2c 2d 3h", "Ac Kd Jh"),  # Pair above High Card
        ("Ac Kd 3h", "Ac Qd Jh"),  # High cards compared from the top (TCP-A4)
    ],
)
def test_tcp_4_1_three_card_ranking(higher: str, lower: str) -> None:
    """TCP-4.1, TCP-4.2, TCP-A4: the three-card order the engine settles Ante/Play with."""
    ranker = default_ranker()
    assert ranker.three_card(cards(higher)).strength > ranker.three_card(cards(lower)).strength
