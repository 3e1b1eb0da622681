"""CasinoService: messages <-> the casino tables. Every call needs a token; a player acts on their own seats
(the player id is the token's subject), and sees only what `round_view` shows them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from fractions import Fraction
from typing import TypeVar

import grpc
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import casino_service_pb2_grpc as pb_grpc
from pokerrules.casino import BetKind, Game, Phase, default_config
from pokerrules.casino.catalog import describe
from pokerrules.casino.gamemath.summary import bet_rtps
from servicekit import errors
from servicekit.auth import Role, current_caller, require_role

from services.table.casino.casino import Casino
from services.table.casino.convert import (
    decision_of,
    decision_pb,
    event_pb,
    game_of,
    game_pb,
    round_pb,
    visible_to,
)
from services.table.casino.table import CasinoTable

R = TypeVar("R")
WATCH_POLL_SECONDS = 0.5
MAX_HISTORY = 50


def _player() -> str:
    return require_role(Role.PLAYER).subject


def _game_info(game: Game) -> pb.GameInfo:
    config = default_config(game)
    info = describe(config)
    rtps: dict[BetKind, Fraction | None] = bet_rtps(config)
    bets = []
    for kind, limits in info["bets"].items():
        rtp = rtps.get(BetKind(kind))
        bets.append(
            pb.BetLimit(
                kind=kind,
                minimum=limits["minimum"],
                maximum=limits["maximum"],
                rtp_percent=float(rtp * 100) if rtp is not None else 0.0,
                rtp_known=rtp is not None,
                rtp_note=""
                if rtp is not None
                else (
                    "depends on the pool (TCP-2.5)"
                    if kind == "PROGRESSIVE"
                    else "main game under optimal strategy: not computed for this configuration "
                    "(`felt math` writes known_rtp.json; docs/game-math.md)"
                ),
            )
        )
    return pb.GameInfo(
        game=game_pb(game),
        rules=info["rules"],
        bets=bets,
        decisions=[
            pb.DecisionRule(
                phase=d["phase"],
                decision=decision_pb(d["decision"]),
                bet=d["bet"] or "",
                multiple_of_ante=d["multiple_of_ante"],
                automatic_on_timeout=d["automatic_on_timeout"],
            )
            for d in info["decisions"]
        ],
        paytables=[
            pb.Paytable(name=name, lines=[pb.PaytableLine(line=k, pays=v) for k, v in lines.items()])
            for name, lines in info["paytables"].items()
        ],
        readings=[pb.Reading(name=k, value=v["value"], rule=v["rule"]) for k, v in info["readings"].items()],
    )


def _seat(value: int) -> int:
    if value <= 0:
        raise errors.invalid_argument("seat", "SEAT_REQUIRED", "give the seat number (1..7)")
    return value


class CasinoServicer(pb_grpc.CasinoServiceServicer):
    def __init__(self, casino: Casino) -> None:
        self._casino = casino
        self._games: dict[Game, pb.GameInfo] = {}
        self._games_lock = threading.Lock()
        # The side bets' exact RTPs take seconds of enumeration: computed once, from start, off the RPC path,
        # so the first ListGames does not run into its caller's deadline.
        threading.Thread(target=self._game_infos, name="casino-game-math", daemon=True).start()

    def _game_infos(self) -> list[pb.GameInfo]:
        games = sorted({t.spec.game for t in self._casino.tables.values()}, key=lambda g: game_pb(g))
        with self._games_lock:
            for game in games:
                if game not in self._games:
                    self._games[game] = _game_info(game)
            return [self._games[g] for g in games]

    def _view(self, table: CasinoTable, player: str) -> pb.RoundView:
        with table.lock:
            return round_pb(table.spec.table_id, table.book, player, table.deadline_ms(), table.seq)

    def _table_pb(self, table: CasinoTable) -> pb.CasinoTable:
        with table.lock:
            return pb.CasinoTable(
                table_id=table.spec.table_id,
                game=game_pb(table.spec.game),
                seat_count=table.spec.seats,
                seats=[
                    pb.CasinoSeat(seat=n, player_id=table.book.players.get(n, ""))
                    for n in range(1, table.spec.seats + 1)
                ],
                round=max(table.book.state.round_number, 0),
                phase=str(table.book.state.phase),
                decision_seconds=int(table.decision_seconds),
                betting_seconds=int(table.betting_seconds),
            )

    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=self._game_infos())

    def ListCasinoTables(
        self, request: pb.ListCasinoTablesRequest, context: grpc.ServicerContext
    ) -> pb.ListCasinoTablesResponse:
        wanted = game_of(request.game)
        tables = [
            self._table_pb(self._casino.table(t.spec.table_id))
            for t in self._casino.tables.values()
            if wanted is None or t.spec.game == wanted
        ]
        return pb.ListCasinoTablesResponse(tables=tables)

    def JoinCasinoTable(
        self, request: pb.JoinCasinoTableRequest, context: grpc.ServicerContext
    ) -> pb.JoinCasinoTableResponse:
        player = _player()
        table = self._casino.table(request.table_id)
        seat, already = table.join(player, request.seat)
        return pb.JoinCasinoTableResponse(seat=seat, table=self._table_pb(table), already_seated=already)

    def LeaveCasinoTable(
        self, request: pb.LeaveCasinoTableRequest, context: grpc.ServicerContext
    ) -> pb.LeaveCasinoTableResponse:
        player = _player()
        left, later = self._casino.table(request.table_id).leave(player, request.seat)
        return pb.LeaveCasinoTableResponse(seats_left=left, seats_leaving_after_round=later)

    def PlaceBets(self, request: pb.PlaceBetsRequest, context: grpc.ServicerContext) -> pb.PlaceBetsResponse:
        player = _player()
        bets: dict[BetKind, int] = {}
        for bet in request.bets:
            try:
                kind = BetKind(bet.kind)
            except ValueError:
                raise errors.invalid_argument(
                    "bets", "BET_NOT_OFFERED", f"no bet named {bet.kind!r}"
                ) from None
            bets[kind] = bets.get(kind, 0) + int(bet.amount)
        table = self._casino.table(request.table_id)
        table.place_bets(player, _seat(request.seat), bets)
        return pb.PlaceBetsResponse(round=self._view(table, player))

    def Rebet(self, request: pb.RebetRequest, context: grpc.ServicerContext) -> pb.RebetResponse:
        player = _player()
        table = self._casino.table(request.table_id)
        table.rebet(player, _seat(request.seat))
        return pb.RebetResponse(round=self._view(table, player))

    def ClearBets(self, request: pb.ClearBetsRequest, context: grpc.ServicerContext) -> pb.ClearBetsResponse:
        player = _player()
        table = self._casino.table(request.table_id)
        table.clear_bets(player, _seat(request.seat))
        return pb.ClearBetsResponse(round=self._view(table, player))

    def DealRound(self, request: pb.DealRoundRequest, context: grpc.ServicerContext) -> pb.DealRoundResponse:
        player = _player()
        table = self._casino.table(request.table_id)
        table.deal_now(player)
        return pb.DealRoundResponse(round=self._view(table, player))

    def Decide(self, request: pb.DecideRequest, context: grpc.ServicerContext) -> pb.DecideResponse:
        player = _player()
        decision = decision_of(request.decision)
        if decision is None:
            raise errors.invalid_argument("decision", "DECISION_REQUIRED", "give a decision")
        phase = None
        if request.phase:
            try:
                phase = Phase(request.phase)
            except ValueError:
                raise errors.invalid_argument(
                    "phase", "PHASE_UNKNOWN", f"no street {request.phase!r}"
                ) from None
        table = self._casino.table(request.table_id)
        table.decide(player, _seat(request.seat), decision, phase)
        return pb.DecideResponse(round=self._view(table, player))

    def GetRound(self, request: pb.GetRoundRequest, context: grpc.ServicerContext) -> pb.GetRoundResponse:
        caller = current_caller()
        table = self._casino.table(request.table_id)
        viewer = caller.subject if caller.role is Role.PLAYER else ""
        return pb.GetRoundResponse(round=self._view(table, viewer))

    def WatchCasinoTable(
        self, request: pb.WatchCasinoTableRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.WatchCasinoTableResponse]:
        caller = current_caller()
        viewer = caller.subject if caller.role is Role.PLAYER else ""
        table = self._casino.table(request.table_id)
        next_seq = max(1, request.from_seq)
        while context.is_active():
            with table.lock:
                if table.seq < next_seq:
                    table.changed.wait(WATCH_POLL_SECONDS)
                last = table.seq
            if last < next_seq:
                continue
            for event in self._casino.store.events(table.spec.table_id, next_seq):
                if event.seq > last:
                    break
                if visible_to(event, viewer):
                    yield pb.WatchCasinoTableResponse(event=event_pb(event))
            next_seq = last + 1

    def GetGameHistory(
        self, request: pb.GetGameHistoryRequest, context: grpc.ServicerContext
    ) -> pb.GetGameHistoryResponse:
        player = _player()
        if request.table_id:
            self._casino.table(request.table_id)  # NOT_FOUND for an unknown table
        limit = min(request.limit or 10, MAX_HISTORY)
        records = []
        for table_id, number in self._casino.store.rounds_of(player, request.table_id, limit):
            book = self._casino.replay(table_id, number)
            events = [
                event_pb(e) for e in self._casino.round_events(table_id, number) if visible_to(e, player)
            ]
            settlement = book.state.settlement
            net = 0
            if settlement is not None:
                net = sum(r.net for r in settlement.results if r.player_id == player)
            records.append(
                pb.RoundRecord(
                    table_id=table_id,
                    game=game_pb(book.spec.game),
                    round=number,
                    events=events,
                    final=round_pb(table_id, book, player, 0, 0),
                    net=net,
                )
            )
        return pb.GetGameHistoryResponse(rounds=records)
