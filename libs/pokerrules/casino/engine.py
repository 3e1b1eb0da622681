"""The functional core of the banked games: `apply(state, command) -> Transition(new state, events)`.

Every command is checked completely before anything changes; a refused command raises `CasinoError` and the
old state stays valid (states are immutable). The game-specific parts (dealing, streets, settlement) live in
`thb.py`, `ch.py` and `tcp.py`; this module holds what the three share: seats, bets and limits, decisions
and the clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pokerrules.casino import ch, errors, tcp, thb
from pokerrules.casino.cards import is_valid_deck
from pokerrules.casino.config import GameConfig, default_config
from pokerrules.casino.errors import CasinoError
from pokerrules.casino.model import (
    DECISION_PHASES,
    BetKind,
    Decision,
    DecisionRecord,
    Event,
    Game,
    LegalDecision,
    Phase,
    SeatState,
    SeatStatus,
    evolve,
)
from pokerrules.casino.ranking import HandRanker, default_ranker
from pokerrules.casino.rules import GameRules
from pokerrules.casino.state import (
    ClearBets,
    Command,
    Deal,
    Decide,
    PlaceBets,
    Rebet,
    RoundState,
    Timeout,
    Transition,
    VoidCard,
    VoidRound,
)

RULES: Mapping[Game, GameRules] = MappingProxyType(
    {
        Game.TEXAS_HOLDEM_BONUS: thb.RULES,
        Game.CASINO_HOLDEM: ch.RULES,
        Game.THREE_CARD_POKER: tcp.RULES,
    }
)


def rules_of(game: Game) -> GameRules:
    return RULES[game]


def new_round(
    game: Game,
    seats: Mapping[int, str],
    config: GameConfig | None = None,
    round_number: int = 1,
    last_bets: Mapping[int, Mapping[BetKind, int]] | None = None,
    deal_start_seat: int = 1,
) -> RoundState:
    """A round in its betting phase. `seats` maps seat numbers to player ids (one player may hold several
    seats where the game allows it: TCP-6.2 yes, THB-1.2 no)."""
    config = config or default_config(game)
    if config.game != game:
        raise ValueError(f"config for {config.game} given to a {game} table")
    check_positions(game, seats)
    return RoundState(
        game=game,
        config=config,
        round_number=round_number,
        seats=tuple(SeatState(seat=n, player_id=p) for n, p in sorted(seats.items())),
        last_bets=MappingProxyType(dict(last_bets or {})),
        deal_start_seat=deal_start_seat,
    )


def check_positions(game: Game, seats: Mapping[int, str]) -> None:
    """THB-1.2: one betting position per player at Texas Hold'em Bonus (several seats would show one player
    several hands' hole cards); Three Card Poker allows several hands (TCP-6.2)."""
    allowed = RULES[game].positions_per_player
    if allowed is None:
        return
    held: dict[str, int] = {}
    for seat, player in sorted(seats.items()):
        held[player] = held.get(player, 0) + 1
        if held[player] > allowed:
            raise CasinoError(
                errors.ONE_POSITION_PER_PLAYER,
                f"a player holds at most {allowed} betting position(s) at this game",
                {"seat": seat, "allowed": allowed},
            )


def next_round(state: RoundState, seats: Mapping[int, str] | None = None) -> RoundState:
    """The following round at the same table: remembers the bets for Rebet (CH-8) and the Action Button."""
    if state.phase not in (Phase.SETTLED, Phase.VOIDED):
        raise CasinoError(errors.BETTING_CLOSED, "the current round is not finished")
    last = dict(state.last_bets)
    for s in state.seats:
        if s.status != SeatStatus.SITTING_OUT:
            last[s.seat] = MappingProxyType(
                {k: v for k, v in s.bets.items() if k in RULES[state.game].placeable}
            )
    players = {s.seat: s.player_id for s in state.seats}
    current = seats if seats is not None else players
    return new_round(
        state.game,
        current,
        state.config,
        state.round_number + 1,
        # A Rebet repeats the seat's own bets: not those of a player who left it.
        {n: b for n, b in last.items() if n in current and current[n] == players.get(n)},
        state.action_button or state.deal_start_seat,
    )


def apply(state: RoundState, command: Command, ranker: HandRanker | None = None) -> Transition:
    match command:
        case PlaceBets():
            return _place_bets(state, command)
        case ClearBets():
            return _clear_bets(state, command)
        case Rebet():
            return _rebet(state, command)
        case Deal():
            return _deal(state, command, ranker or default_ranker())
        case Decide():
            return _decide(state, command, ranker or default_ranker())
        case Timeout():
            return _timeout(state, command, ranker or default_ranker())
        case VoidCard():
            return _void_card(state)
        case VoidRound():
            return _void_round(state, command)
    raise TypeError(f"not a casino command: {command!r}")


