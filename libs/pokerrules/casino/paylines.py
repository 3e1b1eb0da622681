"""Which paytable row a hand falls on (one row only, the highest: THB-6.5, TCP-5.3). No odds here: those are
configuration (`config.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from handeval import Category

from pokerrules.casino.cards import ACE, JACK, KING, QUEEN, rank_of, suit_of
from pokerrules.casino.ranking import Ranked, is_mini_royal, is_pair_of, pair_rank


def thb_bonus_line(player: Sequence[int], dealer: Sequence[int]) -> str | None:
    """THB-6.2 on the two hole cards; None when no row matches (THB-6.4)."""
    hi, lo = sorted((rank_of(player[0]), rank_of(player[1])), reverse=True)
    suited = suit_of(player[0]) == suit_of(player[1])
    if hi == lo:
        if hi == ACE:
            # THB-A5: the 1000 to 1 row needs the Dealer's hole cards to be aces too; it replaces the 30 to 1.
            return "AA_PLAYER_AND_DEALER" if is_pair_of(dealer, ACE) else "AA"
        return "KK_QQ_JJ" if hi >= JACK else "PAIR_2_TO_10"
    if hi != ACE:
        return None
    if lo == KING:
        return "AK_SUITED" if suited else "AK_OFFSUIT"
    if lo in (QUEEN, JACK):
        return "AQ_AJ_SUITED" if suited else "AQ_AJ_OFFSUIT"
    return None


_CH_ANTE_BY_CATEGORY = {
    Category.ROYAL_FLUSH: "ROYAL_FLUSH",
    Category.STRAIGHT_FLUSH: "STRAIGHT_FLUSH",
    Category.FOUR_OF_A_KIND: "FOUR_OF_A_KIND",
    Category.FULL_HOUSE: "FULL_HOUSE",
    Category.FLUSH: "FLUSH",
}


def ch_ante_line(player_hand: Ranked) -> str:
    """CH-7.1 / CH-7.3: every hand from High Card to Straight is "Straight or less"."""
    return _CH_ANTE_BY_CATEGORY.get(player_hand.category, "STRAIGHT_OR_LESS")


def ch_aa_bonus_line(first_five: Ranked) -> str | None:
    """CH-4.2 / CH-A3: on the player's 2 cards + Flop; a pair below aces loses, any better category pays."""
    if first_five.category >= Category.FLUSH:
        return "FLUSH_OR_HIGHER"
    if first_five.category >= Category.TWO_PAIR or pair_rank(first_five) == ACE:
        return "ACES_TO_STRAIGHT"
    return None


def ch_dealer_qualifies(dealer_hand: Ranked, qualifying_pair: int) -> bool:
    """CH-5.2: a pair of 4s or better (the best five of seven, CH-EX-16)."""
    if dealer_hand.category >= Category.TWO_PAIR:
        return True
    rank = pair_rank(dealer_hand)
    return rank is not None and rank >= qualifying_pair


def tcp_three_card_line(cards: Sequence[int], hand: Ranked) -> str | None:
    """TCP-5.1 rows for the player's three cards (also the Progressive's rows); None for High Card."""
    if is_mini_royal(cards):
        return "MINI_ROYAL_FLUSH"  # TCP-5.3 / TCP-A5: paid on the Royal row only
    return {
        Category.ROYAL_FLUSH: "MINI_ROYAL_FLUSH",
        Category.STRAIGHT_FLUSH: "STRAIGHT_FLUSH",
        Category.THREE_OF_A_KIND: "THREE_OF_A_KIND",
        Category.STRAIGHT: "STRAIGHT",
        Category.FLUSH: "FLUSH",
        Category.PAIR: "PAIR",
    }.get(hand.category)


def tcp_dealer_qualifies(cards: Sequence[int], hand: Ranked) -> bool:
    """TCP-3.5: Queen-high or better (any pair, flush, straight... or a high card of Q, K or A)."""
    return hand.category > Category.HIGH_CARD or max(rank_of(c) for c in cards) >= QUEEN


def tcp_six_card_line(best: Ranked) -> str | None:
    """TCP-5.2 / TCP-5.4: Three of a Kind or better on the best five of six."""
    if best.category < Category.THREE_OF_A_KIND:
        return None
    return best.category.name


def thb_ante_wins(player_hand: Ranked) -> bool:
    """THB-4.3: the Ante pays only on a Straight or better (and only on a player win, THB-A3)."""
    return player_hand.category >= Category.STRAIGHT
