"""Building `BetResult`s: the settlement arithmetic, in integer chips."""

from __future__ import annotations

from collections.abc import Mapping

from pokerrules.casino.model import BetKind, BetResult, Outcome, SeatState


def win(seat: SeatState, bet: BetKind, odds: int, line: str = "") -> BetResult:
    """X to 1: the stake comes back and X times it is paid (README payout convention)."""
    stake = seat.bets[bet]
    return BetResult(seat.seat, seat.player_id, bet, stake, Outcome.WIN, stake, stake * odds, 0, line)


def push(seat: SeatState, bet: BetKind, line: str = "") -> BetResult:
    stake = seat.bets[bet]
    return BetResult(seat.seat, seat.player_id, bet, stake, Outcome.PUSH, stake, 0, 0, line)


def lose(seat: SeatState, bet: BetKind, line: str = "") -> BetResult:
    stake = seat.bets[bet]
    return BetResult(seat.seat, seat.player_id, bet, stake, Outcome.LOSE, 0, 0, stake, line)


def void(seat: SeatState, bet: BetKind, line: str = "VOID") -> BetResult:
    stake = seat.bets[bet]
    return BetResult(seat.seat, seat.player_id, bet, stake, Outcome.VOID, stake, 0, 0, line)


def by_paytable(seat: SeatState, bet: BetKind, line: str | None, paytable: Mapping[str, int]) -> BetResult:
    """A side bet: wins on its row's odds, or loses when no row matches."""
    if line is None:
        return lose(seat, bet, "NO_WINNING_ROW")
    return win(seat, bet, paytable[line], line)


def hand_result(player: int, dealer: int) -> Outcome:
    """The hands compared, by name (HAND_RESULT events): WIN the player's is higher, PUSH equal, LOSE."""
    return (Outcome.LOSE, Outcome.PUSH, Outcome.WIN)[compare(player, dealer) + 1]


def compare(player: int, dealer: int) -> int:
    """+1 player higher, 0 equal, -1 dealer higher (strengths: higher wins)."""
    return (player > dealer) - (player < dealer)
