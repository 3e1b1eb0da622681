"""Three Card Poker (TCP-*): Ante/Play, Pair Plus, 6-Card Bonus, Progressive; the P/D qualifying with
Queen-high; two alternating deck sets; several hands per player; the Action Button."""

from __future__ import annotations

from pokerrules.casino.cards import ACE, rank_of
from pokerrules.casino.config import GameConfig, TcpAnteRule, TcpConfig
from pokerrules.casino.model import (
    BetKind,
    BetResult,
    Decision,
    Event,
    Outcome,
    Phase,
    SeatState,
    SeatStatus,
    Settlement,
    evolve,
)
from pokerrules.casino.paylines import tcp_dealer_qualifies, tcp_six_card_line, tcp_three_card_line
from pokerrules.casino.ranking import HandRanker
from pokerrules.casino.results import by_paytable, compare, hand_result, lose, push, void, win
from pokerrules.casino.rules import (
    DecisionSpec,
    hole_cards_event,
    in_hand,
    new_street,
    phase_event,
    take,
    with_bets,
)
from pokerrules.casino.state import RoundState


class TcpRules:
    placeable: frozenset[BetKind] = frozenset(
        {BetKind.ANTE, BetKind.PAIR_PLUS, BetKind.SIX_CARD_BONUS, BetKind.PROGRESSIVE}
    )
    positions_per_player: int | None = None  # TCP-6.2: a player may bet on any available seat
    decisions: tuple[DecisionSpec, ...] = (
        # The document is silent on a missing decision: FOLD, the choice that risks no more money.
        DecisionSpec(Phase.DECISION, Decision.FOLD, None, 0, automatic=True, rule="TCP-3.1, TCP-3.2"),
        DecisionSpec(
            Phase.DECISION, Decision.PLAY, BetKind.PLAY, 1, automatic=False, rule="TCP-2.2, TCP-3.3"
        ),
    )

    def progressive_offered(self, config: GameConfig) -> bool:
        return isinstance(config, TcpConfig) and config.progressive_offered

    def cards_needed(self, hands: int) -> int:
        return 3 * hands + 3  # TCP-1.3

    def cards_still_needed(self, state: RoundState) -> int:
        return 0

    def deal(self, state: RoundState) -> tuple[RoundState, list[Event]]:
        """Three cards to each hand, clockwise from the last Action Button's seat (TCP-A6), then the P/D."""
        start = state.deal_start_seat
        events: list[Event] = []
        # Clockwise from `start`: seats start..N, then 1..start-1.
        for seat in sorted(in_hand(state), key=lambda s: (s.seat < start, s.seat)):
            cards, state = take(state, 3)
            dealt = evolve(seat, cards=cards)
            state = state.with_seat(dealt)
            events.append(hole_cards_event(dealt))
        dealer, state = take(state, 3)
        state = new_street(evolve(state, dealer_cards=dealer), Phase.DECISION)
        return state, [*events, Event("DEALER_CARDS_DEALT", {"count": 3}), phase_event(Phase.DECISION)]

    def advance(self, state: RoundState, ranker: HandRanker) -> tuple[RoundState, list[Event]]:
        # TCP-3.4: once every hand is set the P/D hand is turned over (also when all folded: the 6-Card
        # Bonus stays in action, TCP-3.2).
        config = _config(state)
        dealer = ranker.three_card(state.dealer_cards)
        button = action_button_seat(state.dealer_cards[-1], config.seats)
        events = [
            Event(
                "DEALER_REVEALED",
                {
                    "cards": list(state.dealer_cards),
                    "hand": dealer.category.name,
                    "qualifies": tcp_dealer_qualifies(state.dealer_cards, dealer),
                },
            ),
        ]
        for seat in in_hand(state):
            hand = ranker.three_card(seat.cards)
            events.append(
                Event(
                    "HAND_RESULT",
                    {
                        "seat": seat.seat,
                        "hand": hand.category.name,
                        "result": str(hand_result(hand.strength, dealer.strength)),
                    },
                    seat=seat.seat,
                )
            )
        events.append(Event("ACTION_BUTTON", {"seat": button}))
        state = evolve(state, dealer_revealed=True, action_button=button)
        return evolve(state, phase=Phase.SETTLED, settlement=settle(state, ranker)), events

    def void(self, state: RoundState) -> Settlement:
        # Silent in the document: as CH-11.2, every bet of a voided round is returned; the pool is owed
        # nothing more (no stake was kept), so the carry passes on unchanged.
        results = tuple(void(seat, bet) for seat in with_bets(state) for bet in seat.bets)
        return Settlement(results, pool_carry=state.progressive_carry)


def _config(state: RoundState) -> TcpConfig:
    assert isinstance(state.config, TcpConfig)
    return state.config


def card_value(card: int) -> int:
    """TCP-7.2: Ace 1, Two to 10 face value, Jack 11, Queen 12, King 13."""
    rank = rank_of(card)
    return 1 if rank == ACE else rank + 2