# Seats and bets ---------------------------------------------------------------------------------------------


def _own_seat(state: RoundState, seat: int, player_id: str) -> SeatState:
    s = state.seat(seat)
    if s.player_id != player_id:
        raise CasinoError(errors.SEAT_NOT_YOURS, f"seat {seat} belongs to another player", {"seat": seat})
    return s


def _check_balance(balance: int | None, needed: int) -> None:
    if balance is not None and needed > balance:
        raise CasinoError(
            errors.INSUFFICIENT_CHIPS,
            f"{needed} chips needed, {balance} free",
            {"needed": needed, "free": balance},
        )


def _validated_bets(
    state: RoundState, seat: SeatState, added: Mapping[BetKind, int]
) -> tuple[dict[BetKind, int], list[Event]]:
    """The seat's bets after adding `added`, checked against the limits; adjustments reported as events."""
    rules = RULES[state.game]
    config = state.config
    bets = dict(seat.bets)
    events: list[Event] = []
    for kind, amount in added.items():
        if kind not in rules.placeable or (
            kind == BetKind.PROGRESSIVE and not rules.progressive_offered(config)
        ):
            raise CasinoError(errors.BET_NOT_OFFERED, f"{kind} cannot be placed at this table", {"bet": kind})
        if amount <= 0:
            raise CasinoError(errors.BET_NOT_POSITIVE, f"{kind} amount must be positive", {"bet": kind})
        limits = config.limits[kind]
        total = bets.get(kind, 0) + amount
        if total > limits.maximum:
            if not config.auto_adjust:
                raise CasinoError(
                    errors.BET_ABOVE_MAXIMUM,
                    f"{kind} {total} is above the maximum {limits.maximum}",
                    {"bet": kind, "maximum": limits.maximum},
                )
            # CH-2.5 / CH-A2: Auto-Adjusted Bet, down to the maximum.
            events.append(
                Event(
                    "BET_ADJUSTED",
                    {"seat": seat.seat, "bet": str(kind), "requested": total, "adjusted": limits.maximum},
                )
            )
            total = limits.maximum
        if total < limits.minimum:
            raise CasinoError(
                errors.BET_BELOW_MINIMUM,
                f"{kind} {total} is below the minimum {limits.minimum}",
                {"bet": kind, "minimum": limits.minimum},
            )
        bets[kind] = total
    # THB-2.2, CH-4.1, TCP-2.3 / TCP-A2: no side bet without its Ante.
    if any(k != BetKind.ANTE and v > 0 for k, v in bets.items()) and bets.get(BetKind.ANTE, 0) <= 0:
        raise CasinoError(errors.SIDE_BET_WITHOUT_ANTE, "a side bet needs an Ante", {"seat": seat.seat})
    return bets, events


def _place_bets(state: RoundState, cmd: PlaceBets) -> Transition:
    if state.phase != Phase.BETTING:
        raise CasinoError(errors.BETTING_CLOSED, "bets are placed before the deal", {"phase": state.phase})
    seat = _own_seat(state, cmd.seat, cmd.player_id)
    if not cmd.bets:
        raise CasinoError(errors.NO_BETS, "no bet given")
    bets, events = _validated_bets(state, seat, cmd.bets)
    _check_balance(cmd.balance, sum(bets.values()) - seat.total_staked)
    new = evolve(seat, bets=MappingProxyType(bets))
    events.append(_bets_event(new))
    return Transition(state.with_seat(new), tuple(events))


def _bets_event(seat: SeatState) -> Event:
    return Event("BETS_PLACED", {"seat": seat.seat, "bets": {str(k): v for k, v in seat.bets.items()}})


def _clear_bets(state: RoundState, cmd: ClearBets) -> Transition:
    """CH-8 Clear Bets: remove all of the seat's bets (before the deal)."""
    if state.phase != Phase.BETTING:
        raise CasinoError(errors.BETTING_CLOSED, "bets can only be cleared before the deal")
    seat = _own_seat(state, cmd.seat, cmd.player_id)
    new = evolve(seat, bets=MappingProxyType({}))
    return Transition(state.with_seat(new), (Event("BETS_CLEARED", {"seat": seat.seat}),))


