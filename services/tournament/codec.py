"""Conversions: the pure core's commands to and from the log (JSON, with the draws they used), its events to
TournamentEvent messages, a CreateTournamentRequest to a TournamentSpec, a spec to the Tournament message."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from poker.table.v1 import table_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2 as pb
from pokerrules.table.config import Mode
from pokerrules.tournament import commands as c
from pokerrules.tournament import events as ev
from pokerrules.tournament.levels import Break, Level, Structure
from pokerrules.tournament.spec import Format, TournamentSpec
from pokerrules.tournament.spin import DEFAULT_SPIN, Multiplier, SpinTable
from refusal import Refusal
from servicekit import errors

MAX_CHIPS = 10**15
FORMATS = {
    pb.FORMAT_SIT_AND_GO: Format.SIT_AND_GO,
    pb.FORMAT_SPIN: Format.SPIN,
    pb.FORMAT_SCHEDULED: Format.SCHEDULED,
}
FORMAT_OF = {v: k for k, v in FORMATS.items()}
GAMES = {
    tpb.GAME_NO_LIMIT_HOLDEM: Mode.HOLDEM,
    tpb.GAME_POT_LIMIT_OMAHA: Mode.OMAHA,
    tpb.GAME_NAIKO: Mode.NAIKO,
}
GAME_OF = {v: k for k, v in GAMES.items()}
STATES = {
    "announced": pb.STATE_ANNOUNCED,
    "registering": pb.STATE_REGISTERING,
    "running": pb.STATE_RUNNING,
    "finished": pb.STATE_FINISHED,
    "cancelled": pb.STATE_CANCELLED,
}
STATE_NAME = {v: k for k, v in STATES.items()}

# ------------------------------------------------------------------ commands


def encode_command(command: c.Command, draws: Sequence[tuple[int, int]]) -> str:
    kind = type(command).__name__
    body: dict[str, Any] = {"k": kind, "now": command.now, "draws": [list(d) for d in draws]}
    if isinstance(command, (c.Register, c.Unregister)):
        body["player"] = command.player
    elif isinstance(command, c.HandFinished):
        r = command.result
        body["r"] = [
            r.table,
            r.hand_number,
            r.button,
            r.big_blind,
            [[s.seat, s.player, s.starting_stack, s.finishing_stack] for s in r.seats],
        ]
    return json.dumps(body, separators=(",", ":"))


_PLAIN: dict[str, type[c.Command]] = {
    "Start": c.Start,
    "TimePassed": c.TimePassed,
    "Pause": c.Pause,
    "Resume": c.Resume,
    "Cancel": c.Cancel,
}


def decode_command(text: str) -> tuple[c.Command, list[tuple[int, int]]]:
    body = json.loads(text)
    kind, now = body["k"], int(body["now"])
    draws = [(int(n), int(v)) for n, v in body["draws"]]
    command: c.Command
    if kind == "Register":
        command = c.Register(now, body["player"])
    elif kind == "Unregister":
        command = c.Unregister(now, body["player"])
    elif kind == "HandFinished":
        table, hand, button, big, seats = body["r"]
        result = c.HandResult(table, hand, button, big, tuple(c.SeatResult(*s) for s in seats))
        command = c.HandFinished(now, result)
    else:
        command = _PLAIN[kind](now)
    return command, draws


# ------------------------------------------------------------------ events


def _blinds(small: int, big: int, ante: int) -> tpb.Level:
    return tpb.Level(small_blind=small, big_blind=big, ante=ante)


def event_message(
    event: ev.TournamentEvent, tables: Mapping[str, str], spin: Mapping[str, Any]
) -> pb.TournamentEvent:
    """One core event as the wire's TournamentEvent (seq, tournament_id, time_ms set by the caller);
    `tables` maps the director's table names to the table service's ids."""

    def t(name: str) -> str:
        return tables.get(name, name)

    out = pb.TournamentEvent()
    if isinstance(event, ev.RegistrationOpened):
        out.registration_opened.SetInParent()
    elif isinstance(event, ev.PlayerRegistered):
        out.player_registered.CopyFrom(
            pb.PlayerRegistered(
                player_id=event.player,
                entry_id=event.entry,
                entries=event.entries,
                buy_in=event.buy_in,
                fee=event.fee,
                re_entry=event.re_entry,
            )
        )
    elif isinstance(event, ev.PlayerUnregistered):
        out.player_unregistered.CopyFrom(
            pb.PlayerUnregistered(player_id=event.player, entry_id=event.entry, refund=event.refund)
        )
    elif isinstance(event, ev.RegistrationClosed):
        out.registration_closed.CopyFrom(
            pb.RegistrationClosed(entries=event.entries, prize_pool=event.prize_pool, prizes=event.prizes)
        )
    elif isinstance(event, ev.SpinMultiplierDrawn):
        out.spin_multiplier_drawn.CopyFrom(
            pb.SpinMultiplierDrawn(
                multiplier=event.multiplier,
                chance_per_million=event.chance,
                prize_pool=event.prize_pool,
                split_basis_points=event.split,
                shoe_id=str(spin.get("shoe_id", "")),
                draw=int(spin.get("draw", 0)),
            )
        )
    elif isinstance(event, ev.TournamentStarted):
        out.tournament_started.CopyFrom(pb.TournamentStarted(entries=event.entries, tables=event.tables))
    elif isinstance(event, ev.TableOpened):
        out.table_opened.CopyFrom(pb.TableOpened(table_id=t(event.table)))
    elif isinstance(event, ev.PlayerSeated):
        out.player_seated.CopyFrom(
            pb.PlayerSeated(
                player_id=event.player,
                entry_id=event.entry,
                table_id=t(event.table),
                seat=event.seat,
                stack=event.stack,
            )
        )
    elif isinstance(event, ev.PlayerMoved):
        out.player_moved.CopyFrom(
            pb.PlayerMoved(
                player_id=event.player,
                entry_id=event.entry,
                from_table_id=t(event.from_table),
                to_table_id=t(event.to_table),
                reason=event.reason,
            )
        )
    elif isinstance(event, ev.TableBroken):
        out.table_broken.CopyFrom(pb.TableBroken(table_id=t(event.table)))
    elif isinstance(event, ev.FinalTable):
        out.final_table.CopyFrom(pb.FinalTable(table_id=t(event.table), players=event.players))
    elif isinstance(event, ev.LevelStarted):
        out.level_started.CopyFrom(
            pb.LevelStarted(
                level=event.level,
                blinds=_blinds(event.small_blind, event.big_blind, event.ante),
                ends_ms=event.ends_at or 0,
                hands=event.hands,
            )
        )
    elif isinstance(event, ev.BreakStarted):
        out.break_started.CopyFrom(pb.BreakStarted(ends_ms=event.ends_at))
    elif isinstance(event, ev.BreakEnded):
        out.break_ended.SetInParent()
    elif isinstance(event, ev.HandForHandStarted):
        out.hand_for_hand_started.CopyFrom(pb.HandForHandStarted(players=event.players, paid=event.paid))
    elif isinstance(event, ev.HandForHandEnded):
        out.hand_for_hand_ended.SetInParent()
    elif isinstance(event, ev.PlayerEliminated):
        out.player_eliminated.CopyFrom(
            pb.PlayerEliminated(
                player_id=event.player,
                entry_id=event.entry,
                place=event.place,
                shared=event.shared,
                prize=event.prize,
                table_id=t(event.table),
            )
        )
    elif isinstance(event, ev.TournamentPaused):
        out.tournament_paused.SetInParent()
    elif isinstance(event, ev.TournamentResumed):
        out.tournament_resumed.SetInParent()
    elif isinstance(event, ev.TournamentCancelled):
        out.tournament_cancelled.CopyFrom(
            pb.TournamentCancelled(
                refunds=[pb.Refund(player_id=p, entry_id=e, amount=a) for p, e, a in event.refunds],
                reason=event.reason,
            )
        )
    elif isinstance(event, ev.PrizesPaid):
        out.prizes_paid.CopyFrom(
            pb.PrizesPaid(
                payouts=[
                    pb.Payout(player_id=p, entry_id=e, place=k, amount=a) for p, e, k, a in event.payouts
                ]
            )
        )
    elif isinstance(event, ev.TournamentFinished):
        out.tournament_finished.CopyFrom(
            pb.TournamentFinished(winner_player_id=event.winner, winner_entry_id=event.entry)
        )
    else:  # pragma: no cover - every core event has its message
        raise AssertionError(f"unknown event {type(event).__name__}")
    return out


# ------------------------------------------------------------------ the definition


def _bad(field: str, reason: str, message: str) -> Refusal:
    return errors.invalid_argument(field, reason, message)


def structure_of(entries: Sequence[pb.StructureEntry]) -> Structure:
    out: list[Level | Break] = []
    for k, entry in enumerate(entries):
        which = entry.WhichOneof("entry")
        if which == "level":
            lv = entry.level
            for name in ("small_blind", "big_blind", "ante"):
                if not 0 <= getattr(lv, name) <= MAX_CHIPS:
                    raise _bad(f"levels[{k}].level.{name}", "AMOUNT_TOO_LARGE", f"at most {MAX_CHIPS} chips")
            out.append(Level(lv.small_blind, lv.big_blind, lv.ante, lv.duration_seconds * 1000, lv.hands))
        elif which == "break_time":
            out.append(Break(entry.break_time.duration_seconds * 1000))
        else:
            raise _bad(f"levels[{k}]", "INVALID_SPEC", "each entry is a level or a break")
    return tuple(out)


def structure_message(levels: Structure) -> list[pb.StructureEntry]:
    out = []
    for entry in levels:
        if isinstance(entry, Break):
            out.append(pb.StructureEntry(break_time=pb.Break(duration_seconds=entry.duration_ms // 1000)))
        else:
            out.append(
                pb.StructureEntry(
                    level=pb.BlindLevel(
                        small_blind=entry.small_blind,
                        big_blind=entry.big_blind,
                        ante=entry.ante,
                        duration_seconds=entry.duration_ms // 1000,
                        hands=entry.hands,
                    )
                )
            )
    return out


def spin_message(table: SpinTable) -> list[pb.SpinMultiplier]:
    return [
        pb.SpinMultiplier(multiplier=m.multiplier, chance_per_million=m.chance, split_basis_points=m.split)
        for m in table.entries
    ]


def spec_of(request: pb.CreateTournamentRequest) -> TournamentSpec:
    """The core's definition of a tournament (its own checks raise TournamentError INVALID_SPEC naming the
    field; the caller maps it). Field names are the request's."""
    fmt = FORMATS.get(request.format)
    if fmt is None:
        raise _bad("format", "FORMAT_REQUIRED", "give the format: sit & go, spin or scheduled")
    game = GAMES.get(request.game)
    if game is None:
        raise _bad("game", "GAME_REQUIRED", "give the game: NLHE, PLO or Naiko")
    for name in ("buy_in", "fee", "starting_stack"):
        if not 0 <= getattr(request, name) <= MAX_CHIPS:
            raise _bad(name, "AMOUNT_TOO_LARGE", f"{name} is 0 to {MAX_CHIPS} chips")
    if request.decision_seconds > 600 or request.time_bank_seconds > 3600:
        raise _bad("decision_seconds", "TIMERS_OUT_OF_RANGE", "at most 600 s a decision, 3,600 s of bank")
    if request.bot_fill_seconds > 3600:
        raise _bad("bot_fill_seconds", "BOT_FILL_OUT_OF_RANGE", "at most 3,600 seconds")
    if fmt is Format.SIT_AND_GO:
        base = TournamentSpec.sit_and_go(
            seats=request.seats_per_table or 6, buy_in=request.buy_in, fee=request.fee
        )
    elif fmt is Format.SPIN:
        base = TournamentSpec.spin_and_go(buy_in=request.buy_in, fee=request.fee)
        if request.seats_per_table:
            base = replace(base, seats_per_table=request.seats_per_table)
    else:
        base = TournamentSpec.scheduled(
            starts_at=request.starts_ms,
            buy_in=request.buy_in,
            fee=request.fee,
            seats_per_table=request.seats_per_table or 9,
            registration_opens_at=request.registration_opens_ms,
            registration_closes_at=request.registration_closes_ms or None,
            late_registration_levels=request.late_registration_levels,
            re_entries=request.re_entries,
            min_entries=request.min_entries or 2,
            max_entries=request.max_entries or 10_000,
            hand_for_hand=not request.no_hand_for_hand,
        )
    overrides: dict[str, Any] = {"game": game}
    if request.starting_stack:
        overrides["starting_stack"] = request.starting_stack
    if request.levels:
        overrides["levels"] = structure_of(request.levels)
    if request.payout_weights:
        overrides["payout"] = tuple(request.payout_weights)
    if request.spin_table:
        overrides["spin"] = SpinTable(
            tuple(
                Multiplier(m.multiplier, m.chance_per_million, tuple(m.split_basis_points))
                for m in request.spin_table
            )
        )
    return replace(base, **overrides)


def default_spin() -> SpinTable:
    return DEFAULT_SPIN