def action_button_seat(leftmost_card: int, seats: int) -> int:
    """TCP-7.1 to 7.3, TCP-A6: count from seat 1 clockwise over the player seats, wrapping after the last."""
    return (card_value(leftmost_card) - 1) % seats + 1


def settle(state: RoundState, ranker: HandRanker) -> Settlement:
    config = _config(state)
    dealer = ranker.three_card(state.dealer_cards)
    qualifies = tcp_dealer_qualifies(state.dealer_cards, dealer)
    pool = state.progressive_pool
    results: list[BetResult] = []
    for seat in with_bets(state):
        hand = ranker.three_card(seat.cards)
        folded = seat.status == SeatStatus.FOLDED
        if folded:
            results.append(lose(seat, BetKind.ANTE, "FOLDED"))  # TCP-3.2
        else:
            results += _main(seat, compare(hand.strength, dealer.strength), qualifies, config)
        line = tcp_three_card_line(seat.cards, hand)
        if BetKind.PAIR_PLUS in seat.bets:
            # TCP-2.3, TCP-3.10; a fold loses it (TCP-3.2).
            results.append(
                lose(seat, BetKind.PAIR_PLUS, "FOLDED")
                if folded
                else by_paytable(seat, BetKind.PAIR_PLUS, line, config.pair_plus_paytable)
            )
        if BetKind.SIX_CARD_BONUS in seat.bets:
            # TCP-2.4, TCP-4.3: best five of the player's 3 + the P/D's 3; stays in action on a fold, TCP-3.2.
            six = ranker.best_five(seat.cards + state.dealer_cards)
            results.append(
                by_paytable(seat, BetKind.SIX_CARD_BONUS, tcp_six_card_line(six), config.six_card_paytable)
            )
        if BetKind.PROGRESSIVE in seat.bets:
            result = _progressive(
                seat, None if folded and config.progressive_lost_on_fold else line, pool, config
            )
            pool -= result.won if result.from_pool else 0
            results.append(result)
    contribution, carry = pool_contribution(state, config)
    return Settlement(tuple(results), pool_contribution=contribution, pool_carry=carry)


def pool_contribution(state: RoundState, config: TcpConfig) -> tuple[int, int]:
    """TCP-2.5 (configuration): the pool's share of this round's Progressive stakes in whole chips, and the
    fraction of a chip left over (basis-point units), owed in a later round. Rounding each stake down on its
    own would give nothing for 1-chip stakes at 20 %; carrying the remainder pays the pool exactly
    floor(all stakes x bp / 10,000) over any run of rounds, and no chip is made or lost."""
    stakes = sum(s.bets.get(BetKind.PROGRESSIVE, 0) for s in with_bets(state))
    owed = state.progressive_carry + stakes * config.progressive_contribution_basis_points
    return divmod(owed, 10_000)


def _main(seat: SeatState, result: int, qualifies: bool, config: TcpConfig) -> list[BetResult]:
    if not qualifies:
        # TCP-3.6: Play returned; the Ante wins only if the player is higher (literal TCP-A3), or always
        # under the standard reading.
        if result > 0 or config.ante_rule == TcpAnteRule.STANDARD:
            ante = win(seat, BetKind.ANTE, 1, "DEALER_DOES_NOT_QUALIFY")
        else:
            ante = push(seat, BetKind.ANTE, "DEALER_DOES_NOT_QUALIFY")
        return [ante, push(seat, BetKind.PLAY, "DEALER_DOES_NOT_QUALIFY")]
    if result > 0:  # TCP-3.7, TCP-3.9
        return [win(seat, BetKind.ANTE, 1, "PLAYER_WINS"), win(seat, BetKind.PLAY, 1, "PLAYER_WINS")]
    if result == 0:  # TCP-3.8
        return [push(seat, BetKind.ANTE, "TIE"), push(seat, BetKind.PLAY, "TIE")]
    return [lose(seat, BetKind.ANTE, "DEALER_WINS"), lose(seat, BetKind.PLAY, "DEALER_WINS")]


def _progressive(seat: SeatState, line: str | None, pool: int, config: TcpConfig) -> BetResult:
    """TCP-2.5 (configuration): a row pays fixed odds by the house or a share of the pool by the pool."""
    pay = config.progressive_paytable.get(line) if line is not None else None
    if pay is None:
        return lose(
            seat,
            BetKind.PROGRESSIVE,
            "FOLDED" if line is None and seat.status == SeatStatus.FOLDED else "NO_WINNING_ROW",
        )
    stake = seat.bets[BetKind.PROGRESSIVE]
    assert line is not None
    if pay.pool_basis_points:
        amount = pool * pay.pool_basis_points // 10_000
        return BetResult(
            seat.seat,
            seat.player_id,
            BetKind.PROGRESSIVE,
            stake,
            Outcome.WIN,
            stake,
            amount,
            0,
            line,
            from_pool=True,
        )
    return win(seat, BetKind.PROGRESSIVE, pay.odds, line)


RULES = TcpRules()
