"""Casino Hold'em and Texas Hold'em Bonus main games under their optimal strategies, exactly.

One pass per Flop, up to suit relabelling (1,755 Flops stand for all 22,100). For a Flop F the 49 other cards
give 1,176 two-card sets, which serve both as the Turn/River pair and as a hole-card holding. For each of the
1,176 Turn/River pairs and each of the 1,081 holdings disjoint from it, the C evaluator gives the 7-card
strength (1.27 million hands in one batch call). Against one player holding H on one board the Dealer holds
any of the 990 holdings disjoint from H: its counts below, equal to and above H's strength come from the
board's sorted strengths minus, by inclusion–exclusion, the holdings that share a card with H. Summing over
the boards gives, exactly (integers), for every (holding, Flop):

- Casino Hold'em: the expected net of Call against Fold (CH-5, CH-7.1; the Dealer qualifies from a pair of 4s,
  a strength threshold);
- Texas Hold'em Bonus: per Turn card the win/loss counts over River and Dealer, hence the River bet (bet when
  wins outnumber losses), the Turn bet (same test summed over Turn cards) and the value of the Flop node; the
  pre-flop Flop bet compares the mean over all Flops with the Fold's −1 Ante (THB-4).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb
from typing import Any

import numpy as np
import numpy.typing as npt
from handeval import Category

from pokerrules.casino.gamemath.enumeration import IntArray

SUIT_PERMUTATIONS = tuple(itertools.permutations(range(4)))
PAIRS49 = tuple(itertools.combinations(range(49), 2))  # positions among the 49 non-Flop cards
N_PAIRS = len(PAIRS49)  # 1,176
HOLDINGS_PER_BOARD = comb(47, 2)  # 1,081
DEALER_HOLDINGS = comb(45, 2)  # 990
CH_ANTE_ODDS = {
    Category.ROYAL_FLUSH: 100,
    Category.STRAIGHT_FLUSH: 20,
    Category.FOUR_OF_A_KIND: 10,
    Category.FULL_HOUSE: 3,
    Category.FLUSH: 2,
}


def _permute(card: int, perm: tuple[int, ...]) -> int:
    return (card & ~3) | perm[card & 3]


@dataclass(frozen=True)
class FlopClass:
    cards: tuple[int, int, int]  # the representative
    images: tuple[tuple[tuple[int, int, int], tuple[int, ...]], ...]  # (image Flop, σ with image = σ(rep))


@cache
def flop_classes() -> tuple[FlopClass, ...]:
    """The 22,100 Flops grouped into classes under suit relabelling, each with its images."""
    classes: list[FlopClass] = []
    for a, b, c in itertools.combinations(range(52), 3):
        images: dict[tuple[int, int, int], tuple[int, ...]] = {}
        for perm in SUIT_PERMUTATIONS:
            x, y, z = sorted(_permute(card, perm) for card in (a, b, c))
            images.setdefault((x, y, z), perm)
        if min(images) == (a, b, c):
            # This Flop is its class's representative, and each σ found maps it to that image.
            classes.append(FlopClass((a, b, c), tuple(sorted(images.items()))))
    out = tuple(classes)
    assert sum(len(c.images) for c in out) == comb(52, 3)
    return out


@dataclass(frozen=True)
class _Layout:
    """Flop-independent index arrays over the 49 non-Flop positions, for the pairs (board, holding) of
    disjoint two-card sets. They come board by board (1,081 holdings each, the rows), holdings in pair order;
    the sums per holding take them holding by holding (1,081 boards each), boards in pair order."""

    t: IntArray  # per pair: the board's positions
    r: IntArray
    a: IntArray  # the holding's positions
    c: IntArray
    # Group (board, position p): the 46 holdings of that board containing p, one group after the other:
    group_members: IntArray  # per group slot: its pair
    slot_of_a: IntArray  # per pair: its slot in the group of its holding's card a
    slot_of_c: IntArray  # ... and in the group of its card c
    group_of_a: IntArray  # per pair: the group of its holding's card a (slot_of_a // GROUP_SIZE)
    group_of_c: IntArray
    by_holding: IntArray  # the pairs holding by holding
    # Per (holding, Turn position not in the holding), the 46 pairs (holding by holding) whose board contains
    # the Turn:
    turn_members: IntArray


GROUP_SIZE = 46  # the holdings containing a given live card: with each of the 46 other live cards


@cache
def _layout() -> _Layout:
    boards, holdings = [], []
    for b, (t, r) in enumerate(PAIRS49):
        for h, (a, c) in enumerate(PAIRS49):
            if a not in (t, r) and c not in (t, r):
                boards.append(b)
                holdings.append(h)
    board = np.array(boards, dtype=np.int64)
    holding = np.array(holdings, dtype=np.int64)
    pairs = np.array(PAIRS49, dtype=np.int64)
    t, r = pairs[board, 0], pairs[board, 1]
    a, c = pairs[holding, 0], pairs[holding, 1]
    n = len(board)
    # Each pair sits in two groups: (board, a) as item i, (board, c) as item n + i.
    order = np.argsort(np.concatenate([board * 49 + a, board * 49 + c]), kind="stable")
    slot = np.empty(2 * n, dtype=np.int64)
    slot[order] = np.arange(2 * n, dtype=np.int64)
    slot_of_a, slot_of_c = slot[:n], slot[n:]
    by_holding = np.argsort(holding, kind="stable")
    h_h, t_h, r_h = holding[by_holding], t[by_holding], r[by_holding]
    # Each pair counts for two Turns: its board's t (River r) and its r (River t).
    turn_members = np.argsort(np.concatenate([h_h * 49 + t_h, h_h * 49 + r_h]), kind="stable") % n
    return _Layout(
        t,
        r,
        a,
        c,
        order % n,
        slot_of_a,
        slot_of_c,
        slot_of_a // GROUP_SIZE,
        slot_of_c // GROUP_SIZE,
        by_holding,
        turn_members,
    )


_STRENGTH_BITS = 13  # strengths are below 2^13 (7,462 classes)
_RANK_BITS = 16  # `_ranks` packs "smaller" below and "smaller or equal" above this many bits


def _ranks(values: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """Per element of a (rows, size) array of strengths: how many elements of its row are smaller (less),
    and how many are smaller or equal (leq); flat, in the array's order, packed as less + leq << 16.
    Packed values add and subtract field by field as long as each result's fields are in range."""
    rows, size = values.shape
    column_bits = size.bit_length()
    # One sort per row (no argsort, no take/put_along_axis): the column rides below the strength in an int32
    # key, so the sorted keys say where each element goes back to; ranks follow from the runs of equal
    # strengths.
    keys = (values << column_bits) | np.arange(size, dtype=np.int32)
    keys.sort(axis=1)
    new_run = np.empty((rows, size), dtype=bool)
    new_run[:, 0] = True
    np.not_equal(keys[:, 1:] >> column_bits, keys[:, :-1] >> column_bits, out=new_run[:, 1:])
    starts = np.flatnonzero(new_run)
    lengths = np.diff(starts, append=rows * size).astype(np.int32)
    less = (starts % size).astype(np.int32)
    ranks_sorted = np.repeat(less + ((less + lengths) << _RANK_BITS), lengths)
    target = (keys & np.int32((1 << column_bits) - 1)).astype(np.intp)
    target += (np.arange(rows, dtype=np.intp) * size)[:, None]
    ranks = np.empty(rows * size, dtype=np.int32)
    ranks[target.ravel()] = ranks_sorted
    return ranks


