"""Casino Hold'em: every CH rule, ambiguity reading and worked example (CH-EX-*) by its ID."""

from __future__ import annotations

import pytest
from pokerrules.casino import (
    BetKind,
    CasinoError,
    ChConfig,
    ClearBets,
    Deal,
    Decision,
    Game,
    Limits,
    Outcome,
    PlaceBets,
    Rebet,
    RoundState,
    VoidRound,
    apply,
    legal_decisions,
    new_round,
    next_round,
)
from pokerrules.casino.cards import cards
from pokerrules.casino.model import BetResult, Phase
from pokerrules.casino.replay import deck_for, play_round

GAME = Game.CASINO_HOLDEM
ANTE, AA, CALL = BetKind.ANTE, BetKind.AA_BONUS, BetKind.CALL
FOLD, CALL_D = Decision.FOLD, Decision.CALL


def ch(
    player: str,
    dealer: str,
    board: str,
    decision: Decision = CALL_D,
    aa: int = 0,
    config: ChConfig | None = None,
) -> RoundState:
    bets = {ANTE: 10, **({AA: aa} if aa else {})}
    deck = deck_for([cards(player)], cards(dealer), cards(board))
    state, _ = play_round(GAME, {1: bets}, deck, {1: [decision]}, config)
    return state


def result(state: RoundState, bet: BetKind) -> BetResult:
    assert state.settlement is not None
    return next(r for r in state.settlement.results if r.bet == bet)


def net(state: RoundState) -> int:
    assert state.settlement is not None
    return state.settlement.player_net


def test_ch_ex_1_dealer_does_not_qualify_player_straight() -> None:
    """CH-EX-1, CH-2.3 (bets, then Deal), CH-3.4 (Call), CH-5.1, CH-5.3, CH-7.3."""
    s = ch("9s 8h", "Jc 3d", "7d 6c Ks 2h 5d")
    assert result(s, ANTE).won == 10 and result(s, ANTE).line == "STRAIGHT_OR_LESS"
    assert result(s, CALL).outcome == Outcome.PUSH and net(s) == 10


def test_ch_ex_2_dealer_not_qualifying_with_better_hand_still_pays_ante() -> None:
    """CH-EX-2, CH-5.3, CH-A5: pair of 3s does not qualify; the Ante is paid whatever the hands."""
    s = ch("Js 9h", "3c 3d", "2h 7d Kc 8s 5s")
    assert result(s, ANTE).won == 10 and result(s, CALL).outcome == Outcome.PUSH and net(s) == 10


def test_ch_ex_3_dealer_qualifies_with_exactly_fours() -> None:
    """CH-EX-3, CH-5.2, CH-5.6."""
    s = ch("Th 3s", "4s 4d", "Tc 8h 2d Ks 6c")
    assert result(s, ANTE).won == 10 and result(s, CALL).won == 20 and net(s) == 30


def test_ch_ex_4_flush_and_aa_bonus_flush_on_the_flop() -> None:
    """CH-EX-4, CH-1.5, CH-7.1 (Flush 2 to 1), CH-7.2 (Flush or higher 25 to 1)."""
    s = ch("Ah 7h", "Qs Qd", "Kh 9h 2h 5c Jd", aa=5)
    assert result(s, AA).won == 125 and result(s, ANTE).won == 20 and result(s, CALL).won == 20
    assert net(s) == 165


@pytest.mark.parametrize(
    ("player", "dealer", "board", "ante_won", "net_"),
    [
        ("8c 8d", "As Kc", "8h Ks Kd 3c 2h", 30, 50),  # CH-EX-5 Full House 3 to 1
        ("9c 9d", "Ks Kh", "9h 9s 4c Kd 2s", 100, 120),  # CH-EX-6 Four of a Kind 10 to 1
        ("8s 7s", "Ah Td", "6s 5s 4s Ad Ac", 200, 220),  # CH-EX-7 Straight Flush 20 to 1
    ],
)
def test_ch_ex_5_6_7_ante_paytable(player: str, dealer: str, board: str, ante_won: int, net_: int) -> None:
    """CH-EX-5, CH-EX-6, CH-EX-7, CH-7.1."""
    s = ch(player, dealer, board)
    assert result(s, ANTE).won == ante_won and net(s) == net_


def test_ch_ex_8_royal_flush_dealer_not_qualifying() -> None:
    """CH-EX-8, CH-5.3, CH-7.1 (100 to 1), CH-7.2."""
    s = ch("As Ks", "7h 2d", "Qs Js Ts 4d 9c", aa=5)
    assert result(s, ANTE).won == 1000 and result(s, CALL).outcome == Outcome.PUSH
    assert result(s, AA).won == 125 and net(s) == 1125


