"""A small client of the table service for the tournament service: TableDirectorService (its tournament
tables, each call idempotent by the request id the caller derives) with the platform's call policy, and
TableService's WatchTable stream (as a service: public events only, no hole card) and lobby reads.

A director call that failed in transit is sent again with the same request id (the table service answers
a repeat with its first answer); after the last attempt the caller gets UNAVAILABLE `TABLE_UNAVAILABLE`.
The table's own refusals (HAND_IN_PROGRESS, TABLE_NOT_FOUND, ...) come back as the grpc.RpcError they are.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable

import grpc
from poker.table.v1 import table_director_service_pb2 as dpb
from poker.table.v1 import table_director_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc

from servicekit.clients.calls import CallPolicy, Calls, RetryingStub
from servicekit.clients.tables import TableStubs


class TableDirectorClient:
    def __init__(
        self,
        channel: grpc.Channel | TableStubs,
        attempts: int = 4,
        backoff_seconds: float = 0.1,
        deadline_seconds: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`channel`: one table service, or TableStubs over its shards (each call follows its table to the
        shard serving it, TABLE_MOVED and TABLE_MOVING included; a stream that ends with one resumes at the
        new owner when the caller asks again from its next seq)."""
        calls = Calls("table", CallPolicy(deadline_seconds, attempts, backoff_seconds), sleep)
        self.stubs = channel if isinstance(channel, TableStubs) else None  # for the aio streams
        if isinstance(channel, TableStubs):
            director, self._tables = channel.director, channel.tables
        else:
            director = dpb_grpc.TableDirectorServiceStub(channel)  # type: ignore[no-untyped-call]
            self._tables = pb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        self.director = RetryingStub(director, calls)
        self.lobby = RetryingStub(self._tables, calls)

    # `epoch` (every instruction): the director's lease epoch on the tournament (issue 25: a table refuses
    # STALE_DIRECTOR an epoch below one it has seen); 0 for a director without leases.

    def create_table(
        self, request_id: str, tournament_id: str, settings: pb.TableSettings, epoch: int = 0
    ) -> pb.TableInfo:
        request = dpb.CreateTournamentTableRequest(
            request_id=request_id, tournament_id=tournament_id, settings=settings, director_epoch=epoch
        )
        response: dpb.CreateTournamentTableResponse = self.director.CreateTournamentTable(request)
        return response.table

    def seat_player(
        self,
        request_id: str,
        table_id: str,
        player_id: str,
        seat: int,
        stack: int,
        is_bot: bool,
        epoch: int = 0,
    ) -> None:
        self.director.SeatPlayer(
            dpb.SeatPlayerRequest(
                request_id=request_id, table_id=table_id, player_id=player_id, seat=seat, stack=stack,
                is_bot=is_bot, director_epoch=epoch,
            )
        )  # fmt: skip

    def remove_player(self, request_id: str, table_id: str, player_id: str, epoch: int = 0) -> int:
        request = dpb.RemovePlayerRequest(
            request_id=request_id, table_id=table_id, player_id=player_id, director_epoch=epoch
        )
        response: dpb.RemovePlayerResponse = self.director.RemovePlayer(request)
        return int(response.stack)

    def set_level(
        self, request_id: str, table_id: str, small_blind: int, big_blind: int, ante: int, epoch: int = 0
    ) -> None:
        self.director.SetLevel(
            dpb.SetLevelRequest(
                request_id=request_id, table_id=table_id, small_blind=small_blind, big_blind=big_blind,
                ante=ante, director_epoch=epoch,
            )
        )  # fmt: skip

    def release_hands(self, request_id: str, table_id: str, through_hand: int, epoch: int = 0) -> None:
        self.director.ReleaseHands(
            dpb.ReleaseHandsRequest(
                request_id=request_id, table_id=table_id, through_hand=through_hand, director_epoch=epoch
            )
        )

    def close_table(self, request_id: str, table_id: str, epoch: int = 0) -> list[dpb.RemovedPlayer]:
        response: dpb.CloseTableResponse = self.director.CloseTable(
            dpb.CloseTableRequest(request_id=request_id, table_id=table_id, director_epoch=epoch)
        )
        return list(response.removed)

    def watch(
        self, table_id: str, from_seq: int, only: Iterable[str] = ()
    ) -> AsyncIterator[pb.WatchTableResponse]:
        """The table's events from `from_seq` (no deadline: the stream lasts as long as the table), of the
        kinds in `only` (empty: all), on grpc.aio (servicekit.aio_channels: a director holds a stream per
        table): the caller iterates its WatchTableResponse messages on one event loop, and after a failure
        (grpc.aio.AioRpcError) watches again from the next seq it needs."""
        if self.stubs is None:
            raise RuntimeError("aio streams go through TableStubs")
        return self.stubs.watch_table(
            pb.WatchTableRequest(table_id=table_id, from_seq=from_seq, only=list(only))
        )
