"""Every hand-ranking worked example of /work/shared/rules/ that names or compares hands.

THB (Texas Hold'em Bonus), MP (multiplayer Hold'em), CH (Casino Hold'em), NK (Naiko: Hold'em and
Omaha) and TCP (three-card poker). Cards written without suits in the rules are of mixed suits.
"""

from __future__ import annotations

import pytest
from handeval import Category, HandValue, Rule, category_of, evaluate, parse_cards

C = Category
RANK_WORDS = {"10": "T"}


def mixed(text: str) -> list[int]:
    """'K-K-7-7-3' -> five cards of those ranks, suits chosen so they are distinct and not a flush."""
    ranks = [RANK_WORDS.get(r, r) for r in text.split("-")]
    seen: dict[str, int] = {}
    cards = []
    for r in ranks:
        cards.append(f"{r}{'cdhs'[seen.get(r, 0)]}")
        seen[r] = seen.get(r, 0) + 1
    if len({c[1] for c in cards}) == 1:
        cards[-1] = cards[-1][0] + "d"
    return parse_cards(cards)


def cards(text: str) -> list[int]:
    """'A♦ K♦ 10♦' -> codes."""
    suits = {"♠": "s", "♥": "h", "♦": "d", "♣": "c"}
    return parse_cards("".join(suits.get(ch, ch) for ch in tok) for tok in text.split())


def hand(text: str) -> HandValue:
    codes = cards(text) if any(s in text for s in "♠♥♦♣") else mixed(text)
    return evaluate(Rule.HOLDEM, codes[:2], codes[2:])


def holdem(hole: str, board: str) -> HandValue:
    return evaluate(Rule.HOLDEM, cards(hole), cards(board))


# THB-EX-11: hand-ranking test vectors (THB section 5)
THB_CATEGORIES = [
    ("A♦ K♦ Q♦ J♦ 10♦", C.ROYAL_FLUSH),  # THB-5.2
    ("J♣ 10♣ 9♣ 8♣ 7♣", C.STRAIGHT_FLUSH),  # THB-5.3
    ("4♣ 3♣ 2♣ A♣ K♣", C.FLUSH),  # THB-5.6: no wrap-around
    ("A♣ A♥ A♦ A♠ J♥", C.FOUR_OF_A_KIND),  # THB-5.7
    ("K♣ K♥ K♦ A♠ A♥", C.FULL_HOUSE),  # THB-5.10
    ("J♥ 8♥ 6♥ 5♥ 2♥", C.FLUSH),  # THB-5.13
    ("9♣ 8♦ 7♣ 6♥ 5♠", C.STRAIGHT),  # THB-5.15
    ("2-A-K-Q-J", C.HIGH_CARD),  # THB-5.17
    ("10♠ 10♥ 10♣ 6♥ 3♦", C.THREE_OF_A_KIND),  # THB-5.19
    ("Q♠ Q♥ 6♣ 6♥ 3♦", C.TWO_PAIR),  # THB-5.22
    ("A♣ A♥ 8♦ 6♥ 5♠", C.PAIR),  # THB-5.26
    ("Q♣ 10♥ 6♦ 5♠ 2♥", C.HIGH_CARD),  # THB-5.29
]

