"""TableDirectorService: the tournament director's side of the table service (NK-6.3 to NK-6.6). Service
callers only; each call is one typed command of the table core (`SeatPlayer`, `RemovePlayer`, `SetLevel`,
`ReleaseHands`, `CloseTable`), idempotent by its request id like every TableService change.

Directors are fenced (issue 25): a request's `director_epoch` (its director's lease epoch on the
tournament) below one any shard has seen for the tournament is refused STALE_DIRECTOR, so a tournament
replica that lost its lease (paused past it, partitioned) cannot act at a table after the new owner did.
The floor is kept in the table store (`poker_director_epochs`), shared by every shard: it survives a
restart of the shard and holds at the tournament's tables on the other shards, and at a table another
shard took over. It is checked twice: before anything else (a known-stale director costs no command), and
again in the transaction that writes what the instruction did, the floor row share-locked, so a newer
director's raise between the first check and the write is seen there and the write rolled back
(store._fence_director). 0 is unfenced (a director of before the epoch, an operator by hand)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import grpc
import prometheus_client
from google.protobuf.message import Message
from poker.table.v1 import table_director_service_pb2 as pb
from poker.table.v1 import table_director_service_pb2_grpc as pb_grpc
from pokerrules.table import commands as c
from pokerrules.table import events as te
from servicekit import errors
from servicekit.auth import Role, require_role
from servicekit.logging import get_logger

from services.table.poker.requests import once
from services.table.poker.room import PokerRoom
from services.table.poker.runtime import PokerTable
from services.table.poker.store import DirectorFence, StaleDirector, TableStore
from services.table.poker.tables import MAX_CHIPS, check_tournament_settings

M = TypeVar("M", bound=Message)
MAX_TOURNAMENT_ID = 64
MAX_PLAYER_ID = 128
MAX_HAND_NUMBER = 1 << 62
log = get_logger(service="table")


def _director() -> None:
    """The tournament service (or an operator running a tournament by hand); never a player."""
    require_role(Role.SERVICE, Role.OPERATOR)


def _text(field: str, value: str, cap: int) -> str:
    if not value:
        raise errors.invalid_argument(field, f"{field.upper()}_REQUIRED", f"give the {field}")
    if len(value) > cap or not value.isprintable():
        raise errors.invalid_argument(field, "BAD_ID", f"{field} has 1-{cap} printable characters")
    return value


def _chips(field: str, value: int, *, zero: bool = False) -> int:
    if value < 0 or (value == 0 and not zero) or value > MAX_CHIPS:
        low = 0 if zero else 1
        raise errors.invalid_argument(field, "BAD_AMOUNT", f"{field} is {low} to {MAX_CHIPS} chips")
    return value


STALE_DIRECTORS = prometheus_client.Counter(
    "poker_table_stale_director_refusals_total",
    "Tournament-director instructions refused STALE_DIRECTOR: a newer director of the tournament acted.",
)


class DirectorEpochs:
    """The highest director epoch each tournament's instructions carried to any shard: the store's floor
    (this process's copy refuses a known-stale epoch without a read, and spares the write of one seen)."""

    def __init__(self, store: TableStore) -> None:
        self._store = store
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def check(self, tournament_id: str, epoch: int) -> DirectorFence | None:
        """Refuse an instruction from a director older than one any shard has seen; remember a newer one.
        The store is read every time: another shard may have seen the newer director first. The fence
        returned goes with the instruction's write, which checks it again in its own transaction (a newer
        director may raise the floor between this check and that write: store._fence_director)."""
        if not epoch:
            return None
        with self._lock:
            floor = self._seen.get(tournament_id, 0)
        if epoch >= floor:  # the store's floor (the raise is one atomic statement: no lock held over I/O)
            floor = self._store.director_epoch(tournament_id)
            if epoch > floor:
                floor = self._store.raise_director_epoch(tournament_id, epoch)
                if floor == epoch:
                    log.info("director_epoch_raised", tournament_id=tournament_id, epoch=epoch)
            self._remember(tournament_id, floor)
        if epoch < floor:
            raise self.refused(StaleDirector(tournament_id, epoch, floor))
        return DirectorFence(tournament_id, epoch)

    def refused(self, stale: StaleDirector) -> StaleDirector:
        """Count and log a STALE_DIRECTOR refusal (found before the command, or by its write's own check)."""
        self._remember(stale.tournament_id, stale.seen_epoch)
        STALE_DIRECTORS.inc()
        log.warning(
            "stale_director_refused",
            tournament_id=stale.tournament_id,
            epoch=stale.epoch,
            seen_epoch=stale.seen_epoch,
        )
        return stale

    def _remember(self, tournament_id: str, floor: int) -> None:
        with self._lock:
            self._seen[tournament_id] = max(floor, self._seen.get(tournament_id, 0))


def _unfenced(request: M) -> M:
    """The request as its answer is keyed: its instruction, whichever director's epoch carried it (the new
    director repeats the last one's pending steps with their request ids)."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.director_epoch = 0  # type: ignore[attr-defined]
    return copy


class TableDirectorServicer(pb_grpc.TableDirectorServiceServicer):
    def __init__(self, room: PokerRoom) -> None:
        self._room = room
        self.epochs = DirectorEpochs(room.store)

    def _table(self, table_id: str) -> PokerTable:
        table = self._room.table(_text("table_id", table_id, 64))
        if not table.tournament_id:
            raise errors.failed_precondition(
                "NOT_TOURNAMENT_TABLE", "only a tournament table takes the director's calls"
            )
        return table

    def _command(
        self,
        rpc: str,
        request: Message,
        table: PokerTable,
        kind: type[M],
        command: c.Command,
        answer: Callable[[Sequence[object]], M],
    ) -> M:
        """One director command at one table: from a director not older than one seen for the tournament,
        idempotent by request id, the answer from its events."""
        fence = self.epochs.check(table.tournament_id, int(getattr(request, "director_epoch", 0)))

        def run(key: str, fingerprint: str) -> tuple[M, bool]:
            events = list(table.run(command, director=fence).events)
            return answer(events), False

        try:
            return once(
                self._room.store,
                table.lock,
                self._room.now,
                rpc,
                _unfenced(request),
                table.table_id,
                kind,
                run,
            )
        except StaleDirector as stale:  # the floor passed the epoch after the check: nothing was written
            raise self.epochs.refused(stale) from None

    def CreateTournamentTable(
        self, request: pb.CreateTournamentTableRequest, context: grpc.ServicerContext
    ) -> pb.CreateTournamentTableResponse:
        _director()
        tournament_id = _text("tournament_id", request.tournament_id, MAX_TOURNAMENT_ID)
        settings = check_tournament_settings(request.settings)
        fence = self.epochs.check(tournament_id, request.director_epoch)

        def run(key: str, fingerprint: str) -> tuple[pb.CreateTournamentTableResponse, bool]:
            table = self._room.create_tournament_table(tournament_id, settings, director=fence)
            return pb.CreateTournamentTableResponse(table=table.info()), False

        try:
            return once(
                self._room.store,
                self._room.lock,
                self._room.now,
                "CreateTournamentTable",
                _unfenced(request),
                "",
                pb.CreateTournamentTableResponse,
                run,
            )
        except StaleDirector as stale:
            raise self.epochs.refused(stale) from None

    def SeatPlayer(
        self, request: pb.SeatPlayerRequest, context: grpc.ServicerContext
    ) -> pb.SeatPlayerResponse:
        _director()
        table = self._table(request.table_id)
        player = _text("player_id", request.player_id, MAX_PLAYER_ID)
        command = c.SeatPlayer(player, request.seat, _chips("stack", request.stack), request.is_bot)
        return self._command(
            "SeatPlayer", request, table, pb.SeatPlayerResponse, command,
            lambda events: pb.SeatPlayerResponse(table=table.info()),
        )  # fmt: skip

    def RemovePlayer(
        self, request: pb.RemovePlayerRequest, context: grpc.ServicerContext
    ) -> pb.RemovePlayerResponse:
        _director()
        table = self._table(request.table_id)
        command = c.RemovePlayer(_text("player_id", request.player_id, MAX_PLAYER_ID))

        def answer(events: Sequence[object]) -> pb.RemovePlayerResponse:
            stack = sum(e.stack for e in events if isinstance(e, te.PlayerRemoved))
            return pb.RemovePlayerResponse(stack=stack, table=table.info())

        return self._command("RemovePlayer", request, table, pb.RemovePlayerResponse, command, answer)

    def SetLevel(self, request: pb.SetLevelRequest, context: grpc.ServicerContext) -> pb.SetLevelResponse:
        _director()
        table = self._table(request.table_id)
        small, big = _chips("small_blind", request.small_blind), _chips("big_blind", request.big_blind)
        if big != 2 * small:
            raise errors.invalid_argument(
                "big_blind", "BIG_BLIND_NOT_TWICE_SMALL", "the big blind is twice the small blind (MP-2.3)"
            )
        command = c.SetLevel(small, big, _chips("ante", request.ante, zero=True))
        return self._command(
            "SetLevel", request, table, pb.SetLevelResponse, command,
            lambda events: pb.SetLevelResponse(table=table.info()),
        )  # fmt: skip

    def ReleaseHands(
        self, request: pb.ReleaseHandsRequest, context: grpc.ServicerContext
    ) -> pb.ReleaseHandsResponse:
        _director()
        table = self._table(request.table_id)
        if not 0 < request.through_hand <= MAX_HAND_NUMBER:
            raise errors.invalid_argument("through_hand", "BAD_HAND_NUMBER", "hands are numbered from 1")
        return self._command(
            "ReleaseHands", request, table, pb.ReleaseHandsResponse, c.ReleaseHands(request.through_hand),
            lambda events: pb.ReleaseHandsResponse(table=table.info()),
        )  # fmt: skip

    def CloseTable(
        self, request: pb.CloseTableRequest, context: grpc.ServicerContext
    ) -> pb.CloseTableResponse:
        _director()
        table = self._table(request.table_id)

        def answer(events: Sequence[object]) -> pb.CloseTableResponse:
            removed = [
                pb.RemovedPlayer(player_id=e.player, seat=e.seat, stack=e.stack)
                for e in events
                if isinstance(e, te.PlayerRemoved)
            ]
            return pb.CloseTableResponse(removed=removed)

        return self._command("CloseTable", request, table, pb.CloseTableResponse, c.CloseTable(), answer)
