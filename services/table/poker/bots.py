"""Which bot should sit down or stand up at a table between hands (NK-7.6: bots fill empty seats where the
table allows them). Bots fill up to `bot_seats` seats but always leave one seat free for a person: when a
person takes it, a bot stands up after the hand. A busted bot stands up and another takes its place.
Bot player ids are `bot:<table>:<seat>`, also the owner of the bot's wallet account."""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.table import TableState

from services.table.poker.money import bot_owner


@dataclass(frozen=True)
class BotChange:
    seat: int
    player: str
    sit: bool  # True: sit down with a buy-in; False: stand up


def bot_change(table_id: str, state: TableState, bot_seats: int) -> BotChange | None:
    """The one next change, or None; only between hands."""
    if state.hand_in_progress:
        return None
    bots = sorted(n for n, s in state.seats.items() if s.is_bot)
    for n in bots:
        if state.seats[n].stack == 0:
            return BotChange(n, state.seats[n].player, sit=False)
    humans = len(state.seats) - len(bots)
    target = max(0, min(bot_seats, state.config.seats - humans - 1))
    if len(bots) > target:
        n = bots[-1]
        return BotChange(n, state.seats[n].player, sit=False)
    free = state.free_seats()
    if len(bots) < target and free:
        return BotChange(free[0], bot_owner(table_id, free[0]), sit=True)
    return None