THB_WINNERS = [  # (stronger, weaker)
    ("6♥ 5♥ 4♥ 3♥ 2♥", "5♠ 4♠ 3♠ 2♠ A♠"),  # THB-5.5: the steel wheel is the lowest straight flush
    ("4-4-4-4-2", "3-3-3-3-A"),  # THB-5.8
    ("9-9-9-9-K", "9-9-9-9-Q"),  # THB-5.9
    ("9-9-9-4-4", "8-8-8-A-A"),  # THB-5.11
    ("7-7-7-K-K", "7-7-7-Q-Q"),  # THB-5.12
    ("A-K-Q-J-10", "5-4-3-2-A"),  # THB-5.17
    ("6-5-4-3-2", "5-4-3-2-A"),  # THB-5.18
    ("5-5-5-3-2", "4-4-4-K-5"),  # THB-5.21
    ("4-4-4-K-5", "4-4-4-Q-9"),  # THB-A4 chain
    ("4-4-4-Q-9", "4-4-4-Q-8"),
    ("J-J-2-2-4", "10-10-9-9-8"),  # THB-5.23
    ("8-8-6-6-3", "8-8-5-5-K"),  # THB-5.24
    ("Q-Q-5-5-8", "Q-Q-5-5-4"),  # THB-5.25
    ("6-6-4-3-2", "5-5-A-K-Q"),  # THB-5.27
    ("J-J-A-9-3", "J-J-A-8-7"),  # THB-5.28
    ("A-J-9-5-3", "A-10-9-6-4"),  # THB-5.30
    # MP-EX-8 and MP-EX-9 (MP-5.3, MP-5.6)
    ("2-3-4-5-6", "A-2-3-4-5"),
    ("8-8-8-8-K", "8-8-8-8-Q"),
    ("K-K-K-2-2", "Q-Q-Q-A-A"),
    ("A♦ 10♦ 7♦ 5♦ 3♦", "A♣ 10♣ 7♣ 4♣ 3♣"),
    ("Q-Q-Q-9-4", "Q-Q-Q-8-7"),
    ("K-K-7-7-3", "K-K-6-6-A"),
    ("9-9-A-7-4", "9-9-A-7-3"),
]


@pytest.mark.parametrize(("text", "category"), THB_CATEGORIES)
def test_thb_ex_11_categories(text: str, category: Category) -> None:
    assert hand(text).category is category


@pytest.mark.parametrize(("stronger", "weaker"), THB_WINNERS)
def test_thb_ex_11_and_mp_ex_9_comparisons(stronger: str, weaker: str) -> None:
    assert hand(stronger).strength > hand(weaker).strength


def test_mp_ex_8_no_wrap_around_straights() -> None:
    """MP-5.4: K-A-2-3-4, Q-K-A-2-3 and J-Q-K-A-2 are ace-high High Card hands; 10-J-Q-K-A is the top."""
    for text in ("K-A-2-3-4", "Q-K-A-2-3", "J-Q-K-A-2"):
        value = hand(text)
        assert value.category is C.HIGH_CARD
        assert value.best[0] >> 2 == 12
    top = hand("10-J-Q-K-A")
    assert top.category is C.STRAIGHT
    assert category_of(Rule.HOLDEM, top.strength + 1) is C.FLUSH  # nothing above it among straights
    assert hand("A-2-3-4-5").category is C.STRAIGHT


