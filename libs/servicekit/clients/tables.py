"""The table service's stubs for the services that drive its tables (the tournament service's director
client), following each table to the shard serving it (servicekit/shards.py): one router for both stubs,
so a table learned through one is called at its shard through the other.

    stubs = TableStubs("table-0.table-shards:51054,table:51054", token_source, dependency=table_dependency,
                       tls_files=own_certificate)  # the shards' internal ports (mutual TLS)
    stubs.director.SeatPlayer(request)        # TableDirectorService, redirected on TABLE_MOVED/TABLE_MOVING
    stubs.tables.WatchTable(request)          # TableService; a stream ending TABLE_MOVED: reconnect
    stubs.close()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from poker.table.v1 import table_director_service_pb2_grpc as director_grpc
from poker.table.v1 import table_service_pb2_grpc as table_grpc

from servicekit import client, shards, tls
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

    def close(self) -> None:
        self.pool.close()
