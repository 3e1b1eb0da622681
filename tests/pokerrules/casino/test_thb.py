"""Texas Hold'em Bonus: every THB rule, ambiguity reading and worked example (THB-EX-*) by its ID."""

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
    RoundState,
    ThbConfig,
    Timeout,
    VoidCard,
    VoidRound,
    apply,
    legal_decisions,
    new_round,
)
from pokerrules.casino.cards import cards
from pokerrules.casino.model import BetResult, Phase, SeatStatus
from pokerrules.casino.replay import deck_for, play_round

GAME = Game.TEXAS_HOLDEM_BONUS
ANTE, BONUS, FLOP, TURN, RIVER = BetKind.ANTE, BetKind.BONUS, BetKind.FLOP, BetKind.TURN, BetKind.RIVER
FOLD, PLAY_FLOP, BET, CHECK = Decision.FOLD, Decision.FLOP, Decision.BET, Decision.CHECK


def thb(
    player: str,
    dealer: str,
    board: str,
    decisions: list[Decision],
    bonus: int = 0,
    config: ThbConfig | None = None,
) -> RoundState:
    bets = {ANTE: 10, **({BONUS: bonus} if bonus else {})}
    deck = deck_for([cards(player)], cards(dealer), cards(board))
    state, _ = play_round(GAME, {1: bets}, deck, {1: decisions}, config)
    return state


def result(state: RoundState, bet: BetKind) -> BetResult:
    assert state.settlement is not None
    return next(r for r in state.settlement.results if r.bet == bet)


def net(state: RoundState) -> int:
    assert state.settlement is not None
    return state.settlement.player_net


def returned(state: RoundState) -> int:
    assert state.settlement is not None
    return sum(r.returned + r.won for r in state.settlement.results)


def test_thb_ex_1_player_straight_wins_everything() -> None:
    """THB-EX-1, THB-3.1, THB-3.9, THB-4.1, THB-4.2, THB-4.3."""
    s = thb("9c 8d", "Ks 2h", "7c 6h 5s Kd 2c", [PLAY_FLOP, BET, BET])
    assert [(r.bet, r.won) for r in s.settlement.results] == [(ANTE, 10), (FLOP, 20), (TURN, 10), (RIVER, 10)]
    assert net(s) == 50 and returned(s) == 100


def test_thb_ex_2_player_wins_below_straight_ante_stands_off() -> None:
    """THB-EX-2, THB-4.3: Ante stand-off below a Straight; Turn checked, River bet (THB-2.7)."""
    s = thb("Qs 6c", "Jd 9d", "Qh 6h 3d 9c 2s", [PLAY_FLOP, CHECK, BET])
    assert result(s, ANTE).outcome == Outcome.PUSH
    assert TURN not in s.seat(1).bets
    assert net(s) == 30 and returned(s) == 70


def test_thb_ex_3_dealer_wins_bonus_still_pays() -> None:
    """THB-EX-3, THB-4.4, THB-2.3, THB-4.6."""
    s = thb("Ah Kh", "7h 5c", "Qc 7d 7s 4c 2d", [PLAY_FLOP, BET, CHECK], bonus=5)
    assert [r.net for r in s.settlement.results if r.bet != BONUS] == [-10, -20, -10]
    assert result(s, BONUS).won == 125 and result(s, BONUS).line == "AK_SUITED"
    assert net(s) == 85 and returned(s) == 130


def test_thb_ex_4_tie_on_board_straight_stands_off_even_with_straight() -> None:
    """THB-EX-4, THB-4.5, THB-A3."""
    s = thb("2c 3d", "4h 5d", "As Ks Qd Jc Th", [PLAY_FLOP, CHECK, CHECK])
    assert all(r.outcome == Outcome.PUSH for r in s.settlement.results)
    assert net(s) == 0


def test_thb_ex_5_kicker() -> None:
    """THB-EX-5, THB-5.31."""
    s = thb("As Kd", "Ah Qc", "2c 4d 6h 8s Ad", [PLAY_FLOP, CHECK, CHECK])
    assert result(s, ANTE).outcome == Outcome.PUSH and net(s) == 20


@pytest.mark.parametrize("player", ["7c 2d", "Qs Qd"])
def test_thb_ex_6_fold_loses_ante_and_bonus(player: str) -> None:
    """THB-EX-6, THB-3.4, THB-A2: even a paying Bonus hand is forfeited on a Fold."""
    s = thb(player, "3h 4h", "5h 6h 8c 9c Td", [FOLD], bonus=5)
    assert net(s) == -15
    assert result(s, BONUS).outcome == Outcome.LOSE
    assert s.board == ()  # THB-3.4: no further cards for a folded hand