@pytest.mark.parametrize(
    ("player", "dealer", "board", "player_cat", "dealer_cat", "result"),
    [
        # THB-EX-1 .. THB-EX-5, THB-EX-7, THB-EX-9, THB-EX-10(b)
        ("9♣ 8♦", "K♠ 2♥", "7♣ 6♥ 5♠ K♦ 2♣", C.STRAIGHT, C.TWO_PAIR, 1),
        ("Q♠ 6♣", "J♦ 9♦", "Q♥ 6♥ 3♦ 9♣ 2♠", C.TWO_PAIR, C.PAIR, 1),
        ("A♥ K♥", "7♥ 5♣", "Q♣ 7♦ 7♠ 4♣ 2♦", C.PAIR, C.THREE_OF_A_KIND, -1),
        ("2♣ 3♦", "4♥ 5♦", "A♠ K♠ Q♦ J♣ 10♥", C.STRAIGHT, C.STRAIGHT, 0),
        ("A♠ K♦", "A♥ Q♣", "2♣ 4♦ 6♥ 8♠ A♦", C.PAIR, C.PAIR, 1),  # THB-5.31 kicker
        ("A♠ A♥", "A♦ A♣", "K♠ 9♥ 7♦ 4♣ 2♠", C.PAIR, C.PAIR, 0),
        ("A♦ K♦", "3♥ 3♦", "Q♦ J♦ 10♦ 3♣ 3♠", C.ROYAL_FLUSH, C.FOUR_OF_A_KIND, 1),
        ("K♥ 9♥", "Q♠ Q♦", "A♥ 7♥ 2♥ J♣ 4♦", C.FLUSH, C.PAIR, 1),
        # CH-EX-1 .. CH-EX-10, CH-EX-12 .. CH-EX-15 (main game, best 5 of 7)
        ("9♠ 8♥", "J♣ 3♦", "7♦ 6♣ K♠ 2♥ 5♦", C.STRAIGHT, C.HIGH_CARD, 1),
        ("J♠ 9♥", "3♣ 3♦", "2♥ 7♦ K♣ 8♠ 5♠", C.HIGH_CARD, C.PAIR, -1),
        ("10♥ 3♠", "4♠ 4♦", "10♣ 8♥ 2♦ K♠ 6♣", C.PAIR, C.PAIR, 1),
        ("A♥ 7♥", "Q♠ Q♦", "K♥ 9♥ 2♥ 5♣ J♦", C.FLUSH, C.PAIR, 1),
        ("8♣ 8♦", "A♠ K♣", "8♥ K♠ K♦ 3♣ 2♥", C.FULL_HOUSE, C.THREE_OF_A_KIND, 1),
        ("9♣ 9♦", "K♠ K♥", "9♥ 9♠ 4♣ K♦ 2♠", C.FOUR_OF_A_KIND, C.FULL_HOUSE, 1),
        ("8♠ 7♠", "A♥ 10♦", "6♠ 5♠ 4♠ A♦ A♣", C.STRAIGHT_FLUSH, C.THREE_OF_A_KIND, 1),
        ("A♠ K♠", "7♥ 2♦", "Q♠ J♠ 10♠ 4♦ 9♣", C.ROYAL_FLUSH, C.HIGH_CARD, 1),
        ("2♦ 3♥", "4♠ 5♣", "A♣ K♦ Q♥ J♠ 10♣", C.STRAIGHT, C.STRAIGHT, 0),
        ("K♦ Q♣", "7♣ 7♦", "7♠ J♥ 4♦ 2♣ 9♠", C.HIGH_CARD, C.THREE_OF_A_KIND, -1),
        ("A♦ 9♣", "Q♠ Q♥", "A♥ 6♠ 2♦ K♣ 3♥", C.PAIR, C.PAIR, 1),
        ("K♦ K♣", "J♠ 10♦", "7♠ 4♥ 2♣ Q♥ 8♦", C.PAIR, C.HIGH_CARD, 1),
        ("5♠ 5♦", "K♥ Q♣", "3♣ 3♥ 9♠ J♦ 2♣", C.TWO_PAIR, C.PAIR, 1),
        ("A♣ 8♦", "Q♦ J♠", "K♠ 6♥ 3♦ A♥ 10♣", C.PAIR, C.STRAIGHT, -1),
    ],
)
def test_thb_and_ch_showdowns(
    player: str, dealer: str, board: str, player_cat: Category, dealer_cat: Category, result: int
) -> None:
    p, d = holdem(player, board), holdem(dealer, board)
    assert (p.category, d.category) == (player_cat, dealer_cat)
    assert (p.strength > d.strength) - (p.strength < d.strength) == result


@pytest.mark.parametrize(
    ("hole", "flop", "category"),
    [  # CH-4.2 / CH-A3: AA BONUS is judged on the player's two cards plus the Flop only
        ("A♥ 7♥", "K♥ 9♥ 2♥", C.FLUSH),  # CH-EX-4
        ("A♠ K♠", "Q♠ J♠ 10♠", C.ROYAL_FLUSH),  # CH-EX-8
        ("A♦ 9♣", "A♥ 6♠ 2♦", C.PAIR),  # CH-EX-12
        ("K♦ K♣", "7♠ 4♥ 2♣", C.PAIR),  # CH-EX-13 (below Aces)
        ("5♠ 5♦", "3♣ 3♥ 9♠", C.TWO_PAIR),  # CH-EX-14
        ("A♣ 8♦", "K♠ 6♥ 3♦", C.HIGH_CARD),  # CH-EX-15
    ],
)
def test_ch_aa_bonus_five_card_hands(hole: str, flop: str, category: Category) -> None:
    assert holdem(hole, flop).category is category