@dataclass(frozen=True)
class FlopResult:
    """Per holding (pair index over the Flop's 49 other cards), integers."""

    ch_call: IntArray  # Σ net of Call over Turn/River and Dealer (denominator 1081 × 990)
    ch_counts: IntArray  # (1176, 4): Dealer not qualified, player wins, tie, Dealer wins (when calling)
    thb_value: IntArray  # optimal value of the Flop node, numerator over 47 × 46 × 990
    thb_turn_bet: npt.NDArray[np.bool_]
    thb_river_bets: IntArray  # how many of the 47 Turn cards get a River bet
    thb_river_sign: npt.NDArray[np.bool_]  # (1176, 49): River bet for this Turn card position


@cache
def _valid_turns() -> npt.NDArray[np.bool_]:
    """(holding, position): the position is not one of the holding's cards."""
    valid = np.ones((N_PAIRS, 49), dtype=bool)
    pairs = np.array(PAIRS49)
    valid[np.arange(N_PAIRS), pairs[:, 0]] = False
    valid[np.arange(N_PAIRS), pairs[:, 1]] = False
    return valid


def _qualifying_strength(h: Any) -> int:
    # The weakest pair of fours (4-4-5-3-2): every stronger hand qualifies (CH-5.2), every weaker does not.
    return int(h.evaluate(h.Rule.HOLDEM, [8, 9], [14, 7, 0]).strength)