def test_thb_a2_config_bonus_stands_on_fold() -> None:
    """THB-A2 as configuration: a casino that lets the Bonus stand on a Fold pays Q-Q 10 to 1."""
    s = thb("Qs Qd", "3h 4h", "5c 6c 7c 8c 9d", [FOLD], bonus=5, config=ThbConfig(bonus_lost_on_fold=False))
    assert result(s, BONUS).won == 50 and net(s) == 40


def test_thb_ex_7_both_hold_aces_pays_1000_to_1() -> None:
    """THB-EX-7, THB-6.2, THB-A5: 1000 to 1 replaces (is not added to) 30 to 1."""
    s = thb("As Ah", "Ad Ac", "Ks 9h 7d 4c 2s", [PLAY_FLOP, CHECK, CHECK], bonus=5)
    assert result(s, BONUS).won == 5000 and result(s, BONUS).line == "AA_PLAYER_AND_DEALER"
    assert net(s) == 5000


def test_thb_a5_aces_on_the_board_do_not_make_the_1000_row() -> None:
    """THB-A5: the Dealer's A-A must be its hole cards."""
    s = thb("As Ah", "Kd Kc", "Ad Ac 9h 4c 2s", [PLAY_FLOP, CHECK, CHECK], bonus=5)
    assert result(s, BONUS).line == "AA" and result(s, BONUS).won == 150


@pytest.mark.parametrize(
    ("player", "line", "won"),
    [
        ("As Ah", "AA", 300),
        ("Ac Kc", "AK_SUITED", 250),
        ("Ad Qd", "AQ_AJ_SUITED", 200),
        ("Ah Jh", "AQ_AJ_SUITED", 200),
        ("As Kd", "AK_OFFSUIT", 150),
        ("Ks Kh", "KK_QQ_JJ", 100),
        ("Qc Qd", "KK_QQ_JJ", 100),
        ("Jd Jc", "KK_QQ_JJ", 100),
        ("Ac Qh", "AQ_AJ_OFFSUIT", 50),
        ("As Jd", "AQ_AJ_OFFSUIT", 50),
        ("Ts Th", "PAIR_2_TO_10", 30),
        ("2c 2d", "PAIR_2_TO_10", 30),
        ("Ks Qs", "NO_WINNING_ROW", -10),
        ("Ah Th", "NO_WINNING_ROW", -10),
        ("9h 8h", "NO_WINNING_ROW", -10),
    ],
)
def test_thb_ex_8_bonus_paytable_rows(player: str, line: str, won: int) -> None:
    """THB-EX-8, THB-6.2, THB-6.3 (suited / offsuit), THB-6.4 (no row loses), THB-6.5 (one row only)."""
    s = thb(player, "3h 4h", "5c 6c 8d 9d Js", [PLAY_FLOP, CHECK, CHECK], bonus=10)
    assert result(s, BONUS).line == line and result(s, BONUS).net == won


def test_thb_ex_9_royal_flush_ante_pays_only_1_to_1() -> None:
    """THB-EX-9, THB-6.1."""
    s = thb("Ad Kd", "3h 3d", "Qd Jd Td 3c 3s", [PLAY_FLOP, BET, BET])
    assert result(s, ANTE).won == 10 and net(s) == 50


def test_thb_ex_10a_disconnect_before_flop_folds() -> None:
    """THB-EX-10 (a), THB-7.10, THB-3.10: no action pre-flop is a FOLD."""
    s = thb("As Ah", "3h 4h", "5c 6c 7c 8c 9d", [], bonus=5)
    assert s.seat(1).status == SeatStatus.FOLDED and s.seat(1).decisions[0].automatic
    assert net(s) == -15


def test_thb_ex_10b_disconnect_after_flop_checks() -> None:
    """THB-EX-10 (b), THB-7.11: no action after the Flop is a CHECK; the hand goes on to the result."""
    s = thb("Kh 9h", "Qs Qd", "Ah 7h 2h Jc 4d", [PLAY_FLOP])
    assert [d.decision for d in s.seat(1).decisions] == [PLAY_FLOP, CHECK, CHECK]
    assert result(s, ANTE).won == 10 and net(s) == 30


def test_thb_7_10_timeout_command_folds_every_undecided_seat() -> None:
    """THB-7.10: the clock (Timeout) folds pre-flop; a seat that already decided keeps its decision."""
    state = _dealt_two_seats()
    state = apply(state, Decide(1, "p1", PLAY_FLOP)).state
    step = apply(state, Timeout())
    assert step.state.seat(2).status == SeatStatus.FOLDED
    assert step.state.phase == Phase.FLOP
    step = apply(step.state, Timeout())  # THB-7.11
    assert step.state.phase == Phase.TURN
    assert step.state.seat(1).decisions[-1].decision == CHECK


