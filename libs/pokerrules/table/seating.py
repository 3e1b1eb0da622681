"""Seats and chips between the wallet and the table (NK-6.1 cash table, NK-6.2 private table).

Buy-in, top-up and re-buy emit `BuyInRequested`, leaving emits `ChipsReturned`: the service moves the money
(a wallet hold into the table's escrow) and keeps the new state only if the wallet agrees.

Rules chosen where the source is silent (documented in the README):
- buy-in and re-buy between the table's min and max; a top-up may bring the stack up to the max;
- top-up and re-buy only while the player's chips are not in play (between their hands);
- sitting out or in takes effect from the next hand; a busted player is sat out and a re-buy sits them in;
- leaving between hands returns the stack at once; mid-hand the player checks or folds from then on and
  leaves, paid out, at the hand's end.
"""

from __future__ import annotations

from dataclasses import replace

from pokerrules.table import errors as e
from pokerrules.table.events import (
    BuyInRequested,
    ChipsReturned,
    LeaveScheduled,
    PlayerInvited,
    PlayerLeft,
    PlayerSatIn,
    PlayerSatOut,
    PlayerSeated,
)
from pokerrules.table.play import advance
from pokerrules.table.state import Seat, TableState, Transition


def _cash_only(state: TableState) -> None:
    if not state.config.policy.is_cash:
        raise e.TableError(
            e.TOURNAMENT_TABLE, "tournament seats come from the director and keep their chips at the table"
        )


def _check_buy_in(state: TableState, amount: int) -> None:
    config = state.config
    if amount < config.min_buy_in:
        raise e.TableError(e.BUY_IN_BELOW_MIN, "below the table's minimum buy-in", min=config.min_buy_in)
    if amount > config.max_buy_in:
        raise e.TableError(e.BUY_IN_ABOVE_MAX, "above the table's maximum buy-in", max=config.max_buy_in)


def sit(
    state: TableState, player: str, number: int, buy_in: int, *, is_bot: bool = False, code: str | None = None
) -> Transition:
    """Take an empty seat with a buy-in; dealt in from the next hand (the table keeps running)."""
    _cash_only(state)
    config = state.config
    if not 1 <= number <= config.seats:
        raise e.TableError(e.NO_SUCH_SEAT, "no such seat", seat=number, seats=config.seats)
    if number in state.seats:
        raise e.TableError(e.SEAT_TAKEN, "the seat is taken", seat=number)
    if state.find_seat(player) is not None:
        raise e.TableError(e.ALREADY_SEATED, "the player already has a seat here", player=player)
    if is_bot:
        if not config.bots_allowed:  # NK-6.2 / NK-7.6: bots only where the table allows them
            raise e.TableError(e.BOTS_NOT_ALLOWED, "this table does not allow bots")
    elif not state.may_sit(player, code):
        raise e.TableError(e.NOT_INVITED, "this private table admits invited players only", player=player)
    _check_buy_in(state, buy_in)
    seat = Seat(
        player=player,
        stack=buy_in,
        is_bot=is_bot,
        time_bank_ms=config.timers.time_bank_ms,
        seated_after=state.hand_number,
    )
    new = replace(state.with_seat(number, seat), chips_bought_in=state.chips_bought_in + buy_in)
    return Transition(
        new, [PlayerSeated(number, player, is_bot), BuyInRequested(number, player, buy_in, "buy_in")]
    )


def top_up(state: TableState, player: str, amount: int) -> Transition:
    """Add chips between hands: a top-up up to the maximum, or a re-buy (min..max) once busted (NK-6.1)."""
    _cash_only(state)
    number = state.seat_of(player)
    seat = state.seats[number]
    if amount <= 0:
        raise e.TableError(e.INVALID_AMOUNT, "the amount must be positive", amount=amount)
    if state.in_hand(number):
        raise e.TableError(e.IN_HAND, "chips in play cannot be topped up until the hand ends")
    if seat.leaving:
        raise e.TableError(e.LEAVING, "the player is leaving")
    events = []
    if seat.stack == 0:
        _check_buy_in(state, amount)
        kind = "rebuy"
        seat = replace(seat, stack=amount, sitting_out=False, timeouts_in_row=0)
        events.append(PlayerSatIn(number))
    else:
        if seat.stack + amount > state.config.max_buy_in:
            raise e.TableError(
                e.BUY_IN_ABOVE_MAX,
                "a top-up may bring the stack up to the table's maximum buy-in",
                max=state.config.max_buy_in,
                stack=seat.stack,
            )
        kind = "top_up"
        seat = replace(seat, stack=seat.stack + amount)
    new = replace(state.with_seat(number, seat), chips_bought_in=state.chips_bought_in + amount)
    return Transition(new, [BuyInRequested(number, player, amount, kind), *events])


def sit_out(state: TableState, player: str) -> Transition:
    """Not dealt in from the next hand on; the seat and the stack stay."""
    number = state.seat_of(player)
    seat = state.seats[number]
    if seat.sitting_out:
        raise e.TableError(e.ALREADY_SITTING_OUT, "the player is already sitting out")
    return Transition(
        state.with_seat(number, replace(seat, sitting_out=True)), [PlayerSatOut(number, "REQUESTED")]
    )


def sit_in(state: TableState, player: str) -> Transition:
    number = state.seat_of(player)
    seat = state.seats[number]
    if not seat.sitting_out:
        raise e.TableError(e.NOT_SITTING_OUT, "the player is not sitting out")
    if seat.stack == 0 and not state.in_hand(number):
        raise e.TableError(e.NO_CHIPS, "a busted player re-buys before sitting in")
    seat = replace(seat, sitting_out=False, timeouts_in_row=0)
    return Transition(state.with_seat(number, seat), [PlayerSatIn(number)])


def leave(state: TableState, player: str, now: int, reason: str = "LEFT") -> Transition:
    """Stand up: the stack is returned now, or at the hand's end if the player's chips are in play."""
    _cash_only(state)
    number = state.seat_of(player)
    seat = state.seats[number]
    if seat.leaving:
        raise e.TableError(e.LEAVING, "the player is already leaving")
    if state.in_hand(number):
        marked = state.with_seat(number, replace(seat, leaving=True))
        return advance(marked, [LeaveScheduled(number)], now, acted=False)
    new = replace(state.with_seat(number, None), chips_returned=state.chips_returned + seat.stack)
    return Transition(new, [ChipsReturned(number, player, seat.stack), PlayerLeft(number, player, reason)])


def invite(state: TableState, by: str, players: str | tuple[str, ...]) -> Transition:
    """NK-6.2: the host of a private table adds players to its invite list (those not on it yet)."""
    access = state.config.private
    if access is None or by != access.host:
        raise e.TableError(e.NOT_HOST, "only the host of a private table invites")
    wanted = (players,) if isinstance(players, str) else players
    new = [p for p in dict.fromkeys(wanted) if p not in state.invited and p not in access.invited]
    return Transition(replace(state, invited=state.invited | set(new)), [PlayerInvited(p) for p in new])