@cache
def _ante_odds() -> IntArray:
    """The Ante's odds (CH-7.1) per hand category: 1 to 1 below a Flush."""
    odds = np.ones(max(Category) + 1, dtype=np.int64)
    for cat, o in CH_ANTE_ODDS.items():
        odds[cat] = o
    return odds


def evaluate_flop(flop: tuple[int, int, int]) -> FlopResult:
    import handeval

    h: Any = handeval
    lay = _layout()
    rest = np.array([c for c in range(52) if c not in flop], dtype=np.uint8)
    packed = np.empty((len(lay.t), 7), dtype=np.uint8)
    packed[:, 0], packed[:, 1] = rest[lay.a], rest[lay.c]
    packed[:, 2], packed[:, 3], packed[:, 4] = flop
    packed[:, 5], packed[:, 6] = rest[lay.t], rest[lay.r]
    result = h.evaluate_batch(h.Rule.HOLDEM, 7, packed.tobytes())
    strength = np.frombuffer(memoryview(result.strengths).cast("B"), dtype=np.uint32).astype(np.int16)
    category = np.frombuffer(memoryview(result.categories).cast("B"), dtype=np.uint8).astype(np.int64)
    q0 = _qualifying_strength(h)

    s = strength.astype(np.int32)
    if int(s.max()) >> _STRENGTH_BITS:
        raise ValueError("a strength above 2^13 does not fit the sort keys of _ranks")
    row_values = s.reshape(N_PAIRS, HOLDINGS_PER_BOARD)
    row_ranks = _ranks(row_values)
    group_values = s[lay.group_members].reshape(-1, GROUP_SIZE)
    group_ranks = _ranks(group_values)
    nq_row = (row_values < q0).sum(axis=1)
    nq_group = (group_values < q0).sum(axis=1)

    # Dealer holdings disjoint from the player's (inclusion–exclusion; the player's own holding is the only
    # one sharing both cards, counted in both groups). Both fields of the result are in range.
    ranks_d = row_ranks - group_ranks[lay.slot_of_a] - group_ranks[lay.slot_of_c] + (1 << _RANK_BITS)
    nq_d = np.repeat(nq_row, HOLDINGS_PER_BOARD) - nq_group[lay.group_of_a] - nq_group[lay.group_of_c]
    nq_d += s < q0
    # What the sums need, holding by holding (one gather): fields of one int64, each in range.
    word = ranks_d.astype(np.int64)  # less (16 bits), leq (16 bits)
    word |= nq_d.astype(np.int64) << 32  # at most 990: 16 bits
    word |= category << 48  # up to ROYAL_FLUSH: 8 bits
    word |= (s >= q0).astype(np.int64) << 56
    word = word[lay.by_holding]
    less_d = word & 0xFFFF
    leq_d = (word >> 16) & 0xFFFF
    nq_d = (word >> 32) & 0xFFFF
    category = (word >> 48) & 0xFF
    qualified_player = (word >> 56).astype(bool)

    # Casino Hold'em (CH-5.3 to CH-5.6, CH-7.1).
    odds = _ante_odds()[category]
    win_q = np.where(qualified_player, less_d - nq_d, 0)
    tie_q = np.where(qualified_player, leq_d - less_d, 0)
    # Per holding, sums over its 1,081 boards (contiguous); the Dealer wins the rest of the 990 per board.
    nq_sum, win_sum, tie_sum, paid_sum = (
        x.reshape(N_PAIRS, HOLDINGS_PER_BOARD).sum(axis=1, dtype=np.int64)
        for x in (nq_d, win_q, tie_q, (nq_d + win_q) * odds)
    )
    lose_sum = HOLDINGS_PER_BOARD * DEALER_HOLDINGS - nq_sum - win_sum - tie_sum
    ch_call = paid_sum + 2 * win_sum - 3 * lose_sum  # Σ (not qualified + win) × odds + 2 win − 3 lose
    ch_counts = np.stack([nq_sum, win_sum, tie_sum, lose_sum], axis=1)

    # Texas Hold'em Bonus (THB-4.2 to THB-4.5): per (holding, Turn card) sums over the 46 River cards, each
    # count at most 990: below 2^16, so the three counts add as 16-bit fields of one int64.
    wins = less_d.astype(np.int64)
    losses = DEALER_HOLDINGS - leq_d
    straight_wins = np.where(category >= Category.STRAIGHT, wins, 0)
    fields = wins + (losses << 16) + (straight_wins << 32)
    per_turn = np.zeros(N_PAIRS * 49, dtype=np.int64)
    per_turn[_valid_turns().ravel()] = fields[lay.turn_members].reshape(-1, 46).sum(axis=1)
    w_t, l_t, s_t = ((per_turn >> shift) & 0xFFFF for shift in (0, 16, 32))
    w_t, l_t, s_t = (x.reshape(N_PAIRS, 49) for x in (w_t, l_t, s_t))
    river_bet = w_t > l_t  # the River bet (1 × Ante) pays 1 to 1: bet when wins outnumber losses
    base = s_t + 2 * w_t - 3 * l_t + np.maximum(w_t - l_t, 0)  # Flop bet made; Turn checked; River optimal
    edge_of_turn_bet = (w_t - l_t).sum(axis=1)
    turn_bet = edge_of_turn_bet > 0
    thb_value = base.sum(axis=1) + np.maximum(edge_of_turn_bet, 0)
    valid_turn = _valid_turns()
    river_bets = (river_bet & valid_turn).sum(axis=1)
    return FlopResult(ch_call, ch_counts, thb_value, turn_bet, river_bets, river_bet & valid_turn)


