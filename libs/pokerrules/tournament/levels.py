"""Blind levels: small blind, big blind and big blind ante, rising by time or by hands, with breaks.

A structure is a tuple of `Level` and `Break` entries played in order; the last level lasts until the end.
A level rises either after `duration_ms` of tournament time (pauses excluded) or after `hands` hands: at a
single table that is hands dealt there; over several tables it is `hands` × the tables in play when the
level began, hands counted at every table (so each table plays about `hands` hands per level). A new level
applies from each table's next hand (a hand in progress finishes at the old level). Breaks are by time.
The ante is a big blind ante (see `pokerrules.multiplayer.config`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.tournament import errors as e

MINUTE_MS = 60_000


@dataclass(frozen=True, slots=True)
class Level:
    small_blind: int
    big_blind: int
    ante: int = 0
    duration_ms: int = 0  # by time; 0 when the level rises by hands
    hands: int = 0  # by hands (turbo formats); 0 when the level rises by time


@dataclass(frozen=True, slots=True)
class Break:
    duration_ms: int


Structure = tuple[Level | Break, ...]


def check_structure(levels: Structure, field: str = "levels") -> None:
    """Refuse a structure a tournament cannot be played with (TournamentError naming the entry)."""
    if not levels:
        raise e.TournamentError(e.INVALID_SPEC, "a tournament needs at least one level", field=field)
    if not isinstance(levels[0], Level):
        raise e.TournamentError(e.INVALID_SPEC, "the first entry must be a level", field=f"{field}[0]")
    if isinstance(levels[-1], Break):
        raise e.TournamentError(e.INVALID_SPEC, "the last entry must be a level", field=f"{field}[-1]")
    previous = 0
    for k, entry in enumerate(levels):
        where = f"{field}[{k}]"
        if isinstance(entry, Break):
            if entry.duration_ms <= 0:
                raise e.TournamentError(e.INVALID_SPEC, "a break needs a positive duration", field=where)
            continue
        if not (entry.small_blind > 0 and entry.big_blind == 2 * entry.small_blind):
            raise e.TournamentError(
                e.INVALID_SPEC, "the big blind is twice the small blind (MP-2.3)", field=where
            )
        if entry.ante < 0:
            raise e.TournamentError(e.INVALID_SPEC, "the ante must not be negative", field=where)
        if entry.big_blind < previous:
            raise e.TournamentError(
                e.INVALID_SPEC, "blinds never go down from one level to the next", field=where
            )
        if (entry.duration_ms > 0) == (entry.hands > 0) or min(entry.duration_ms, entry.hands) < 0:
            raise e.TournamentError(
                e.INVALID_SPEC, "a level rises either by time or by hands (exactly one positive)", field=where
            )
        previous = entry.big_blind


def nice_small_blinds(first: int, count: int) -> list[int]:
    """Small blinds on the usual ladder of round numbers (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k), from
    `first` up, about +25 % a level: the steps every cardroom structure uses (the big blind is twice the
    small blind, MP-2.3)."""
    steps = (10, 15, 20, 25, 30, 40, 50, 60, 80)
    out: list[int] = []
    scale = 1
    while len(out) < count:
        for s in steps:
            value = s * scale
            if value % 10 == 0 and value // 10 >= first and len(out) < count:
                out.append(value // 10)
        scale *= 10
    return out


def ladder(
    first_big_blind: int,
    count: int,
    *,
    duration_ms: int = 0,
    hands: int = 0,
    ante_from: int = 3,
    break_every: int = 0,
    break_ms: int = 0,
) -> Structure:
    """`count` levels on the round-number ladder of small blinds, the big blind twice the small (MP-2.3), a
    big blind ante equal to the big blind from level `ante_from` (1-based; 0 = never), a break after every
    `break_every` levels."""
    entries: list[Level | Break] = []
    for k, small in enumerate(nice_small_blinds(max(1, first_big_blind // 2), count), start=1):
        big = 2 * small
        ante = big if ante_from and k >= ante_from else 0
        entries.append(Level(small, big, ante, duration_ms, hands))
        if break_every and k % break_every == 0 and k < count:
            entries.append(Break(break_ms))
    return tuple(entries)


def turbo_sit_and_go(hands_per_level: int = 0, minutes_per_level: int = 0) -> Structure:
    """Turbo Sit & Go: starting stacks of 1,500 (75 big blinds), levels from 10/20, antes from level 4,
    rising every `hands_per_level` hands or every `minutes_per_level` minutes (default: every 10 hands)."""
    if not hands_per_level and not minutes_per_level:
        hands_per_level = 10
    return ladder(20, 30, duration_ms=minutes_per_level * MINUTE_MS, hands=hands_per_level, ante_from=4)


def scheduled(minutes_per_level: int = 20, break_every: int = 6, break_minutes: int = 5) -> Structure:
    """Scheduled multi-table: starting stacks of 20,000 (200 big blinds), levels from 50/100 with a big blind
    ante from level 3, `minutes_per_level` each, a break of `break_minutes` every `break_every` levels."""
    return ladder(
        100,
        60,
        duration_ms=minutes_per_level * MINUTE_MS,
        ante_from=3,
        break_every=break_every,
        break_ms=break_minutes * MINUTE_MS,
    )
