"""The lobby (`felt play --lobby`, or `lobby` at a table): the poker tables with their players, stakes,
average pot and hands per hour, the tournaments with their entries and start, the casino tables, and the
player's wallet balance. `read` asks the services (each part says so when its service does not answer);
`lines` turns what was read into text (pure)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import table_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2 as tpb
from poker.wallet.v1 import wallet_service_pb2 as wpb

from felt.play import render
from felt.play.stream import describe_error

CALL_SECONDS = 5.0
SHOWN_STATES = (tpb.STATE_ANNOUNCED, tpb.STATE_REGISTERING, tpb.STATE_RUNNING)
CASINO_NAMES = {
    cpb.CASINO_GAME_TEXAS_HOLDEM_BONUS: "Texas Hold'em Bonus",
    cpb.CASINO_GAME_CASINO_HOLDEM: "Casino Hold'em",
    cpb.CASINO_GAME_THREE_CARD_POKER: "Three Card Poker",
}
SIT_AND_GO = (tpb.FORMAT_SIT_AND_GO, tpb.FORMAT_SPIN)
FORMATS = {tpb.FORMAT_SIT_AND_GO: "Sit & Go", tpb.FORMAT_SPIN: "Spin", tpb.FORMAT_SCHEDULED: "scheduled"}


@dataclass
class Lobby:
    """What the services answered; a part whose service did not answer is None, with the reason in
    `unavailable` (by part)."""

    tables: list[pb.TableInfo] | None = None
    tournaments: list[tpb.Tournament] | None = None
    casino: list[cpb.CasinoTable] | None = None
    accounts: list[wpb.Account] | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


def read(tables: Any, tournaments: Any = None, casino: Any = None, wallet: Any = None) -> Lobby:
    """Ask each service given (stubs called with the player's token) for its part of the lobby."""
    lobby = Lobby()
    try:
        lobby.tables = list(
            tables.ListTables(pb.ListTablesRequest(page_size=100), timeout=CALL_SECONDS).tables
        )
    except grpc.RpcError as error:
        lobby.unavailable["tables"] = describe_error(error)
    if tournaments is not None:
        try:
            listed = tournaments.ListTournaments(
                tpb.ListTournamentsRequest(page_size=100), timeout=CALL_SECONDS
            )
            lobby.tournaments = [t for t in listed.tournaments if t.state in SHOWN_STATES]
        except grpc.RpcError as error:
            lobby.unavailable["tournaments"] = describe_error(error)
    if casino is not None:
        try:
            tables_request = cpb.ListCasinoTablesRequest()
            lobby.casino = list(casino.ListCasinoTables(tables_request, timeout=CALL_SECONDS).tables)
        except grpc.RpcError as error:
            lobby.unavailable["casino"] = describe_error(error)
    if wallet is not None:
        try:
            # A player token lists the player's own accounts only (WalletService.ListAccounts).
            mine = wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER)
            lobby.accounts = list(wallet.ListAccounts(mine, timeout=CALL_SECONDS).accounts)
        except grpc.RpcError as error:
            lobby.unavailable["wallet"] = describe_error(error)
    return lobby


def balance_line(accounts: Sequence[wpb.Account]) -> str:
    if not accounts:
        return "Your wallet: no account yet (felt play opens one with development chips when you sit down)"
    balance = sum(a.balance for a in accounts)
    pending = sum(a.pending for a in accounts)
    held = f" ({pending:,} of them held by bets and buy-ins in play)" if pending else ""
    return f"Your wallet: {balance:,} chips{held}"


def _players(info: pb.TableInfo) -> str:
    seated = [s for s in info.seats if s.player_id]
    bots = sum(s.is_bot for s in seated)
    text = f"{len(seated)}/{info.settings.seats}"
    return text + (f" ({bots} bots)" if bots else "")


def _stakes(info: pb.TableInfo) -> str:
    return f"{info.settings.small_blind}/{info.settings.big_blind}"


def table_rows(tables: Sequence[pb.TableInfo]) -> list[str]:
    rows = [("table", "game", "stakes", "players", "avg pot", "hands/h")]
    for info in tables:
        name = info.table_id + (" (private)" if info.settings.private else "")
        game = render.GAME_NAMES.get(info.settings.game, "?")
        pot = f"{info.average_pot:,}" if info.hands_per_hour else "-"
        rows.append((name, game, _stakes(info), _players(info), pot, str(info.hands_per_hour or "-")))
    return _columns(rows, right=(4, 5))


def _start(t: tpb.Tournament, now_ms: int) -> str:
    if t.state == tpb.STATE_RUNNING:
        return "running"
    if t.format in SIT_AND_GO:
        fill = f", bots fill it {t.bot_fill_seconds} s after the first" if t.bot_fill_seconds else ""
        return f"starts when its {t.seats_per_table} seats fill{fill}"
    if not t.starts_ms:
        return "start not set"
    when = time.strftime("%H:%M", time.localtime(t.starts_ms / 1000))
    minutes = round((t.starts_ms - now_ms) / 60_000)
    return f"starts {when}" + (f" (in {minutes} min)" if minutes > 0 else "")


def tournament_rows(tournaments: Sequence[tpb.Tournament], now_ms: int) -> list[str]:
    rows = [("tournament", "format", "buy-in", "entries", "start")]
    for t in tournaments:
        # A Sit & Go or a Spin starts when its one table fills: its seats are its entries.
        most = t.seats_per_table if t.format in SIT_AND_GO else t.max_entries
        cap = f"/{most}" if most else ""
        rows.append(
            (
                f"{t.name or t.tournament_id} ({t.tournament_id})",
                FORMATS.get(t.format, "?"),
                f"{t.buy_in:,} + {t.fee:,}",
                f"{t.entries}{cap}",
                _start(t, now_ms),
            )
        )
    return _columns(rows)


def casino_rows(tables: Sequence[cpb.CasinoTable]) -> list[str]:
    rows = [("casino table", "game", "seats taken")]
    for table in tables:
        taken = sum(1 for s in table.seats if s.player_id)
        rows.append((table.table_id, CASINO_NAMES.get(table.game, "?"), f"{taken}/{table.seat_count}"))
    return _columns(rows)


def _columns(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [
            c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def lines(lobby: Lobby, now_ms: int | None = None) -> list[str]:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    out = []
    if lobby.accounts is not None:
        out.append(balance_line(lobby.accounts))
    elif "wallet" in lobby.unavailable:
        out.append(f"Your wallet: not available ({lobby.unavailable['wallet']})")
    out.append("Tables (average pot and hands per hour over the last hour):")
    if lobby.tables:
        out.extend(table_rows(lobby.tables))
    else:
        out.append(f"  {lobby.unavailable.get('tables', 'none open')}")
    if lobby.tournaments is not None or "tournaments" in lobby.unavailable:
        out.append("Tournaments:")
        if lobby.tournaments:
            out.extend(tournament_rows(lobby.tournaments, now_ms))
        else:
            out.append(f"  {lobby.unavailable.get('tournaments', 'none open')}")
    if lobby.casino:
        out.append("Casino (felt play --casino thb|ch|tcp):")
        out.extend(casino_rows(lobby.casino))
    return out
