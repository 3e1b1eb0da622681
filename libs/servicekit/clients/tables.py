"""The table service's stubs for the services that drive its tables (the tournament service's director
client), following each table to the shard serving it (servicekit/shards.py): one router for both stubs,
so a table learned through one is called at its shard through the other.

    stubs = TableStubs("table-0.table-shards:51054,table:51054", token_source, dependency=table_dependency,
                       tls_files=own_certificate)  # the shards' internal ports (mutual TLS)
    stubs.director.SeatPlayer(request)        # TableDirectorService, redirected on TABLE_MOVED/TABLE_MOVING
    stubs.tables.WatchTable(request)          # TableService; a stream ending TABLE_MOVED: reconnect
    async for response in stubs.watch_table(request):  # the same on grpc.aio, on one event loop
        ...
    stubs.close()
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
from poker.table.v1 import table_director_service_pb2_grpc as director_grpc
from poker.table.v1 import table_service_pb2 as table_pb
from poker.table.v1 import table_service_pb2_grpc as table_grpc

from servicekit import client, shards, tls
from servicekit.aio_channels import AioChannels
from servicekit.dependencies import Dependency


class TableStubs:
    def __init__(
        self,
        addresses: str | Sequence[str],
        token: str | Callable[[], str] | None,
        *,
        dependency: Dependency | None = None,
        deadline_seconds: float = shards.DEADLINE_SECONDS,
        tls_files: tls.TlsFiles | None = None,
    ) -> None:
        seeds = [a.strip() for a in addresses.split(",")] if isinstance(addresses, str) else list(addresses)
        self.pool = shards.ChannelPool(
            lambda address: client.channel(address, token, dependency=dependency, tls_files=tls_files)
        )
        # The shards' internal ports (mutual TLS with this service's certificate).
        self.router = shards.Router(
            self.pool, [a for a in seeds if a], deadline_seconds=deadline_seconds, internal=True
        )
        self.director: Any = shards.RoutedStub(self.router, director_grpc.TableDirectorServiceStub)
        self.tables: Any = shards.RoutedStub(self.router, table_grpc.TableServiceStub)
        self._token, self._tls_files = token, tls_files
        self._aio: AioChannels | None = None  # made on the event loop of the first aio stream

    async def watch_table(
        self, request: table_pb.WatchTableRequest
    ) -> AsyncIterator[table_pb.WatchTableResponse]:
        """WatchTable on grpc.aio at the table's shard, for a process holding many streams (one event loop
        for all: servicekit.aio_channels). As the synchronous stream does, one that ends with TABLE_MOVED /
        TABLE_MOVING, or at a shard that does not answer, teaches the router where to go: the caller
        watches again from its next seq. Every aio stream of these stubs is read on the same loop."""
        if self._aio is None:
            self._aio = AioChannels(self._token, self._tls_files)
        table_id = request.table_id
        channel = self._aio.get(self.router.address_for(table_id))
        stub = table_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        stream = stub.WatchTable(request, metadata=self._aio.metadata())
        try:
            async for response in stream:
                yield response
        except grpc.aio.AioRpcError as error:
            if self.router.note(table_id, error) is None and error.code() == grpc.StatusCode.UNAVAILABLE:
                self.router.rotate(table_id)
            raise
        finally:
            stream.cancel()

    async def close_aio(self) -> None:
        """The aio channels closed (on their loop)."""
        if self._aio is not None:
            await self._aio.close()

    def close(self) -> None:
        self.pool.close()