@dataclass(frozen=True)
class _ClassSummary:
    ch_call: IntArray
    ch_counts: IntArray
    made_category: IntArray  # the player's 5-card category on the Flop, per holding
    aa_return: IntArray  # AA Bonus return per unit (odds + 1, or 0) of the player's 2 cards + Flop
    thb_value: IntArray
    thb_turn_bet: npt.NDArray[np.bool_]
    thb_river_bets: IntArray
    thb_river_sign: npt.NDArray[np.uint8]  # packed bits of (1176, 49)


def _summarise(index: int) -> _ClassSummary:
    import handeval

    h: Any = handeval
    flop = flop_classes()[index].cards
    result = evaluate_flop(flop)
    rest = np.array([c for c in range(52) if c not in flop], dtype=np.uint8)
    pairs = np.array(PAIRS49)
    five = np.empty((N_PAIRS, 5), dtype=np.uint8)
    five[:, 0], five[:, 1] = rest[pairs[:, 0]], rest[pairs[:, 1]]
    five[:, 2:] = np.array(flop, dtype=np.uint8)
    made = h.evaluate_batch(h.Rule.HOLDEM, 5, five.tobytes())
    category = np.frombuffer(memoryview(made.categories).cast("B"), dtype=np.uint8).astype(np.int64)
    aces = ((five >> 2) == 12).sum(axis=1)
    # CH-7.2 / CH-A3 with the default paytable: 25 to 1 Flush or higher, 7 to 1 Aces up to a Straight.
    aces_to_straight = (category >= Category.TWO_PAIR) | ((category == Category.PAIR) & (aces >= 2))
    aa_return = np.where(category >= Category.FLUSH, 26, np.where(aces_to_straight, 8, 0)).astype(np.int64)
    return _ClassSummary(
        result.ch_call,
        result.ch_counts,
        category,
        aa_return,
        result.thb_value,
        result.thb_turn_bet,
        result.thb_river_bets,
        np.packbits(result.thb_river_sign),
    )