def test_ch_ex_9_equal_hands_push() -> None:
    """CH-EX-9, CH-5.4, CH-A4, CH-A6."""
    s = ch("2d 3h", "4s 5c", "Ac Kd Qh Js Tc")
    assert {r.outcome for r in s.settlement.results} == {Outcome.PUSH} and net(s) == 0


def test_ch_ex_10_dealer_wins() -> None:
    """CH-EX-10, CH-5.5."""
    s = ch("Kd Qc", "7c 7d", "7s Jh 4d 2c 9s")
    assert net(s) == -30


def test_ch_ex_11_fold_loses_ante_and_aa_bonus_even_with_aces() -> None:
    """CH-EX-11, CH-3.5, CH-4.3: the round ends at once, no Turn or River."""
    s = ch("Ac 9d", "Ks Kd", "Ah 6s 2d 3c 4c", decision=FOLD, aa=5)
    assert net(s) == -15 and result(s, AA).outcome == Outcome.LOSE
    assert len(s.board) == 3 and not s.dealer_revealed


def test_ch_aa_bonus_config_stands_on_fold() -> None:
    """CH-4.3 as configuration (the game-math variant): with the AA Bonus standing on a fold, aces pay 7 to 1."""
    s = ch(
        "Ac 9d", "Ks Kd", "Ah 6s 2d 3c 4c", decision=FOLD, aa=5, config=ChConfig(aa_bonus_lost_on_fold=False)
    )
    assert result(s, AA).won == 35 and net(s) == 25


def test_ch_ex_12_aa_bonus_pair_of_aces_and_main_win() -> None:
    """CH-EX-12, CH-4.2, CH-5.6, CH-3.6."""
    s = ch("Ad 9c", "Qs Qh", "Ah 6s 2d Kc 3h", aa=5)
    assert result(s, AA).won == 35 and result(s, AA).line == "ACES_TO_STRAIGHT" and net(s) == 65


def test_ch_ex_13_aa_bonus_loses_with_kings() -> None:
    """CH-EX-13, CH-4.4, CH-4.5: AA Bonus settled apart from the main game."""
    s = ch("Kd Kc", "Js Td", "7s 4h 2c Qh 8d", aa=5)
    assert result(s, AA).outcome == Outcome.LOSE and net(s) == 5


def test_ch_ex_14_aa_bonus_low_two_pair_pays() -> None:
    """CH-EX-14, CH-A3: any Two Pair is better than a pair of aces."""
    s = ch("5s 5d", "Kh Qc", "3c 3h 9s Jd 2c", aa=5)
    assert result(s, AA).won == 35 and net(s) == 45


def test_ch_ex_15_ace_on_the_turn_does_not_count_for_aa_bonus() -> None:
    """CH-EX-15, CH-A3: only the player's 2 cards + the Flop."""
    s = ch("Ac 8d", "Qd Js", "Ks 6h 3d Ah Tc", aa=5)
    assert result(s, AA).outcome == Outcome.LOSE and net(s) == -35


@pytest.mark.parametrize(
    ("dealer", "board", "qualifies"),
    [
        ("3c 3d", "Kh 9s 7d 5c 2h", False),  # Pair of 3s
        ("4c 4d", "Kh 9s 7d 5c 2h", True),  # Pair of 4s
        ("Ac Kd", "Qh 9s 7d 3c 2h", False),  # A-K-Q-9-7 high card
        ("Ac Kd", "4h 4s 9d 7c 2h", True),  # Pair of 4s entirely on the board
    ],
)
def test_ch_ex_16_dealer_qualification_boundary(dealer: str, board: str, qualifies: bool) -> None:
    """CH-EX-16, CH-5.2: the Call is returned exactly when the Dealer does not qualify (player wins here)."""
    # The player's jacks beat the Dealer on every board: only qualification decides the Call.
    s = ch("Jh Jd", dealer, board)
    reveal = result(s, CALL)
    assert (reveal.line != "DEALER_DOES_NOT_QUALIFY") is qualifies


