"""felt.play.casino_text: the casino lines a player types (bets, decisions) and the round's events and
settlement as text, from constructed protos."""

from __future__ import annotations

import pytest
from felt.play import casino_text as text
from poker.table.v1 import casino_service_pb2 as pb

THB_BETS = ["ANTE", "BONUS"]
TCP_BETS = ["ANTE", "PAIR_PLUS", "SIX_CARD_BONUS", "PROGRESSIVE"]
FLOP_OR_FOLD = [
    pb.LegalDecision(decision=pb.CASINO_DECISION_FOLD),
    pb.LegalDecision(decision=pb.CASINO_DECISION_FLOP, stake=20),
]


@pytest.mark.parametrize(
    ("line", "bets", "expected"),
    [
        ("ante 10 bonus 5", THB_BETS, text.Bets((("ANTE", 10), ("BONUS", 5)))),
        ("10", THB_BETS, text.Bets((("ANTE", 10),))),
        (
            "ante 10 pp 5 six_card_bonus 2",
            TCP_BETS,
            text.Bets((("ANTE", 10), ("PAIR_PLUS", 5), ("SIX_CARD_BONUS", 2))),
        ),
        ("Ante 1k pairplus 5", TCP_BETS, text.Bets((("ANTE", 1_000), ("PAIR_PLUS", 5)))),
        ("rebet", THB_BETS, text.Word("rebet")),
        ("r", THB_BETS, text.Word("rebet")),
        ("d", THB_BETS, text.Word("deal")),
        ("clear", THB_BETS, text.Word("clear")),
        ("q", THB_BETS, text.Word("leave")),
        ("", THB_BETS, text.Word("show")),
        ("balance", THB_BETS, text.Word("lobby")),
    ],
)
def test_betting_lines(line: str, bets: list[str], expected: object) -> None:
    assert text.parse(line, bets) == expected


@pytest.mark.parametrize(
    ("line", "bets", "message"),
    [
        ("bonus", THB_BETS, "say each bet and its chips"),
        ("pair_plus 5", THB_BETS, "no 'pair_plus' bet at this table (bets here: ante, bonus)"),
        ("ante ten", THB_BETS, "'ten' is not an amount"),
        ("deal now", THB_BETS, "deal takes nothing more"),
    ],
)
def test_a_betting_line_that_is_not_says_why(line: str, bets: list[str], message: str) -> None:
    command = text.parse(line, bets)
    assert isinstance(command, text.Invalid) and message in command.message


def test_decisions_are_the_ones_offered() -> None:
    """THB-3.3: pre-flop the player folds or places the Flop bet; nothing else is a decision now."""
    assert text.parse("flop", THB_BETS, FLOP_OR_FOLD) == text.Decide(pb.CASINO_DECISION_FLOP)
    assert text.parse("f", THB_BETS, FLOP_OR_FOLD) == text.Decide(pb.CASINO_DECISION_FOLD)
    refused = text.parse("x", THB_BETS, FLOP_OR_FOLD)
    assert refused == text.Invalid("decide: f fold · flop 20")
    assert text.parse("c", THB_BETS, ()) == text.Invalid("no decision is yours now")


PAYS = text.Pays(
    rows={"ACES_TO_STRAIGHT": ("7 to 1", "AA_BONUS"), "PAIR": ("1 to 1", "PAIR_PLUS")},
    lines={"PLAYER_WINS": "1 to 1", "DEALER_WINS": "", "DEALER_DOES_NOT_QUALIFY": "1 to 1"},
)