HOLDINGS52 = tuple(itertools.combinations(range(52), 2))
CH_DENOMINATOR = HOLDINGS_PER_BOARD * DEALER_HOLDINGS  # per (holding, Flop): Turn/River × Dealer
THB_DENOMINATOR = 47 * 46 * DEALER_HOLDINGS  # per (holding, Flop): Turn × River × Dealer


@dataclass
class HoldemMain:
    """Exact figures and the derived strategies of both Hold'em main games."""

    ch_net: Fraction  # per Ante, Ante + Call, optimal strategy
    ch_call_rate: Fraction
    ch_outcomes: dict[str, Fraction]
    ch_call_by_category: dict[str, Fraction]
    ch_decisions: npt.NDArray[np.bool_]  # (class, holding pair over 49): Call?
    aa_rtp_when_folds_forfeit: Fraction  # the AA Bonus with the main game's optimal Call/Fold (CH-4.3)
    thb_net: Fraction  # per Ante, Ante + Flop + Turn + River, optimal strategy
    thb_flop_rate: Fraction
    thb_turn_rate: Fraction
    thb_river_rate: Fraction
    thb_preflop_play: npt.NDArray[np.bool_]  # per 52-card holding (HOLDINGS52 order)
    thb_turn_bets: npt.NDArray[np.bool_]  # (class, holding pair)
    thb_river_signs: npt.NDArray[np.uint8]  # (class, packed (1176, 49))
    flop_lookup: dict[tuple[int, int, int], tuple[int, tuple[int, ...]]]  # Flop -> (class, σ: image = σ(rep))

    @property
    def ch_edge_per_total_wagered(self) -> Fraction:
        return -self.ch_net / (1 + 2 * self.ch_call_rate)

    @property
    def thb_edge_per_total_wagered(self) -> Fraction:
        return -self.thb_net / (1 + 2 * self.thb_flop_rate + self.thb_turn_rate + self.thb_river_rate)


@cache
def _pair_index49() -> IntArray:
    """(x, y) -> the pair index of {x, y} among the 49 positions (-1 on the diagonal)."""
    pair_index = np.full((49, 49), -1, dtype=np.int64)
    for i, (x, y) in enumerate(PAIRS49):
        pair_index[x, y] = pair_index[y, x] = i
    return pair_index


@cache
def _holdings52() -> IntArray:
    return np.array(HOLDINGS52, dtype=np.int64)


def _images_of_holdings(flop: tuple[int, int, int], perm: tuple[int, ...]) -> tuple[IntArray, IntArray]:
    """For every 52-card holding H' and the image Flop σ(flop): the pair index over `flop`'s 49 other cards of
    σ⁻¹(H'), and whether H' misses the image Flop."""
    inverse = [0, 0, 0, 0]
    for s, t in enumerate(perm):
        inverse[t] = s
    position = np.full(52, -1, dtype=np.int64)
    position[[c for c in range(52) if c not in flop]] = np.arange(49)
    pair_index, holdings = _pair_index49(), _holdings52()
    mapped = (holdings & ~3) | np.array(inverse)[holdings & 3]
    p1, p2 = position[mapped[:, 0]], position[mapped[:, 1]]
    valid = (p1 >= 0) & (p2 >= 0)
    return np.where(valid, pair_index[np.maximum(p1, 0), np.maximum(p2, 0)], 0), valid