def _dealt_two_seats() -> RoundState:
    state = new_round(GAME, {1: "p1", 2: "p2"})
    state = apply(state, PlaceBets(1, "p1", {ANTE: 10})).state
    state = apply(state, PlaceBets(2, "p2", {ANTE: 20, BONUS: 5})).state
    deck = deck_for([cards("9c 8d"), cards("As Ah")], cards("Ks 2h"), cards("7c 6h 5s Kd 2c"))
    return apply(state, Deal(deck)).state


def test_thb_2_4_flop_bet_is_twice_the_ante_and_2_5_turn_bet_the_ante() -> None:
    """THB-2.4, THB-2.5, THB-2.6, THB-3.3, THB-3.6, THB-3.7: legal decisions and their stakes by street;
    THB-1.4, THB-1.5: hole cards first, then the Flop, Turn and River in three stages."""
    state = _dealt_two_seats()
    assert {(d.decision, d.stake) for d in legal_decisions(state, 2)} == {(FOLD, 0), (PLAY_FLOP, 40)}
    state = apply(state, Decide(1, "p1", PLAY_FLOP)).state
    state = apply(state, Decide(2, "p2", PLAY_FLOP)).state
    assert state.phase == Phase.FLOP and len(state.board) == 3  # THB-3.5
    assert {(d.decision, d.stake) for d in legal_decisions(state, 2)} == {(CHECK, 0), (BET, 20)}
    state = apply(state, Decide(1, "p1", CHECK)).state
    state = apply(state, Decide(2, "p2", BET)).state
    assert state.phase == Phase.TURN and len(state.board) == 4
    assert state.seat(2).bets[TURN] == 20  # THB-A1: the bet after the Flop is the Turn bet
    state = apply(state, Decide(1, "p1", BET)).state  # THB-2.7: a check earlier does not stop a later bet
    state = apply(state, Decide(2, "p2", CHECK)).state
    assert state.phase == Phase.SETTLED and len(state.board) == 5
    assert state.seat(1).bets[RIVER] == 10 and RIVER not in state.seat(2).bets


def test_thb_1_2_seats_share_dealer_and_board_but_play_only_the_dealer() -> None:
    """THB-1.2, THB-1.3: each seat is settled against the Dealer alone, with the same community cards."""
    state = _dealt_two_seats()
    for seat, player in ((1, "p1"), (2, "p2")):
        state = apply(state, Decide(seat, player, PLAY_FLOP)).state
    state = apply(apply(state, Timeout()).state, Timeout()).state
    assert state.settlement is not None
    assert state.settlement.net_for_seat(1) == 30  # 9-high straight beats K-K-2-2: Ante + Flop
    assert state.settlement.net_for_seat(2) == -60 + 150  # A-A loses to two pair; Bonus A-A 30 to 1


def test_thb_2_8_no_decision_after_the_river() -> None:
    """THB-2.8, THB-3.8: once the River is out the round settles; any decision is refused."""
    s = thb("9c 8d", "Ks 2h", "7c 6h 5s Kd 2c", [PLAY_FLOP, CHECK, CHECK])
    with pytest.raises(CasinoError) as err:
        apply(s, Decide(1, "player-1", BET))
    assert err.value.reason == "NOT_DECISION_TIME"


def test_thb_3_2_dealer_cards_and_other_hole_cards_stay_private() -> None:
    """THB-3.2: hole cards go to their seat only; the Dealer's cards are public only at the result stage."""
    state = new_round(GAME, {1: "p1", 2: "p2"})
    state = apply(state, PlaceBets(1, "p1", {ANTE: 10})).state
    state = apply(state, PlaceBets(2, "p2", {ANTE: 10})).state
    deck = deck_for([cards("9c 8d"), cards("As Ah")], cards("Ks 2h"), cards("7c 6h 5s Kd 2c"))
    step = apply(state, Deal(deck))
    hole = [e for e in step.events if e.kind == "HOLE_CARDS"]
    assert [(e.seat, e.data["seat"]) for e in hole] == [(1, 1), (2, 2)]
    public = [e for e in step.events if e.seat is None]
    assert not any(set(cards("Ks 2h")) & set(map(int, e.data.get("cards", []))) for e in public)  # type: ignore[call-overload]