def test_ch_ex_12_to_14_pair_of_aces_or_better_boundary() -> None:
    aces = holdem("A♦ 9♣", "A♥ 6♠ 2♦").strength
    assert holdem("K♦ K♣", "7♠ 4♥ 2♣").strength < aces < holdem("5♠ 5♦", "3♣ 3♥ 9♠").strength


def test_ch_ex_16_dealer_qualification_boundary() -> None:
    """CH-5.2: the Dealer qualifies with a Pair of 4s or better (best five of seven)."""
    fours = hand("4-4-2-3-6").strength  # the weakest Pair of 4s
    assert hand("3-3-A-K-Q").strength < fours
    assert hand("4-4-A-K-Q").strength >= fours
    assert hand("A-K-Q-9-7").strength < fours
    board_pair = holdem("A♥ 9♣", "4♠ 4♦ K♣ 7♥ 2♠")  # the pair made entirely of community cards
    assert board_pair.category is C.PAIR and board_pair.strength >= fours


def test_nk_ex_7_omaha_needs_two_hole_and_three_board_cards() -> None:
    """NK-1.4: four hearts in the hand and one on the board are no flush."""
    value = evaluate(Rule.OMAHA, cards("A♥ K♥ 7♥ 4♥"), cards("Q♥ 9♣ 8♦ 2♠ 3♣"))
    assert value.category is C.HIGH_CARD
    assert [c >> 2 for c in value.best] == [12, 11, 10, 7, 6]  # A-K-Q-9-8


def test_nk_ex_7_holdem_flush_and_playing_the_board() -> None:
    """NK-1.3: zero, one or two hole cards; a royal board is a chop for everyone."""
    flush = holdem("A♥ K♥", "Q♥ 9♥ 8♥ 2♠ 3♣")
    assert flush.category is C.FLUSH and [c >> 2 for c in flush.best] == [12, 11, 10, 7, 6]
    board = "A♠ K♠ Q♠ J♠ 10♠"
    values = [holdem(h, board) for h in ("2♣ 3♦", "A♥ A♦", "7♣ 7♦")]
    assert {v.category for v in values} == {C.ROYAL_FLUSH}
    assert len({v.strength for v in values}) == 1  # MP-EX-9: chop


# ---- three-card poker (TCP) ----


def three(text: str) -> HandValue:
    return evaluate(Rule.THREE_CARD, cards(text))


@pytest.mark.parametrize(
    ("text", "category"),
    [  # TCP-EX-1
        ("A♥ K♥ Q♥", C.ROYAL_FLUSH),  # Mini Royal Flush
        ("7♠ 8♠ 9♠", C.STRAIGHT_FLUSH),
        ("5♦ 5♣ 5♥", C.THREE_OF_A_KIND),
        ("4♣ 5♦ 6♥", C.STRAIGHT),
        ("A♠ 2♦ 3♣", C.STRAIGHT),  # TCP-4.2 ace low
        ("Q♣ K♦ A♥", C.STRAIGHT),
        ("2♥ 7♥ J♥", C.FLUSH),
        ("K♠ K♦ 4♣", C.PAIR),
        ("A♣ 9♦ 4♠", C.HIGH_CARD),
        ("K♠ A♦ 2♣", C.HIGH_CARD),  # TCP-A4: no wrap-around
    ],
)
def test_tcp_ex_1_categories(text: str, category: Category) -> None:
    assert three(text).category is category


def test_tcp_4_1_order_straight_beats_flush() -> None:
    order = ["A♣ 9♦ 4♠", "K♠ K♦ 4♣", "2♥ 7♥ J♥", "A♠ 2♦ 3♣", "4♣ 5♦ 6♥", "Q♣ K♦ A♥", "5♦ 5♣ 5♥", "7♠ 8♠ 9♠",
             "A♥ K♥ Q♥"]  # fmt: skip
    strengths = [three(t).strength for t in order]
    assert strengths == sorted(strengths) and len(set(strengths)) == len(strengths)
    assert three("A♥ K♥ Q♥").strength == 741  # the top of the three-card scale