def test_ch_ex_17_auto_adjusted_bet() -> None:
    """CH-EX-17, CH-2.5, CH-A2: 120 on an Ante with maximum 100 becomes 100; the Call is then 200."""
    config = ChConfig(limits={ANTE: Limits(1, 100), AA: Limits(1, 50)})
    state = new_round(GAME, {1: "p"}, config)
    for _ in range(12):
        step = apply(state, PlaceBets(1, "p", {ANTE: 10}))
        state = step.state
    assert state.seat(1).bets[ANTE] == 100
    assert step.events[0].kind == "BET_ADJUSTED" and step.events[0].data["adjusted"] == 100
    state = apply(state, PlaceBets(1, "p", {AA: 80})).state  # CH-A2: the AA Bonus to its own maximum
    assert state.seat(1).bets[AA] == 50
    state = apply(state, Deal(deck_for([cards("2c 7d")], cards("3h 4h"), cards("9s Td Jc")))).state
    assert {(d.decision, d.stake) for d in legal_decisions(state, 1)} == {(FOLD, 0), (CALL_D, 200)}


def test_ch_2_2_every_tap_adds_a_chip() -> None:
    """CH-2.1, CH-2.2: each PlaceBets (a chip tapped on an area) adds to the bet already there."""
    state = new_round(GAME, {1: "p"})
    state = apply(state, PlaceBets(1, "p", {ANTE: 5})).state
    state = apply(state, PlaceBets(1, "p", {ANTE: 5, AA: 1})).state
    assert dict(state.seat(1).bets) == {ANTE: 10, AA: 1}


def test_ch_8_clear_bets_and_rebet() -> None:
    """CH-8, CH-8.1: Clear Bets removes the bets; Rebet repeats the previous round's bets (CH-2.4: the Call is
    not included)."""
    s = ch("9s 8h", "Jc 3d", "7d 6c Ks 2h 5d", aa=5)
    nxt = next_round(s)
    assert nxt.round_number == 2 and nxt.phase == Phase.BETTING
    with pytest.raises(CasinoError):
        apply(new_round(GAME, {1: "player-1"}), Rebet(1, "player-1"))
    again = apply(nxt, Rebet(1, "player-1")).state
    assert dict(again.seat(1).bets) == {ANTE: 10, AA: 5}
    cleared = apply(again, ClearBets(1, "player-1")).state
    assert dict(cleared.seat(1).bets) == {}
    with pytest.raises(CasinoError) as err:
        apply(cleared, Deal(list(range(52))))
    assert err.value.reason == "NO_BETS"


def test_ch_8_rebet_respects_todays_limits() -> None:
    """CH-8 with CH-2.5: a Rebet above a lowered maximum is auto-adjusted."""
    s = ch("9s 8h", "Jc 3d", "7d 6c Ks 2h 5d", aa=5)
    lowered = ChConfig(limits={ANTE: Limits(1, 8), AA: Limits(1, 50)})
    nxt = new_round(GAME, {1: "player-1"}, lowered, last_bets=next_round(s).last_bets)
    assert apply(nxt, Rebet(1, "player-1")).state.seat(1).bets[ANTE] == 8


def test_ch_11_2_malfunction_voids_and_refunds_everything() -> None:
    """CH-11.2: every bet refunded, including the AA Bonus and the Call (CH-11.1 (a): the procedure chosen for
    an unfinished round is this void, or a resume from the log by the service)."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10, AA: 5})).state
    state = apply(state, Deal(deck_for([cards("Ah Ad")], cards("3h 4h"), cards("Ac 6s 2d")))).state
    done = apply(state, VoidRound("software malfunction")).state
    assert done.settlement is not None and done.settlement.player_net == 0
    assert {r.outcome for r in done.settlement.results} == {Outcome.VOID}


def test_ch_3_2_flop_dealt_face_up_at_the_deal() -> None:
    """CH-3.1, CH-3.2: the Flop is public at the deal; the Dealer's two cards are not."""
    state = apply(new_round(GAME, {1: "p"}), PlaceBets(1, "p", {ANTE: 10})).state
    step = apply(state, Deal(deck_for([cards("Ah Kd")], cards("3h 4h"), cards("9c 6s 2d"))))
    board = [e for e in step.events if e.kind == "BOARD"]
    assert board[0].data["cards"] == list(cards("9c 6s 2d")) and board[0].seat is None
    assert step.state.phase == Phase.FLOP
    assert not any(e.kind == "DEALER_REVEALED" for e in step.events)


def test_ch_a1_ace_low_straight_counts_and_no_wraparound() -> None:
    """CH-1.3, CH-A1: A-2-3-4-5 is a straight (Ante paid 1 to 1 as Straight or less); Q-K-A-2-3 is not."""
    s = ch("Ac 2d", "Kh Kd", "3h 4s 5c 9d Jh")
    assert result(s, ANTE).won == 10 and result(s, CALL).won == 20  # wheel beats a pair of kings
    t = ch("Ac 2d", "Kh 7d", "3h Qs Kc 9d 5h")
    assert result(t, ANTE).outcome == Outcome.LOSE  # A-high no straight loses to a pair of kings


