"""Texas Hold'em Bonus (THB-*): Ante + Bonus, Fold or Flop (2 × Ante), Turn and River bets (1 × Ante) or
Check, no Dealer qualification, the Ante paying only on a Straight or better."""

from __future__ import annotations

from pokerrules.casino.config import GameConfig, ThbConfig
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
from pokerrules.casino.paylines import thb_ante_wins, thb_bonus_line
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

MAIN_BETS = (BetKind.ANTE, BetKind.FLOP, BetKind.TURN, BetKind.RIVER)


class ThbRules:
    placeable: frozenset[BetKind] = frozenset({BetKind.ANTE, BetKind.BONUS})  # THB-2.1, THB-2.2
    positions_per_player: int | None = 1  # THB-1.2: only one betting position per player
    decisions: tuple[DecisionSpec, ...] = (
        DecisionSpec(
            Phase.PRE_FLOP, Decision.FOLD, None, 0, automatic=True, rule="THB-3.3, THB-3.4, THB-7.10"
        ),
        DecisionSpec(Phase.PRE_FLOP, Decision.FLOP, BetKind.FLOP, 2, automatic=False, rule="THB-2.4"),
        DecisionSpec(Phase.FLOP, Decision.CHECK, None, 0, automatic=True, rule="THB-3.6, THB-7.11"),
        DecisionSpec(Phase.FLOP, Decision.BET, BetKind.TURN, 1, automatic=False, rule="THB-2.5, THB-A1"),
        DecisionSpec(Phase.TURN, Decision.CHECK, None, 0, automatic=True, rule="THB-3.7, THB-7.11"),
        DecisionSpec(Phase.TURN, Decision.BET, BetKind.RIVER, 1, automatic=False, rule="THB-2.6, THB-A1"),
    )

    def progressive_offered(self, config: GameConfig) -> bool:
        return False

    def cards_needed(self, hands: int) -> int:
        return 2 * hands + 2 + 5  # THB-1.4, THB-1.5

    def cards_still_needed(self, state: RoundState) -> int:
        return {Phase.PRE_FLOP: 5, Phase.FLOP: 2, Phase.TURN: 1}.get(state.phase, 0)

    def deal(self, state: RoundState) -> tuple[RoundState, list[Event]]:
        """THB-3.2: two hole cards to each seat (in seat order), then two to the Dealer, face down."""
        events: list[Event] = []
        for seat in in_hand(state):
            cards, state = take(state, 2)
            dealt = evolve(seat, cards=cards)
            state = state.with_seat(dealt)
            events.append(hole_cards_event(dealt))
        dealer, state = take(state, 2)
        state = new_street(evolve(state, dealer_cards=dealer), Phase.PRE_FLOP)
        events += [Event("DEALER_CARDS_DEALT", {"count": 2}), phase_event(Phase.PRE_FLOP)]
        return state, events

    def advance(self, state: RoundState, ranker: HandRanker) -> tuple[RoundState, list[Event]]:
        if state.phase == Phase.PRE_FLOP and in_hand(state):
            flop, state = take(state, 3)  # THB-3.5
            state = new_street(evolve(state, board=flop), Phase.FLOP)
            return state, [Event("BOARD", {"street": "FLOP", "cards": list(flop)}), phase_event(Phase.FLOP)]
        if state.phase == Phase.FLOP:
            turn, state = take(state, 1)  # THB-3.7
            state = new_street(evolve(state, board=state.board + turn), Phase.TURN)
            return state, [Event("BOARD", {"street": "TURN", "cards": list(turn)}), phase_event(Phase.TURN)]
        events: list[Event] = []
        if state.phase == Phase.TURN:
            river, state = take(state, 1)  # THB-3.8: no betting after the River
            state = evolve(state, board=state.board + river)
            events.append(Event("BOARD", {"street": "RIVER", "cards": list(river)}))
            events += showdown_events(state, ranker)
            state = evolve(state, dealer_revealed=True)
        settlement = settle(state, ranker)
        return evolve(state, phase=Phase.SETTLED, settlement=settlement), events

    def void(self, state: RoundState) -> Settlement:
        config = state.config
        assert isinstance(config, ThbConfig)
        results: list[BetResult] = []
        for seat in with_bets(state):
            results += [void(seat, b) for b in MAIN_BETS if b in seat.bets]
            if BetKind.BONUS in seat.bets:
                if config.bonus_stands_on_void and seat.cards:
                    results.append(_bonus(seat, state, config))  # THB-7.9, THB-A7
                else:
                    results.append(void(seat, BetKind.BONUS))
        return Settlement(tuple(results))


def showdown_events(state: RoundState, ranker: HandRanker) -> list[Event]:
    dealer = ranker.best_five(state.dealer_cards + state.board)
    # THB-4.7: no qualifying hand; the Dealer always "qualifies".
    revealed = {"cards": list(state.dealer_cards), "hand": dealer.category.name, "qualifies": True}
    events = [Event("DEALER_REVEALED", revealed)]
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
    return events


def _bonus(seat: SeatState, state: RoundState, config: ThbConfig) -> BetResult:
    if seat.status == SeatStatus.FOLDED and config.bonus_lost_on_fold:
        return lose(seat, BetKind.BONUS, "FOLDED")  # THB-3.4, THB-A2
    # THB-2.3, THB-4.6, THB-A5: on the hole cards only (and the Dealer's for the 1000 to 1 row).
    return by_paytable(
        seat, BetKind.BONUS, thb_bonus_line(seat.cards, state.dealer_cards), config.bonus_paytable
    )


def settle(state: RoundState, ranker: HandRanker) -> Settlement:
    config = state.config
    assert isinstance(config, ThbConfig)
    results: list[BetResult] = []
    dealer = ranker.best_five(state.dealer_cards + state.board) if in_hand(state) else None
    for seat in with_bets(state):
        if seat.status == SeatStatus.FOLDED:
            results.append(lose(seat, BetKind.ANTE, "FOLDED"))  # THB-3.4
        else:
            assert dealer is not None
            hand = ranker.best_five(seat.cards + state.board)  # THB-4.1
            result = compare(hand.strength, dealer.strength)
            for bet in (b for b in MAIN_BETS if b in seat.bets):
                if result > 0:
                    if bet != BetKind.ANTE:
                        results.append(win(seat, bet, 1, "PLAYER_WINS"))  # THB-4.2
                    elif thb_ante_wins(hand):
                        results.append(win(seat, bet, 1, "STRAIGHT_OR_BETTER"))  # THB-4.3
                    else:
                        results.append(push(seat, bet, "BELOW_STRAIGHT"))  # THB-4.3
                elif result == 0:
                    results.append(push(seat, bet, "TIE"))  # THB-4.5
                else:
                    results.append(lose(seat, bet, "DEALER_WINS"))  # THB-4.4, THB-A3
        if BetKind.BONUS in seat.bets:
            results.append(_bonus(seat, state, config))
    return Settlement(tuple(results))


RULES = ThbRules()