def _keep_freed_memory() -> None:
    """Each Flop allocates and frees the same ~100 MB of arrays. glibc returns blocks that large to the
    system at once, and mapping them again cost as much time as the work; keep them for reuse instead."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 1 << 30)
        libc.mallopt(m_trim_threshold, 1 << 30)
    except OSError:  # not glibc: the defaults only cost time
        pass


@cache
def holdem_main(processes: int = 2) -> HoldemMain:
    import multiprocessing

    _keep_freed_memory()  # before the fork: the workers inherit it
    classes = flop_classes()
    _layout()  # built once here, inherited by the forked workers
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        summaries = pool.map(_summarise, range(len(classes)), chunksize=8)
    ch_sum = 0
    aa_called = 0
    calls = 0
    outcome = np.zeros(4, dtype=object)
    folds = 0
    by_category: dict[int, list[int]] = {}
    pre_sum = np.zeros(len(HOLDINGS52), dtype=np.int64)
    pre_turn = np.zeros(len(HOLDINGS52), dtype=np.int64)
    pre_river = np.zeros(len(HOLDINGS52), dtype=np.int64)
    ch_decisions = np.zeros((len(classes), N_PAIRS), dtype=bool)
    turn_bets = np.zeros((len(classes), N_PAIRS), dtype=bool)
    river_signs = np.zeros((len(classes), (N_PAIRS * 49 + 7) // 8), dtype=np.uint8)
    lookup: dict[tuple[int, int, int], tuple[int, tuple[int, ...]]] = {}
    for k, (cls, summary) in enumerate(zip(classes, summaries, strict=True)):
        weight = len(cls.images)
        call = summary.ch_call > -CH_DENOMINATOR  # CH-3.4: Call when it beats the Fold's −1 Ante
        ch_decisions[k] = call
        ch_sum += weight * int(np.where(call, summary.ch_call, -CH_DENOMINATOR).sum())
        calls += weight * int(call.sum())
        aa_called += weight * int(summary.aa_return[call].sum())
        folds += weight * int((~call).sum())
        outcome += weight * summary.ch_counts[call].sum(axis=0).astype(object)
        for category in np.unique(summary.made_category):
            mask = summary.made_category == category
            entry = by_category.setdefault(int(category), [0, 0])
            entry[0] += weight * int((call & mask).sum())
            entry[1] += weight * int(mask.sum())
        turn_bets[k] = summary.thb_turn_bet
        river_signs[k] = summary.thb_river_sign
        for image, perm in cls.images:
            lookup[image] = (k, perm)
            index, valid = _images_of_holdings(cls.cards, perm)
            pre_sum[valid] += summary.thb_value[index[valid]]
            pre_turn[valid] += summary.thb_turn_bet[index[valid]]
            pre_river[valid] += summary.thb_river_bets[index[valid]]
    pairs_total = comb(52, 3) * N_PAIRS
    flops_per_holding = comb(50, 3)
    play = pre_sum > -flops_per_holding * THB_DENOMINATOR  # THB-3.3: the Flop bet when it beats the Fold
    thb_total = int(np.where(play, pre_sum, -flops_per_holding * THB_DENOMINATOR).sum())
    names = ("DEALER_NOT_QUALIFIED", "PLAYER_WINS", "TIE", "DEALER_WINS")
    denominator = pairs_total * CH_DENOMINATOR
    outcomes = {name: Fraction(int(outcome[i]), denominator) for i, name in enumerate(names)}
    outcomes = {"FOLD": Fraction(folds * CH_DENOMINATOR, denominator), **outcomes}
    return HoldemMain(
        ch_net=Fraction(ch_sum, denominator),
        ch_call_rate=Fraction(calls, pairs_total),
        ch_outcomes=outcomes,
        ch_call_by_category={Category(c).name: Fraction(v[0], v[1]) for c, v in sorted(by_category.items())},
        ch_decisions=ch_decisions,
        aa_rtp_when_folds_forfeit=Fraction(aa_called, pairs_total),
        thb_net=Fraction(thb_total, len(HOLDINGS52) * flops_per_holding * THB_DENOMINATOR),
        thb_flop_rate=Fraction(int(play.sum()), len(HOLDINGS52)),
        thb_turn_rate=Fraction(int(pre_turn[play].sum()), len(HOLDINGS52) * flops_per_holding),
        thb_river_rate=Fraction(int(pre_river[play].sum()), len(HOLDINGS52) * flops_per_holding * 47),
        thb_preflop_play=play,
        thb_turn_bets=turn_bets,
        thb_river_signs=river_signs,
        flop_lookup=lookup,
    )


class DerivedStrategies:
    """The derived optimal decisions as engine strategies (for the Monte Carlo check through `apply`)."""

    def __init__(self, result: HoldemMain) -> None:
        self.result = result
        self.classes = flop_classes()
        self.holding_index = {pair: i for i, pair in enumerate(HOLDINGS52)}
        self.pair_index = {pair: i for i, pair in enumerate(PAIRS49)}

    def _to_representative(self, flop: tuple[int, ...], cards: tuple[int, ...]) -> tuple[int, list[int]]:
        """The Flop's class, and `cards` relabelled as seen from the class representative (positions among
        the representative's 49 other cards)."""
        k, perm = self.result.flop_lookup[tuple(sorted(flop))]  # type: ignore[index]
        inverse = [0, 0, 0, 0]
        for s, t in enumerate(perm):
            inverse[t] = s
        rest = [c for c in range(52) if c not in self.classes[k].cards]
        return k, [rest.index((c & ~3) | inverse[c & 3]) for c in cards]

    def _pair(self, positions: list[int]) -> int:
        a, b = sorted(positions)
        return self.pair_index[(a, b)]

    def casino_holdem(self, state: Any, seat: int) -> Any:
        from pokerrules.casino.model import Decision

        k, positions = self._to_representative(state.board[:3], state.seat(seat).cards)
        return Decision.CALL if self.result.ch_decisions[k, self._pair(positions)] else Decision.FOLD

    def texas_holdem_bonus(self, state: Any, seat: int) -> Any:
        from pokerrules.casino.model import Decision, Phase

        hole = tuple(sorted(state.seat(seat).cards))
        if state.phase == Phase.PRE_FLOP:
            play = self.result.thb_preflop_play[self.holding_index[hole]]
            return Decision.FLOP if play else Decision.FOLD
        k, positions = self._to_representative(state.board[:3], (*hole, *state.board[3:4]))
        pair = self._pair(positions[:2])
        if state.phase == Phase.FLOP:
            return Decision.BET if self.result.thb_turn_bets[k, pair] else Decision.CHECK
        bit = pair * 49 + positions[2]
        river = (self.result.thb_river_signs[k, bit >> 3] >> (7 - (bit & 7))) & 1
        return Decision.BET if river else Decision.CHECK