def test_thb_4_7_no_dealer_qualification() -> None:
    """THB-4.7: a Dealer with nothing still beats a weaker player (no qualifying hand)."""
    s = thb("7c 2d", "9s 8h", "Kc Jd 5h 4s 3c", [PLAY_FLOP, CHECK, CHECK])
    assert result(s, FLOP).outcome == Outcome.LOSE


def test_thb_a3_dealer_wins_over_player_straight_ante_lost() -> None:
    """THB-A3: the Straight-or-better Ante test applies only on a player win."""
    s = thb("9c 8d", "6d 6s", "7c 6h 5s 6c 2d", [PLAY_FLOP, CHECK, CHECK])
    assert result(s, ANTE).outcome == Outcome.LOSE and net(s) == -30


def test_thb_1_1_deck_must_be_52_distinct_cards() -> None:
    """THB-1.1: one 52-card deck; a deck with a card twice is refused."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10})).state
    with pytest.raises(CasinoError) as err:
        apply(state, Deal([0, 0, *range(1, 20)]))
    assert err.value.reason == "DECK_INVALID"
    with pytest.raises(CasinoError) as err:
        apply(state, Deal(list(range(8))))
    assert err.value.reason == "DECK_TOO_SHORT"


def test_thb_a6_exposed_card_is_void_and_dealing_continues() -> None:
    """THB-7.1, THB-A6: an exposed card (burn cards included) is taken out; the Flop is the next three.
    The same command serves THB-7.5 (a dealt card lost from view unidentified) and THB-7.6/7.7 (a misdealt
    card Management voids)."""
    state = _dealt_two_seats()
    step = apply(state, VoidCard())
    assert step.state.voided_cards == cards("7c") and "card" not in step.events[0].data
    state = apply(step.state, Decide(1, "p1", PLAY_FLOP)).state
    state = apply(state, Decide(2, "p2", FOLD)).state
    assert state.board == cards("6h 5s Kd")


def test_thb_7_3_cards_drawn_after_the_round_do_not_count() -> None:
    """THB-7.3: once settled, nothing more can touch the round."""
    s = thb("9c 8d", "Ks 2h", "7c 6h 5s Kd 2c", [PLAY_FLOP, CHECK, CHECK])
    for command in (VoidCard(), VoidRound("late")):
        with pytest.raises(CasinoError) as err:
            apply(s, command)
        assert err.value.reason == "ROUND_FINISHED"


def test_thb_a7_void_round_returns_main_bets_and_bonus_stands() -> None:
    """THB-7.7, THB-7.8 (card stuck: round voided), THB-7.9, THB-A7: voided round returns Ante/Flop; a Bonus
    on dealt hole cards is settled."""
    state = _dealt_two_seats()
    state = apply(state, Decide(1, "p1", PLAY_FLOP)).state
    state = apply(state, Decide(2, "p2", PLAY_FLOP)).state
    done = apply(state, VoidRound("card stuck in the shuffler")).state
    assert done.phase == Phase.VOIDED and done.settlement is not None
    by_bet = {(r.seat, r.bet): r for r in done.settlement.results}
    assert by_bet[(1, ANTE)].outcome == Outcome.VOID and by_bet[(1, FLOP)].returned == 20
    assert by_bet[(2, BONUS)].won == 150  # A-A dealt: the Bonus stands (THB-7.9)
    assert done.settlement.player_net == 150


def test_thb_a7_void_before_the_deal_returns_the_bonus() -> None:
    """THB-7.9 (converse): before the hole cards are dealt, the Bonus is simply returned."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10, BONUS: 5})).state
    done = apply(state, VoidRound("shuffler")).state
    assert done.settlement is not None
    assert {r.outcome for r in done.settlement.results} == {Outcome.VOID}


