"""Casino Hold'em (CH-*): Ante + AA Bonus, the Flop dealt with the hole cards, Call (2 × Ante) or Fold, the
Dealer qualifying with a pair of 4s, the Ante paytable and the AA Bonus paytable."""

from __future__ import annotations

from pokerrules.casino.config import ChConfig, GameConfig
from pokerrules.casino.model import (
    BetKind,
    BetResult,
    Decision,
    Event,
    Phase,
    SeatState,
    SeatStatus,
    Settlement,
    evolve,
)
from pokerrules.casino.paylines import ch_aa_bonus_line, ch_ante_line, ch_dealer_qualifies
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


class ChRules:
    placeable: frozenset[BetKind] = frozenset({BetKind.ANTE, BetKind.AA_BONUS})  # CH-2.3
    # The document is a one-player touch game and says nothing of several seats at a live table.
    positions_per_player: int | None = None
    decisions: tuple[DecisionSpec, ...] = (
        # CH-11.1 leaves an unanswered decision to the site: FOLD, the choice that risks no more money.
        DecisionSpec(Phase.FLOP, Decision.FOLD, None, 0, automatic=True, rule="CH-3.4, CH-3.5"),
        DecisionSpec(Phase.FLOP, Decision.CALL, BetKind.CALL, 2, automatic=False, rule="CH-2.4, CH-3.6"),
    )

    def progressive_offered(self, config: GameConfig) -> bool:
        return False

    def cards_needed(self, hands: int) -> int:
        return 2 * hands + 2 + 5

    def cards_still_needed(self, state: RoundState) -> int:
        return 2 if state.phase == Phase.FLOP else 0

    def deal(self, state: RoundState) -> tuple[RoundState, list[Event]]:
        """CH-3.1, CH-3.2: two cards to the player, two face down to the Dealer, the Flop face up."""
        events: list[Event] = []
        for seat in in_hand(state):
            cards, state = take(state, 2)
            dealt = evolve(seat, cards=cards)
            state = state.with_seat(dealt)
            events.append(hole_cards_event(dealt))
        dealer, state = take(state, 2)
        flop, state = take(state, 3)
        state = new_street(evolve(state, dealer_cards=dealer, board=flop), Phase.FLOP)
        events += [
            Event("DEALER_CARDS_DEALT", {"count": 2}),
            Event("BOARD", {"street": "FLOP", "cards": list(flop)}),
            phase_event(Phase.FLOP),
        ]
        return state, events

    def advance(self, state: RoundState, ranker: HandRanker) -> tuple[RoundState, list[Event]]:
        events: list[Event] = []
        if in_hand(state):
            # CH-3.6: after a Call, the Turn and River, then the Dealer's hand. After folds only, the round
            # ends at once (CH-3.5, CH-EX-11).
            turn_river, state = take(state, 2)
            state = evolve(state, board=state.board + turn_river, dealer_revealed=True)
            dealer = ranker.best_five(state.dealer_cards + state.board)
            events += [
                Event("BOARD", {"street": "TURN", "cards": [turn_river[0]]}),
                Event("BOARD", {"street": "RIVER", "cards": [turn_river[1]]}),
                Event(
                    "DEALER_REVEALED",
                    {
                        "cards": list(state.dealer_cards),
                        "hand": dealer.category.name,
                        "qualifies": ch_dealer_qualifies(dealer, _config(state).dealer_qualifying_pair),
                    },
                ),
            ]
            for seat in in_hand(state):
                hand = ranker.best_five(seat.cards + state.board)
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
        return evolve(state, phase=Phase.SETTLED, settlement=settle(state, ranker)), events

    def void(self, state: RoundState) -> Settlement:
        # CH-11.2: a malfunction voids all pays and plays; every bet is refunded.
        return Settlement(tuple(void(seat, bet) for seat in with_bets(state) for bet in seat.bets))


def _config(state: RoundState) -> ChConfig:
    assert isinstance(state.config, ChConfig)
    return state.config


def _aa_bonus(seat: SeatState, state: RoundState, ranker: HandRanker) -> BetResult:
    config = _config(state)
    if seat.status == SeatStatus.FOLDED and config.aa_bonus_lost_on_fold:
        return lose(seat, BetKind.AA_BONUS, "FOLDED")  # CH-3.5, CH-4.3
    first_five = ranker.best_five(seat.cards + state.board[:3])  # CH-4.2, CH-A3: 2 cards + Flop only
    return by_paytable(seat, BetKind.AA_BONUS, ch_aa_bonus_line(first_five), config.aa_bonus_paytable)


def settle(state: RoundState, ranker: HandRanker) -> Settlement:
    config = _config(state)
    results: list[BetResult] = []
    dealer = ranker.best_five(state.dealer_cards + state.board) if in_hand(state) else None
    for seat in with_bets(state):
        if BetKind.AA_BONUS in seat.bets:
            results.append(_aa_bonus(seat, state, ranker))  # CH-4.5: independent of the main game
        if seat.status == SeatStatus.FOLDED:
            results.append(lose(seat, BetKind.ANTE, "FOLDED"))  # CH-3.5
            continue
        assert dealer is not None
        hand = ranker.best_five(seat.cards + state.board)
        ante_line = ch_ante_line(hand)
        if not ch_dealer_qualifies(dealer, config.dealer_qualifying_pair):
            # CH-5.3, CH-A5: Ante paid by the paytable whatever the hands; Call returned.
            results.append(win(seat, BetKind.ANTE, config.ante_paytable[ante_line], ante_line))
            results.append(push(seat, BetKind.CALL, "DEALER_DOES_NOT_QUALIFY"))
            continue
        result = compare(hand.strength, dealer.strength)
        if result > 0:  # CH-5.6
            results.append(win(seat, BetKind.ANTE, config.ante_paytable[ante_line], ante_line))
            results.append(win(seat, BetKind.CALL, 1, "PLAYER_WINS"))
        elif result == 0:  # CH-5.4
            results += [push(seat, BetKind.ANTE, "TIE"), push(seat, BetKind.CALL, "TIE")]
        else:  # CH-5.5
            results += [lose(seat, BetKind.ANTE, "DEALER_WINS"), lose(seat, BetKind.CALL, "DEALER_WINS")]
    return Settlement(tuple(results))


RULES = ChRules()