def test_the_settlement_shows_each_bets_line_and_the_pay_table_rows_that_paid() -> None:
    """CH-6: the AA Bonus paid on its pay table although the hand lost to the Dealer."""
    results = [
        pb.BetOutcome(bet="AA_BONUS", stake=5, outcome="WIN", returned=40, won=35, line="ACES_TO_STRAIGHT"),
        pb.BetOutcome(bet="ANTE", stake=10, outcome="LOSE", lost=10, line="DEALER_WINS"),
        pb.BetOutcome(bet="CALL", stake=20, outcome="PUSH", returned=20, line="DEALER_DOES_NOT_QUALIFY"),
    ]
    assert text.settlement_lines(1, results, 5, PAYS) == [
        "Settlement, seat 1:",
        "  AA_BONUS 5: wins 35, pay table row aces to straight (7 to 1)",
        "  ANTE 10: loses, dealer wins",
        "  CALL 20: stand-off, 20 back, dealer does not qualify",
        "Pay table lines that paid: AA_BONUS aces to straight 7 to 1 (+35)",
        "Net +5 chips.",
    ]


def test_pays_come_from_list_games() -> None:
    game = pb.GameInfo(
        paytables=[pb.Paytable(name="PAIR_PLUS", lines=[pb.PaytableLine(line="PAIR", pays="1 to 1")])],
        settlement_lines=[pb.SettlementLine(line="PLAYER_WINS", pays="1 to 1")],
    )
    pays = text.Pays.of(game)
    assert pays.rows == {"PAIR": ("1 to 1", "PAIR_PLUS")} and pays.lines == {"PLAYER_WINS": "1 to 1"}
    assert text.Pays.of(None) == text.Pays({}, {})


def test_round_events_as_lines() -> None:
    mine = frozenset({1})

    def lines(**event: object) -> list[str]:
        return text.event_lines(pb.CasinoEvent(round=3, **event), mine, PAYS)  # type: ignore[arg-type]

    assert lines(round_opened=pb.CasinoRoundOpened()) == ["=== Round 3: place your bets ==="]
    bets = [pb.Bet(kind="ANTE", amount=10), pb.Bet(kind="BONUS", amount=5)]
    assert lines(bets_placed=pb.CasinoBetsPlaced(seat=1, bets=bets)) == ["You (seat 1) bet: ANTE 10, BONUS 5"]
    assert lines(bets_placed=pb.CasinoBetsPlaced(seat=4, bets=bets[:1])) == ["Seat 4 (seat 4) bet: ANTE 10"]
    assert lines(hole_cards=pb.CasinoHoleCards(seat=1, cards=["As", "Kd"])) == ["Your cards (seat 1): As Kd"]
    assert lines(board_dealt=pb.CasinoBoardDealt(street="FLOP", cards=["2c", "4h", "6h"])) == [
        "Flop: 2c 4h 6h"
    ]
    decided = pb.CasinoDecisionMade(seat=1, decision=pb.CASINO_DECISION_FLOP, stake=20, automatic=True)
    assert lines(decision_made=decided) == ["You (seat 1): flop (+20) (the clock decided)"]
    revealed = pb.CasinoDealerRevealed(cards=["Qs", "Jd", "2c"], hand="HIGH_CARD", qualifies=True)
    assert lines(dealer_revealed=revealed) == ["Dealer: Qs Jd 2c (high card)"]
    result = pb.CasinoHandResult(seat=1, hand="STRAIGHT", result="WIN")
    assert lines(hand_result=result) == ["Your hand (seat 1): straight, beats the Dealer's"]
    assert lines(round_settled=pb.CasinoRoundSettled(phase="SETTLED")) == ["=== Round 3 over ==="]
    assert lines(phase_changed=pb.CasinoPhaseChanged(phase="FLOP")) == []  # the prompt says it


def test_the_round_as_the_player_sees_it() -> None:
    view = pb.RoundView(
        round=3,
        phase="FLOP",
        board=["2c", "4h", "6h"],
        dealer_cards_dealt=2,
        seats=[
            pb.SeatView(
                seat=1, own=True, status="IN_HAND", cards=["As", "Kd"], bets=[pb.Bet(kind="ANTE", amount=10)]
            ),
            pb.SeatView(seat=2, status="IN_HAND"),
        ],
    )
    assert text.round_lines(view) == [
        "Round 3 · flop decision",
        "Board: 2c 4h 6h",
        "Dealer: ?? ??",
        "Your seat 1: bets ANTE 10  cards As Kd  (in_hand)",
    ]