@pytest.mark.parametrize(
    ("hand1", "hand2", "expected"),
    [
        pytest.param("Ad Kd Qd Jd Td", None, "ROYAL_FLUSH", id="THB-5.2"),
        pytest.param("Jc Tc 9c 8c 7c", None, "STRAIGHT_FLUSH", id="THB-5.3"),
        pytest.param("5s 4s 3s 2s As", "6h 5h 4h 3h 2h", -1, id="THB-5.4 THB-5.5"),
        pytest.param("4c 3c 2c Ac Kc", None, "FLUSH", id="THB-5.6"),
        pytest.param("Ac Ah Ad As Jh", None, "FOUR_OF_A_KIND", id="THB-5.7"),
        pytest.param("3c 3d 3h 3s Ad", "4c 4d 4h 4s 2d", -1, id="THB-5.8"),
        pytest.param("9c 9d 9h 9s Kd", "9c 9d 9h 9s Qd", 1, id="THB-5.9"),
        pytest.param("Kc Kh Kd As Ah", None, "FULL_HOUSE", id="THB-5.10"),
        pytest.param("9c 9d 9h 4s 4d", "8c 8d 8h As Ad", 1, id="THB-5.11"),
        pytest.param("7c 7d 7h Ks Kd", "7c 7d 7s Qs Qd", 1, id="THB-5.12"),
        pytest.param("Jh 8h 6h 5h 2h", None, "FLUSH", id="THB-5.13"),
        pytest.param("Ah 9h 6h 5h 2h", "Ad 9d 6d 4d 3d", 1, id="THB-5.14"),
        pytest.param("9c 8d 7c 6h 5s", None, "STRAIGHT", id="THB-5.15"),
        pytest.param("Ac Kd Qh Js Tc", "5c 4d 3h 2s Ad", 1, id="THB-5.16 THB-5.17"),
        pytest.param("2c Ad Kh Qs Jc", None, "HIGH_CARD", id="THB-5.17"),
        pytest.param("5c 4d 3h 2s Ad", "6c 5d 4h 3s 2d", -1, id="THB-5.18"),
        pytest.param("Ts Th Tc 6h 3d", None, "THREE_OF_A_KIND", id="THB-5.19"),
        pytest.param("5c 5d 5h 3s 2d", "4c 4d 4h Ks 5s", 1, id="THB-5.20"),
        pytest.param("4c 4d 4h Ks 5s", "4c 4d 4s Qs 9d", 1, id="THB-5.21 THB-A4"),
        pytest.param("4c 4d 4h Qs 9s", "4c 4d 4s Qh 8d", 1, id="THB-5.21 THB-A4"),
        pytest.param("Qs Qh 6c 6h 3d", None, "TWO_PAIR", id="THB-5.22"),
        pytest.param("Jc Jd 2h 2s 4d", "Tc Td 9h 9s 8d", 1, id="THB-5.23"),
        pytest.param("8c 8d 6h 6s 3d", "8h 8s 5h 5s Kd", 1, id="THB-5.24"),
        pytest.param("Qc Qd 5h 5s 8d", "Qh Qs 5c 5d 4d", 1, id="THB-5.25"),
        pytest.param("Ac Ah 8d 6h 5s", None, "PAIR", id="THB-5.26"),
        pytest.param("6c 6d 4h 3s 2d", "5c 5d Ah Ks Qd", 1, id="THB-5.27"),
        pytest.param("Jc Jd Ah 9s 3d", "Jh Js Ac 8s 7d", 1, id="THB-5.28"),
        pytest.param("Qc Th 6d 5s 2h", None, "HIGH_CARD", id="THB-5.29"),
        pytest.param("Ac Jd 9h 5s 3d", "Ah Td 9c 6s 4d", 1, id="THB-5.30"),
    ],
)
def test_thb_ex_11_hand_ranking_vectors(hand1: str, hand2: str | None, expected: str | int) -> None:
    """THB-EX-11, THB-5.1, THB-5.14, THB-5.31 (kicker), THB-5.32 (no suit order): the ranking the engine settles
    with; each row names its rule."""
    from pokerrules.casino import default_ranker

    ranker = default_ranker()
    first = ranker.best_five(cards(hand1))
    if hand2 is None:
        assert first.category.name == expected
    else:
        second = ranker.best_five(cards(hand2))
        assert (first.strength > second.strength) - (first.strength < second.strength) == expected


def test_thb_7_10_one_seat_clock() -> None:
    """THB-7.10 with a clock per seat: Timeout(seat) decides for that seat only; the others keep theirs."""
    state = _dealt_two_seats()
    step = apply(state, Timeout(seat=2))
    assert step.state.seat(2).status == SeatStatus.FOLDED and step.state.seat(2).decisions[0].automatic
    assert not step.state.seat(1).decided and step.state.phase == Phase.PRE_FLOP
    with pytest.raises(CasinoError) as err:
        apply(step.state, Timeout(seat=2))
    assert err.value.reason == "ALREADY_DECIDED"


def test_thb_1_2_one_betting_position_per_player() -> None:
    """THB-1.2: a player has only one betting position (two would show them two hands' hole cards);
    Three Card Poker's several hands stay allowed (TCP-6.2)."""
    with pytest.raises(CasinoError) as refused:
        new_round(GAME, {1: "ana", 3: "ana"})
    assert refused.value.reason == "ONE_POSITION_PER_PLAYER"
    assert len(new_round(GAME, {1: "ana", 3: "ben"}).seats) == 2
    assert len(new_round(Game.THREE_CARD_POKER, {1: "ana", 2: "ana", 3: "ana"}).seats) == 3