@pytest.mark.parametrize(
    ("player", "dealer", "result"),
    [
        ("K♥ 6♣ 2♦", "J♠ 8♦ 3♣", 1),  # TCP-EX-2
        ("10♣ 9♥ 7♦", "J♠ 8♦ 3♣", -1),  # TCP-EX-3
        ("J♥ 8♣ 3♦", "J♠ 8♦ 3♣", 0),  # TCP-EX-4 (TCP-3.8: equal ranks tie)
        ("4♠ 4♥ 9♣", "Q♦ 7♠ 2♣", 1),  # TCP-EX-5
        ("K♣ Q♣ 8♦", "6♠ 6♦ 3♥", -1),  # TCP-EX-6
        ("Q♣ 9♦ 5♠", "Q♠ 9♥ 5♦", 0),  # TCP-EX-7
        ("A♣ 2♦ 3♥", "2♠ 3♠ 4♦", -1),  # TCP-EX-8: A-2-3 is the lowest straight
    ],
)
def test_tcp_ex_2_to_8_comparisons(player: str, dealer: str, result: int) -> None:
    p, d = three(player).strength, three(dealer).strength
    assert (p > d) - (p < d) == result


def test_tcp_ex_11_queen_high_qualifies() -> None:
    """TCP-3.5: Queen-high or better qualifies."""
    queen_high = three("Q♥ 3♠ 2♣").strength  # the weakest Queen-high hand
    assert category_of(Rule.THREE_CARD, queen_high - 1) is C.HIGH_CARD  # the best Jack-high: J-10-8
    assert three("J♥ 10♠ 8♣").strength == queen_high - 1
    assert three("J♥ 10♠ 8♣").strength < queen_high
    assert three("2♣ 2♦ 3♠").strength > queen_high
    assert three("J♥ 7♥ 3♥").strength > queen_high  # a flush ranks above High Card


@pytest.mark.parametrize(
    ("player", "dealer", "category"),
    [  # TCP-EX-9 / TCP-EX-10: 6-Card Bonus = best five of the six cards (TCP-4.3)
        ("A♠ K♠ Q♠", "J♠ 10♠ 3♦", C.ROYAL_FLUSH),
        ("9♥ 8♥ 7♥", "6♥ 5♥ K♣", C.STRAIGHT_FLUSH),
        ("9♥ 9♦ 4♣", "9♠ 9♣ K♥", C.FOUR_OF_A_KIND),
        ("8♣ 5♦ 2♠", "8♥ 8♠ 2♦", C.FULL_HOUSE),
        ("K♥ 4♥ 2♣", "9♥ 7♥ 5♥", C.FLUSH),
        ("5♣ 6♦ 7♥", "8♠ 9♣ 2♦", C.STRAIGHT),
        ("3♣ 3♦ 3♥", "K♠ 7♦ 2♣", C.THREE_OF_A_KIND),
        ("J♣ J♦ 4♠", "7♥ 7♣ 2♦", C.TWO_PAIR),
    ],
)
def test_tcp_ex_10_six_card_bonus(player: str, dealer: str, category: Category) -> None:
    assert evaluate(Rule.HOLDEM, cards(player), cards(dealer)).category is category


def test_nk_ex_15_peeked_turn_makes_the_heart_flush() -> None:
    """NK-EX-15: hole A♥ 7♥, flop K♥ 9♥ 2♣, turn 5♥ -> the A-K-9-7-5 heart Flush (6 cards)."""
    value = holdem("A♥ 7♥", "K♥ 9♥ 2♣ 5♥")
    assert value.category is C.FLUSH
    assert value.best == tuple(cards("A♥ K♥ 9♥ 7♥ 5♥"))
    assert value.description == "Flush, Ace-King-Nine-Seven-Five"
