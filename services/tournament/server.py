"""The tournament service on the platform: hosts poker.tournament.v1.TournamentService. It drives the table
service (TableDirectorService, WatchTable), the wallet (entries, prize pools) and the dealer (the Spin's
draw) with a service token it signs itself, renewed before it expires; NOT_SERVING until they answer."""

from __future__ import annotations

import socket

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc
from servicekit import auth, client, tls, tokens
from servicekit.clients.dealer import DealerClient
from servicekit.clients.table import TableDirectorClient
from servicekit.clients.tables import TableStubs
from servicekit.clients.wallet import WalletCalls
from servicekit.config import ServerConfig, default_internal_address
from servicekit.dependencies import Dependency
from servicekit.ratelimit import Rate, RateLimit
from servicekit.server import Service, ServiceSpec, build

from services.tournament.replicas import Replicas, this_replica
from services.tournament.runtime import Deps, Hub, now_ms
from services.tournament.servicer import TournamentServicer
from services.tournament.store import SQLITE_FILE, TournamentStore, migrate_database

TOURNAMENT = pb.DESCRIPTOR.services_by_name["TournamentService"]
HEALTH_TIMEOUT_SECONDS = 0.5
# Every player following a tournament holds a WatchTournament stream (beside their WatchTable ones).
MAX_STREAMS = 2_000
_PLATFORM = Rate(1_000, 5_000)
RATE_LIMITS = (
    RateLimit("register", ("Register", "Unregister"), player=Rate(1, 10), platform=_PLATFORM),
    RateLimit("watch", ("WatchTournament",), player=Rate(2, 20), platform=_PLATFORM),
    RateLimit(
        "read",
        ("GetStandings", "GetMyTable", "GetTournament", "ListTournaments"),
        player=Rate(10, 50),
        platform=_PLATFORM,
    ),
)


def _serving(channel: grpc.Channel) -> bool:
    try:
        response = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=HEALTH_TIMEOUT_SECONDS
        )
    except Exception:
        return False
    return bool(response.status == health_pb2.HealthCheckResponse.SERVING)


def migrate_schema(config: ServerConfig) -> list[str]:
    """`felt migrate`: the tournament store at this release's schema."""
    return migrate_database(config.data_dir / SQLITE_FILE, str(config.extra.get("database_url", "")))


def service_spec(config: ServerConfig) -> ServiceSpec:
    keys = auth.load_keys(config.data_dir, config.production)
    token = tokens.service_token(keys, "tournament", config)
    deps = [Dependency("tournament", name) for name in ("table", "wallet", "dealer")]
    # Every table shard's address (or the one table service): calls follow each table to its shard.
    table_addresses = str(config.extra.get("table_address", default_internal_address("table")))
    # Their internal ports, with this service's certificate (mutual TLS: servicekit.tls).
    own = tls.files_for(config)
    table_stubs = TableStubs(table_addresses, token, dependency=deps[0], tls_files=own)
    wallet_channel = client.channel(
        str(config.extra.get("wallet_address", default_internal_address("wallet"))),
        token,
        dependency=deps[1],
        tls_files=own,
    )
    dealer_channel = client.channel(
        str(config.extra.get("dealer_address", default_internal_address("dealer"))),
        token,
        dependency=deps[2],
        tls_files=own,
    )
    store = TournamentStore(
        config.data_dir / SQLITE_FILE, str(config.extra.get("database_url", "")), schema=config.schema
    )
    # One owner per tournament through its lease in the store (issue 25); alone, this replica owns them all.
    replicated = bool(config.extra.get("replicated", False))
    replica_id = str(config.extra.get("replica_id", "")) or ("" if replicated else "tournament")
    replicas = Replicas(
        store.database,
        this_replica(replica_id, advertised_address(config), advertised_address(config, internal=True)),
        replicated=replicated,
        ttl_ms=int(float(config.extra.get("lease_seconds", 10.0)) * 1000),
        scan_seconds=float(config.extra.get("scan_seconds", 1.0)),
    )
    hub = Hub(
        Deps(
            TableDirectorClient(table_stubs),
            WalletCalls(wallet_channel, prefix="tournament"),
            DealerClient(dealer_channel),
            store,
            config.extra.get("clock") or now_ms,
        ),
        float(config.extra.get("tick_seconds", 0.1)),
        int(config.extra.get("max_live", 1000)),
        replicas,
    )

    def register(server: grpc.Server) -> None:
        hub.load()
        pb_grpc.add_TournamentServiceServicer_to_server(TournamentServicer(hub), server)
        hub.start()

    def on_stop() -> None:
        hub.stop()
        store.close()
        table_stubs.close()
        for channel in (wallet_channel, dealer_channel):
            channel.close()

    def ready() -> bool:
        table = table_stubs.pool.get(table_stubs.router.seeds[0])  # any shard answers the lobby
        return all(_serving(ch) for ch in (table, wallet_channel, dealer_channel))

    return ServiceSpec(
        name="tournament",
        services=[TOURNAMENT],
        register=register,
        ready=ready,
        dependencies=deps,
        on_stop=on_stop,
        on_drain=hub.drain,  # a replica of several hands its tournaments over before it stops answering
        max_streams=MAX_STREAMS,
        rate_limits=RATE_LIMITS,
    )


def advertised_address(config: ServerConfig, internal: bool = False) -> str:
    """FELT_TOURNAMENT_ADVERTISE_ADDRESS, else host:port (the host's name when bound to every interface);
    `internal`: FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS, else host:internal port."""
    given = str(config.extra.get("advertise_internal_address" if internal else "advertise_address", ""))
    if given:
        return given
    host = config.host if config.host not in ("", "0.0.0.0", "::", "[::]") else socket.gethostname()
    return f"{host}:{config.internal_listen_port() if internal else config.port}"


def build_server(config: ServerConfig) -> Service:
    return build(service_spec(config), config)