def _rebet(state: RoundState, cmd: Rebet) -> Transition:
    """CH-8 Rebet: the previous round's bets (replacing any on the table), within today's limits."""
    if state.phase != Phase.BETTING:
        raise CasinoError(errors.BETTING_CLOSED, "Rebet is a betting-phase action")
    seat = _own_seat(state, cmd.seat, cmd.player_id)
    previous = state.last_bets.get(cmd.seat)
    if not previous:
        raise CasinoError(errors.NO_PREVIOUS_BETS, "no bets in the previous round", {"seat": cmd.seat})
    bets, events = _validated_bets(state, evolve(seat, bets=MappingProxyType({})), previous)
    _check_balance(cmd.balance, sum(bets.values()) - seat.total_staked)
    new = evolve(seat, bets=MappingProxyType(bets))
    events.append(_bets_event(new))
    return Transition(state.with_seat(new), tuple(events))


# Dealing ----------------------------------------------------------------------------------------------------


def _deal(state: RoundState, cmd: Deal, ranker: HandRanker) -> Transition:
    if state.phase != Phase.BETTING:
        raise CasinoError(errors.BETTING_CLOSED, "this round has already been dealt")
    rules = RULES[state.game]
    playing = [s for s in state.seats if s.ante > 0]
    if not playing:
        raise CasinoError(errors.NO_BETS, "no seat has an Ante")
    deck = tuple(cmd.deck)
    if not is_valid_deck(deck):
        raise CasinoError(errors.DECK_INVALID, "the deck must be distinct card codes 0..51")
    needed = rules.cards_needed(len(playing))
    if len(deck) < needed:
        raise CasinoError(errors.DECK_TOO_SHORT, f"{needed} cards needed", {"needed": needed})
    if cmd.deck_set is not None and cmd.deck_set != state.deck_set:
        raise CasinoError(
            errors.WRONG_DECK_SET,
            f"round {state.round_number} uses deck set {state.deck_set}",
            {"expected": state.deck_set},
        )
    seats = tuple(
        evolve(s, status=SeatStatus.IN_HAND) if s.ante > 0 else evolve(s, bets=MappingProxyType({}))
        for s in state.seats
    )
    if not 0 <= cmd.progressive_carry < 10_000:
        raise CasinoError(errors.CARRY_INVALID, "the pool carry is a fraction of a chip: 0..9999 bp")
    dealing = evolve(
        state,
        seats=seats,
        deck=deck,
        next_card=0,
        progressive_pool=cmd.progressive_pool,
        progressive_carry=cmd.progressive_carry,
    )
    events = [Event("ROUND_STARTED", {"round": state.round_number, "deck_set": state.deck_set})]
    dealt, deal_events = rules.deal(dealing)
    events.extend(deal_events)
    return Transition(dealt, tuple(events))


def _void_card(state: RoundState) -> Transition:
    """THB-7.1 / THB-A6: an exposed card is void; dealing continues with the next card."""
    if state.phase in (Phase.SETTLED, Phase.VOIDED):
        raise CasinoError(errors.ROUND_FINISHED, "the round is over (THB-7.3: later cards do not count)")
    if state.phase == Phase.BETTING:
        raise CasinoError(errors.NOT_DECISION_TIME, "no deck in play before the deal")
    rules = RULES[state.game]
    if state.next_card + rules.cards_still_needed(state) >= len(state.deck):
        raise CasinoError(errors.DECK_TOO_SHORT, "no spare card to void")
    card = state.deck[state.next_card]
    new = evolve(state, next_card=state.next_card + 1, voided_cards=(*state.voided_cards, card))
    # The card itself stays out of the event: no event names a card that is not in play.
    return Transition(new, (Event("CARD_VOIDED", {"position": state.next_card}),))


def _void_round(state: RoundState, cmd: VoidRound) -> Transition:
    """CH-11.2, THB-7.7/7.8, THB-A7: bets returned; a THB Bonus with its hole cards dealt stands (THB-7.9)."""
    if state.phase in (Phase.SETTLED, Phase.VOIDED):
        raise CasinoError(errors.ROUND_FINISHED, "the round is already settled")
    settlement = RULES[state.game].void(state)
    new = evolve(state, phase=Phase.VOIDED, settlement=settlement)
    return Transition(new, (Event("ROUND_VOIDED", {"reason": cmd.reason}), *_settled_events(new)))


def _settled_events(state: RoundState) -> list[Event]:
    assert state.settlement is not None
    events = []
    for s in state.seats:
        results = [r for r in state.settlement.results if r.seat == s.seat]
        if results:
            events.append(
                Event(
                    "SEAT_SETTLED",
                    {
                        "seat": s.seat,
                        "results": [
                            {
                                "bet": str(r.bet),
                                "stake": r.stake,
                                "outcome": str(r.outcome),
                                "returned": r.returned,
                                "won": r.won,
                                "lost": r.lost,
                                "line": r.line,
                            }
                            for r in results
                        ],
                        "net": state.settlement.net_for_seat(s.seat),
                    },
                    seat=s.seat,
                )
            )
    events.append(Event("ROUND_SETTLED", {"round": state.round_number, "phase": str(state.phase)}))
    return events