def write_strategies(result: HoldemMain, directory: str) -> list[str]:
    """The derived decisions for every hand: Casino Hold'em Call/Fold for every (hole cards, Flop) class and
    Texas Hold'em Bonus's pre-flop decision and Turn bet for every (hole cards, Flop) class, as CSV."""
    import csv
    import os

    from pokerrules.casino.cards import cards_text

    os.makedirs(directory, exist_ok=True)
    ch_path = os.path.join(directory, "casino_holdem_call.csv")
    thb_flop_path = os.path.join(directory, "texas_holdem_bonus_turn_bet.csv")
    thb_pre_path = os.path.join(directory, "texas_holdem_bonus_preflop.csv")
    classes = flop_classes()
    with open(ch_path, "w", newline="") as ch, open(thb_flop_path, "w", newline="") as thb:
        ch_out, thb_out = csv.writer(ch), csv.writer(thb)
        ch_out.writerow(["flop_class", "flops_in_class", "hole_cards", "decision"])
        thb_out.writerow(["flop_class", "flops_in_class", "hole_cards", "turn_bet"])
        for k, cls in enumerate(classes):
            rest = [c for c in range(52) if c not in cls.cards]
            flop = cards_text(cls.cards)
            for pair, (a, b) in enumerate(PAIRS49):
                hole = cards_text((rest[a], rest[b]))
                ch_out.writerow(
                    [flop, len(cls.images), hole, "CALL" if result.ch_decisions[k, pair] else "FOLD"]
                )
                thb_out.writerow(
                    [flop, len(cls.images), hole, "BET" if result.thb_turn_bets[k, pair] else "CHECK"]
                )
    with open(thb_pre_path, "w", newline="") as pre:
        pre_out = csv.writer(pre)
        pre_out.writerow(["hole_cards", "decision"])
        for holding, play in zip(HOLDINGS52, result.thb_preflop_play, strict=True):
            pre_out.writerow([cards_text(holding), "FLOP" if play else "FOLD"])
    return [ch_path, thb_flop_path, thb_pre_path]