def test_ch_1_4_limits_below_minimum_refused() -> None:
    """CH-1.4: the Ante within the table Min/Max; under the minimum is refused, not adjusted."""
    config = ChConfig(limits={ANTE: Limits(5, 100), AA: Limits(1, 50)})
    state = new_round(GAME, {1: "p"}, config)
    with pytest.raises(CasinoError) as err:
        apply(state, PlaceBets(1, "p", {ANTE: 4}))
    assert err.value.reason == "BET_BELOW_MINIMUM"


def test_ch_7_paytable_defaults() -> None:
    """CH-7.1, CH-7.2: the configuration defaults are the document's paytables."""
    from pokerrules.casino.config import CH_AA_BONUS_PAYTABLE, CH_ANTE_PAYTABLE

    assert dict(CH_ANTE_PAYTABLE) == {
        "ROYAL_FLUSH": 100,
        "STRAIGHT_FLUSH": 20,
        "FOUR_OF_A_KIND": 10,
        "FULL_HOUSE": 3,
        "FLUSH": 2,
        "STRAIGHT_OR_LESS": 1,
    }
    assert dict(CH_AA_BONUS_PAYTABLE) == {"FLUSH_OR_HIGHER": 25, "ACES_TO_STRAIGHT": 7}


@pytest.mark.parametrize(
    ("player", "dealer", "board", "ante", "call"),
    [
        ("Js 9h", "3c 3d", "2h 7d Kc 8s 5s", Outcome.WIN, Outcome.PUSH),  # not qualified: N/A comparison
        ("2d 3h", "4s 5c", "Ac Kd Qh Js Tc", Outcome.PUSH, Outcome.PUSH),  # qualified, equal
        ("Th 3s", "4s 4d", "Tc 8h 2d Ks 6c", Outcome.WIN, Outcome.WIN),  # qualified, player better
        ("Kd Qc", "7c 7d", "7s Jh 4d 2c 9s", Outcome.LOSE, Outcome.LOSE),  # qualified, Dealer better
    ],
)
def test_ch_5_7_outcome_table(player: str, dealer: str, board: str, ante: Outcome, call: Outcome) -> None:
    """CH-5.7 (each row of the source's outcome table), CH-3.3, CH-5.1: best five of 2 + 5 each side."""
    s = ch(player, dealer, board)
    assert (result(s, ANTE).outcome, result(s, CALL).outcome) == (ante, call)


@pytest.mark.parametrize(
    ("player", "line"),
    [
        ("As Ks", "ROYAL_FLUSH"),
        ("9s 8s", "STRAIGHT_FLUSH"),
        ("Qd Qc", "FOUR_OF_A_KIND"),
        ("Qd Tc", "FULL_HOUSE"),
        ("2s 3s", "FLUSH"),
        ("Ad Kc", "STRAIGHT_OR_LESS"),  # a straight
        ("Qc 2d", "STRAIGHT_OR_LESS"),  # three of a kind
    ],
)
def test_ch_6_1_categories_map_to_the_ante_paytable(player: str, line: str) -> None:
    """CH-6.1 (the ranking order) with CH-7.1 / CH-7.3: the Ante row follows the player's category."""
    s = ch(player, "4h 4d", "Qs Js Ts Qh 7s")
    assert result(s, ANTE).line == line


def test_ch_1_1_one_deck_shuffled_every_round() -> None:
    """CH-1.1, CH-1.2: each round is dealt from its own 52-card deck; a deck with a repeated card is refused."""
    first = ch("9s 8h", "Jc 3d", "7d 6c Ks 2h 5d")
    nxt = apply(next_round(first), PlaceBets(1, "player-1", {ANTE: 10})).state
    with pytest.raises(CasinoError) as err:
        apply(nxt, Deal([1, 1, *range(2, 52)]))
    assert err.value.reason == "DECK_INVALID"
    dealt = apply(nxt, Deal(list(range(51, -1, -1)))).state  # a fresh order for the new round
    assert dealt.seat(1).cards == (51, 50)


def test_ch_8_rebet_is_the_seats_own_player_only() -> None:
    """CH-8 Rebet: a new player on the seat has no previous bets to repeat."""
    s = ch("9s 8h", "Jc 3d", "7d 6c Ks 2h 5d", aa=5)
    nxt = next_round(s, {1: "newcomer"})
    with pytest.raises(CasinoError) as err:
        apply(nxt, Rebet(1, "newcomer"))
    assert err.value.reason == "NO_PREVIOUS_BETS"