# Decisions --------------------------------------------------------------------------------------------------


def awaiting(state: RoundState) -> tuple[int, ...]:
    """Seats that still have to decide in the current phase."""
    if state.phase not in DECISION_PHASES:
        return ()
    return tuple(s.seat for s in state.seats if s.status == SeatStatus.IN_HAND and not s.decided)


def legal_decisions(state: RoundState, seat: int) -> tuple[LegalDecision, ...]:
    """What this seat may decide now, with the chips each decision adds; empty if nothing to decide."""
    s = state.seat(seat)
    if seat not in awaiting(state):
        return ()
    return tuple(
        LegalDecision(spec.decision, s.ante * spec.multiple)
        for spec in RULES[state.game].decisions
        if spec.phase == state.phase
    )


def automatic_decision(state: RoundState) -> Decision:
    """The decision taken for a player whose clock ran out (THB-7.10 FOLD pre-flop, THB-7.11 CHECK after;
    CH and TCP are silent: FOLD, the choice that risks no more money)."""
    for spec in RULES[state.game].decisions:
        if spec.phase == state.phase and spec.automatic:
            return spec.decision
    raise CasinoError(errors.NOT_DECISION_TIME, "no decision is open", {"phase": state.phase})


def _decide(state: RoundState, cmd: Decide, ranker: HandRanker) -> Transition:
    if state.phase not in DECISION_PHASES:
        raise CasinoError(errors.NOT_DECISION_TIME, "no decision is open", {"phase": state.phase})
    if cmd.phase is not None and cmd.phase != state.phase:
        raise CasinoError(
            errors.WRONG_STREET, f"the decision is for {state.phase}, not {cmd.phase}", {"phase": state.phase}
        )
    seat = _own_seat(state, cmd.seat, cmd.player_id)
    if seat.decided:
        # TCP-6.3: a hand once set cannot be changed.
        raise CasinoError(errors.ALREADY_DECIDED, f"seat {seat.seat} has decided this street")
    if seat.status != SeatStatus.IN_HAND:
        raise CasinoError(errors.NOT_IN_HAND, f"seat {seat.seat} is not in the hand", {"status": seat.status})
    options = {o.decision: o for o in legal_decisions(state, seat.seat)}
    if cmd.decision not in options:
        raise CasinoError(
            errors.DECISION_NOT_ALLOWED,
            f"{cmd.decision} is not allowed now; allowed: {', '.join(options)}",
            {"decision": cmd.decision, "phase": state.phase},
        )
    _check_balance(cmd.balance, options[cmd.decision].stake)
    return _record(state, seat, cmd.decision, automatic=False, ranker=ranker)


def _record(
    state: RoundState, seat: SeatState, decision: Decision, automatic: bool, ranker: HandRanker
) -> Transition:
    spec = next(d for d in RULES[state.game].decisions if d.phase == state.phase and d.decision == decision)
    stake = seat.ante * spec.multiple
    bets = dict(seat.bets)
    if spec.bet is not None:
        bets[spec.bet] = stake
    new = evolve(
        seat,
        bets=MappingProxyType(bets),
        status=SeatStatus.FOLDED if decision == Decision.FOLD else seat.status,
        decided=True,
        decisions=(*seat.decisions, DecisionRecord(state.phase, decision, stake, automatic)),
    )
    state = state.with_seat(new)
    events = [
        Event(
            "DECISION",
            {
                "seat": seat.seat,
                "phase": str(state.phase),
                "decision": str(decision),
                "stake": stake,
                "automatic": automatic,
            },
        )
    ]
    if not awaiting(state):
        state, more = RULES[state.game].advance(state, ranker)
        events.extend(more)
        if state.settlement is not None:
            events.extend(_settled_events(state))
    return Transition(state, tuple(events))


def _timeout(state: RoundState, cmd: Timeout, ranker: HandRanker) -> Transition:
    if state.phase not in DECISION_PHASES:
        raise CasinoError(errors.NOT_DECISION_TIME, "no decision is open", {"phase": state.phase})
    events: list[Event] = []
    phase = state.phase
    seats = awaiting(state)
    if cmd.seat is not None:
        if cmd.seat not in seats:
            state.seat(cmd.seat)  # SEAT_NOT_FOUND for an unknown seat
            raise CasinoError(
                errors.ALREADY_DECIDED, f"seat {cmd.seat} has nothing to decide", {"seat": cmd.seat}
            )
        seats = (cmd.seat,)
    for number in seats:
        if state.phase != phase:
            break
        step = _record(state, state.seat(number), automatic_decision(state), automatic=True, ranker=ranker)
        state = step.state
        events.extend(step.events)
    return Transition(state, tuple(events))
