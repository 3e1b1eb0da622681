"""CasinoService: messages <-> the casino tables. Every call needs a token; a player acts on their own seats
(the player id is the token's subject), and sees only what `round_view` shows them.

Every mutating call is idempotent by its request_id, scoped to the caller, the RPC and the table
(`servicekit.idempotency`): the first answer is stored and a repeat gets it again, changing nothing; the
same id with another request is REQUEST_ID_REUSED. The record of a request is committed with the step it
makes, so a retry after a crash between the step and its answer does not make the step twice: it is answered
from the step's result and the table as it is now."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import casino_service_pb2_grpc as pb_grpc
from pokerrules.casino import BetKind, Game, Phase, default_config, rules_of
from pokerrules.casino.catalog import describe
from pokerrules.casino.gamemath.summary import bet_rtps
from servicekit import errors
from servicekit.auth import Role, current_caller, require_role
from servicekit.idempotency import Saved, check_request_id, fingerprint, replayed, request_key

from services.table.casino import proof
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
from services.table.casino.crashpoint import crash_point
from services.table.casino.store import RequestMark
from services.table.casino.table import CasinoTable

M = TypeVar("M", bound=Message)
WATCH_POLL_SECONDS = 0.5
MAX_HISTORY = 50
MAX_TABLE_ID = 64
MAX_BETS = 16  # bet entries in one PlaceBets (a game has at most four placeable bets)


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
                rule=limits["rule"],
            )
        )
    return pb.GameInfo(
        game=game_pb(game),
        rules=info["rules"],
        rule_prefix=info["rule_prefix"],
        bets=bets,
        decisions=[
            pb.DecisionRule(
                phase=d["phase"],
                decision=decision_pb(d["decision"]),
                bet=d["bet"] or "",
                multiple_of_ante=d["multiple_of_ante"],
                automatic_on_timeout=d["automatic_on_timeout"],
                rule=d["rule"],
            )
            for d in info["decisions"]
        ],
        paytables=[
            pb.Paytable(
                name=name,
                lines=[pb.PaytableLine(line=k, pays=v) for k, v in table["lines"].items()],
                bets=table["bets"],
                rule=table["rule"],
            )
            for name, table in info["paytables"].items()
        ],
        settlement_lines=[pb.SettlementLine(**line) for line in info["settlement_lines"]],
        readings=[
            pb.Reading(name=k, value=v["value"], rule=v["rule"], meaning=v["meaning"])
            for k, v in info["readings"].items()
        ],
    )


def _table_id(value: str) -> str:
    """A table id is short (tables.TABLE_ID); a longer one is refused without echoing it back."""
    if not value:
        raise errors.invalid_argument("table_id", "TABLE_ID_REQUIRED", "give the table id")
    if len(value) > MAX_TABLE_ID:
        raise errors.invalid_argument(
            "table_id", "TABLE_ID_TOO_LONG", f"a table id has at most {MAX_TABLE_ID} characters"
        )
    return value


MAX_CLIENT_SEED_BYTES = 256  # as the dealer takes them (dealing.client_seeds)


def _client_seed(value: str) -> str:
    """PlaceBets' optional client seed: empty, or 1-256 bytes of printable text."""
    if value and (len(value.encode("utf-8", "replace")) > MAX_CLIENT_SEED_BYTES or not value.isprintable()):
        raise errors.invalid_argument(
            "client_seed",
            "CLIENT_SEED_INVALID",
            f"a client seed is 1-{MAX_CLIENT_SEED_BYTES} bytes of printable text",
        )
    return value


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

    def _once(
        self,
        rpc: str,
        request: Any,
        table: CasinoTable,
        kind: type[M],
        act: Callable[[RequestMark], dict[str, Any]],
        answer: Callable[[dict[str, Any]], M],
    ) -> M:
        """Idempotency: `act(mark)` makes the change (recording `mark` with its step) and returns what it
        decided; `answer(result)` builds the response. A repeat of a request gets the first answer."""
        mark = RequestMark(
            request_key(rpc, request.request_id, scope=table.spec.table_id), fingerprint(request)
        )
        store = self._casino.store
        # One copy of a request at a time: a repeat in flight waits and gets the first answer.
        with table.lock:
            saved = store.request(mark.key)
            if saved is None:
                result = act(mark)
                crash_point(f"before-answer-{rpc}")  # the step is logged, its answer not yet stored
            else:
                # REQUEST_ID_REUSED when the same id came with another request.
                first = replayed(Saved(saved.fingerprint, saved.response or b""), request, kind)
                if saved.response is not None and first is not None:
                    return first
                result = saved.result  # the step was made, its answer lost in a crash: answer it now
            response = answer(result)
            store.save_answer(mark, result, response.SerializeToString())
            return response

    def _table(self, table_id: str) -> CasinoTable:
        return self._casino.table(_table_id(table_id))

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
                bets=[
                    pb.BetLimit(kind=str(kind), minimum=limits.minimum, maximum=limits.maximum)
                    for kind, limits in table.config.limits.items()
                    if kind in rules_of(table.spec.game).placeable
                ],
            )

    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=self._game_infos())

    def ListCasinoTables(
        self, request: pb.ListCasinoTablesRequest, context: grpc.ServicerContext
    ) -> pb.ListCasinoTablesResponse:
        if request.game not in pb.CasinoGame.values():
            raise errors.invalid_argument(
                "game", "GAME_UNKNOWN", "game is one of the CasinoGame values (or unset: every game)"
            )
        wanted = game_of(request.game)
        tables = []
        for t in list(self._casino.tables.values()):
            if wanted is not None and t.spec.game != wanted:
                continue
            table_id = t.spec.table_id
            # Another shard's table: its settings and its shard's address (its seats and round: ask it).
            table = self._casino.table(table_id) if self._casino.serves(table_id) else t
            listed = self._table_pb(table)
            listed.shard_address = self._casino.address_of(table_id)
            tables.append(listed)
        return pb.ListCasinoTablesResponse(tables=tables)

    def JoinCasinoTable(
        self, request: pb.JoinCasinoTableRequest, context: grpc.ServicerContext
    ) -> pb.JoinCasinoTableResponse:
        player = _player()
        table = self._table(request.table_id)
        check_request_id(request.request_id)
        self._casino.require_account(player)

        def act(mark: RequestMark) -> dict[str, Any]:
            seat, already = self._casino.join(table, player, request.seat, mark)
            return {"seat": seat, "already": already}

        def answer(result: dict[str, Any]) -> pb.JoinCasinoTableResponse:
            return pb.JoinCasinoTableResponse(
                seat=int(result["seat"]),
                table=self._table_pb(table),
                already_seated=bool(result.get("already", False)),
            )

        return self._once("JoinCasinoTable", request, table, pb.JoinCasinoTableResponse, act, answer)

    def LeaveCasinoTable(
        self, request: pb.LeaveCasinoTableRequest, context: grpc.ServicerContext
    ) -> pb.LeaveCasinoTableResponse:
        player = _player()
        table = self._table(request.table_id)

        def act(mark: RequestMark) -> dict[str, Any]:
            left, later = table.leave(player, request.seat, mark)
            return {"left": left, "later": later}

        def answer(result: dict[str, Any]) -> pb.LeaveCasinoTableResponse:
            return pb.LeaveCasinoTableResponse(
                seats_left=result["left"], seats_leaving_after_round=result["later"]
            )

        return self._once("LeaveCasinoTable", request, table, pb.LeaveCasinoTableResponse, act, answer)

    def _round_change(
        self,
        rpc: str,
        request: Any,
        kind: type[M],
        change: Callable[[CasinoTable, str, RequestMark], None],
    ) -> M:
        """A change whose answer is the round as the caller sees it after it."""
        player = _player()
        table = self._table(request.table_id)

        def act(mark: RequestMark) -> dict[str, Any]:
            change(table, player, mark)
            return {}

        def answer(result: dict[str, Any]) -> M:
            return kind(round=self._view(table, player))

        return self._once(rpc, request, table, kind, act, answer)

    def PlaceBets(self, request: pb.PlaceBetsRequest, context: grpc.ServicerContext) -> pb.PlaceBetsResponse:
        _player()  # the role before the request is read (a service or operator learns nothing of it)
        if len(request.bets) > MAX_BETS:
            raise errors.invalid_argument("bets", "TOO_MANY_BETS", f"at most {MAX_BETS} bets in one call")
        bets: dict[BetKind, int] = {}
        for bet in request.bets:
            try:
                kind = BetKind(bet.kind)
            except ValueError:
                raise errors.invalid_argument(
                    "bets", "BET_NOT_OFFERED", "no such bet: the bets are named as ListGames lists them"
                ) from None
            bets[kind] = bets.get(kind, 0) + int(bet.amount)
        seat = _seat(request.seat)
        seed = _client_seed(request.client_seed)
        return self._round_change(
            "PlaceBets",
            request,
            pb.PlaceBetsResponse,
            lambda table, player, mark: table.place_bets(player, seat, bets, mark, seed),
        )

    def Rebet(self, request: pb.RebetRequest, context: grpc.ServicerContext) -> pb.RebetResponse:
        _player()
        seat = _seat(request.seat)
        return self._round_change(
            "Rebet", request, pb.RebetResponse, lambda table, player, mark: table.rebet(player, seat, mark)
        )

    def ClearBets(self, request: pb.ClearBetsRequest, context: grpc.ServicerContext) -> pb.ClearBetsResponse:
        _player()
        seat = _seat(request.seat)
        return self._round_change(
            "ClearBets",
            request,
            pb.ClearBetsResponse,
            lambda table, player, mark: table.clear_bets(player, seat, mark),
        )

    def DealRound(self, request: pb.DealRoundRequest, context: grpc.ServicerContext) -> pb.DealRoundResponse:
        return self._round_change(
            "DealRound",
            request,
            pb.DealRoundResponse,
            lambda table, player, mark: table.deal_now(player, mark),
        )

    def Decide(self, request: pb.DecideRequest, context: grpc.ServicerContext) -> pb.DecideResponse:
        _player()
        decision = decision_of(request.decision)
        if decision is None:
            raise errors.invalid_argument("decision", "DECISION_REQUIRED", "give a decision")
        phase = None
        if request.phase:
            try:
                phase = Phase(request.phase)
            except ValueError:
                raise errors.invalid_argument(
                    "phase", "PHASE_UNKNOWN", "the street is PRE_FLOP, FLOP, TURN or DECISION (or empty)"
                ) from None
        seat = _seat(request.seat)
        return self._round_change(
            "Decide",
            request,
            pb.DecideResponse,
            lambda table, player, mark: table.decide(player, seat, decision, phase, mark),
        )

    def GetRound(self, request: pb.GetRoundRequest, context: grpc.ServicerContext) -> pb.GetRoundResponse:
        caller = current_caller()
        table = self._table(request.table_id)
        viewer = caller.subject if caller.role is Role.PLAYER else ""
        return pb.GetRoundResponse(round=self._view(table, viewer))

    def WatchCasinoTable(
        self, request: pb.WatchCasinoTableRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.WatchCasinoTableResponse]:
        caller = current_caller()
        viewer = caller.subject if caller.role is Role.PLAYER else ""
        table = self._table(request.table_id)
        next_seq = max(1, request.from_seq)
        while context.is_active():
            with table.lock:
                if table.seq < next_seq and not table.moved:
                    table.changed.wait(WATCH_POLL_SECONDS)
                last = table.seq
            if table.moved:  # another shard serves it now: where to resume, from which event
                self._casino.locate(table.spec.table_id, from_seq=next_seq)
                table = self._table(request.table_id)  # this shard took it back: the new copy
                continue
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
            self._table(request.table_id)  # NOT_FOUND for an unknown table
        limit = min(request.limit or 10, MAX_HISTORY)
        records = []
        for table_id, number in self._casino.store.rounds_of(player, request.table_id, limit):
            book = self._casino.replay(table_id, number)
            logged = self._casino.round_events(table_id, number)
            events = [event_pb(e) for e in logged if visible_to(e, player)]
            last_seq = logged[-1].seq if logged else 0  # resume WatchCasinoTable after the round
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
                    final=round_pb(table_id, book, player, 0, last_seq),
                    net=net,
                )
            )
        return pb.GetGameHistoryResponse(rounds=records)

    def GetRoundProof(
        self, request: pb.GetRoundProofRequest, context: grpc.ServicerContext
    ) -> pb.GetRoundProofResponse:
        caller = require_role(Role.PLAYER, Role.OPERATOR)
        viewer = caller.subject if caller.role is Role.PLAYER else None
        table = self._table(request.table_id)
        if request.round == 0:
            raise errors.invalid_argument("round", "ROUND_REQUIRED", "rounds are numbered from 1")
        number = request.round
        if number > self._casino.store.last_round(table.spec.table_id):
            raise errors.not_found("ROUND_NOT_FOUND", "no round was dealt with that number", round=number)
        book = self._casino.replay(table.spec.table_id, number)
        events = self._casino.round_events(table.spec.table_id, number)
        if viewer is not None:
            seated = {s.player_id for s in book.state.seats} | {
                str(c.get("player_id")) for c in book.contributions
            }
            if viewer not in seated:
                raise errors.permission_denied("NOT_IN_ROUND", "you held no seat in that round")
        with table.lock:
            current = table.book.unrevealed
        waiting = not book.paid or (current is not None and int(current["round"]) == number)
        return proof.build(table.spec.table_id, number, book, events, viewer, waiting)
