"""The table service on the platform: hosts poker.table.v1.CasinoService and poker.table.v1.TableService (and
poker.identity.v1.IdentityService, the caller's identity).
It calls the dealer and the wallet with a service token it signs itself (keys from the data directory),
renewed before it expires; while either refuses it the service is NOT_SERVING (servicekit.dependencies).
Tests may pass `auth_clock=` (the wall clock tokens expire on) and `service_token_ttl_seconds=`."""

from __future__ import annotations

import socket
import time
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.identity.v1 import identity_service_pb2 as identity_pb
from poker.identity.v1 import identity_service_pb2_grpc as identity_pb_grpc
from poker.table.v1 import casino_service_pb2 as casino_pb
from poker.table.v1 import casino_service_pb2_grpc as casino_pb_grpc
from poker.table.v1 import table_director_service_pb2 as director_pb
from poker.table.v1 import table_director_service_pb2_grpc as director_pb_grpc
from poker.table.v1 import table_service_pb2 as table_pb
from poker.table.v1 import table_service_pb2_grpc as table_pb_grpc
from servicekit import auth, client, tls, tokens
from servicekit.caps import Cap
from servicekit.clients.wallet import WalletCalls
from servicekit.config import ServerConfig, default_internal_address
from servicekit.dependencies import Dependency
from servicekit.ratelimit import Rate, RateLimit
from servicekit.server import Service, ServiceSpec, build

from services.table.casino.casino import Casino
from services.table.casino.money import Wallet
from services.table.casino.servicer import CasinoServicer
from services.table.casino.shoe import Shoes
from services.table.casino.store import CasinoStore
from services.table.config import casino_tables, poker_tables, seat_policy
from services.table.identity import IdentityServicer
from services.table.poker.cards import Dealer
from services.table.poker.director import TableDirectorServicer
from services.table.poker.money import Escrow
from services.table.poker.room import PokerRoom
from services.table.poker.runtime import Options
from services.table.poker.servicer import TableServicer
from services.table.poker.store import TableStore
from services.table.storage import SQLITE_FILES, migrate_database
from services.table.storage import schema as log_schema
from services.table.storage.ownership import this_shard

CASINO = casino_pb.DESCRIPTOR.services_by_name["CasinoService"]
TABLE = table_pb.DESCRIPTOR.services_by_name["TableService"]
DIRECTOR = director_pb.DESCRIPTOR.services_by_name["TableDirectorService"]
IDENTITY = identity_pb.DESCRIPTOR.services_by_name["IdentityService"]
HEALTH_TIMEOUT_SECONDS = 0.5
# Every seated player and watcher holds a stream (WatchTable, WatchCasinoTable) for as long as they stay:
# a thread each in this sync server. 1,000 covers 100 full ten-seat tables; FELT_TABLE_MAX_STREAMS sets it.
MAX_STREAMS = 1_000
# Invited players are player ids (the defaults cap every other string and list: servicekit.caps).
FIELD_CAPS = {
    "CreateTableRequest.invited": Cap(length=128, plain=True),
    "UsePowerRequest.hole_card": Cap(length=2),
}
# Per caller and group of RPCs (README "Limits per caller"): what a person at a few tables needs with
# room, far below what one flood would take from the others; the platform (the tournament service,
# operators) gets budgets of its own. FELT_TABLE_RATE_<GROUP>=<per second>:<burst> sets them.
_PLATFORM = Rate(1_000, 5_000)
RATE_LIMITS = (
    RateLimit("act", ("Act",), player=Rate(10, 30), platform=_PLATFORM),
    # Naiko powers and shield answers: at most one power and one answer go with an action (NK-5.7).
    RateLimit("powers", ("UsePower", "RespondToAnchor"), player=Rate(10, 30), platform=_PLATFORM),
    RateLimit("seating", ("JoinTable", "LeaveTable"), player=Rate(1, 10), platform=_PLATFORM),
    RateLimit("seat_state", ("TopUp", "SitOut", "SitIn"), player=Rate(2, 10), platform=_PLATFORM),
    RateLimit("create_table", ("CreateTable",), player=Rate(0.2, 5), platform=_PLATFORM),
    RateLimit("invite", ("InvitePlayers",), player=Rate(1, 10), platform=_PLATFORM),
    RateLimit("watch", ("WatchTable", "WatchCasinoTable"), player=Rate(2, 20), platform=_PLATFORM),
    RateLimit(
        "casino_seating", ("JoinCasinoTable", "LeaveCasinoTable"), player=Rate(1, 10), platform=_PLATFORM
    ),
    # A bet is built chip by chip (each chip tapped is a PlaceBets): a fast person taps 10-20 a second,
    # 45 in a round at three Three Card Poker seats (issue 23: 5/s, bursts of 20 refused a chip-tapping
    # player ~6 times a round; tests/abuse/test_ordinary_pace.py).
    RateLimit(
        "bets", ("PlaceBets", "Rebet", "ClearBets"), player=Rate(20, 100), platform=Rate(2_000, 10_000)
    ),
    RateLimit("decide", ("Decide",), player=Rate(5, 20), platform=_PLATFORM),
    RateLimit("deal_round", ("DealRound",), player=Rate(2, 10), platform=_PLATFORM),
    # Deals nobody can choose: a client seed a hand; a proof recomputes a shuffle (docs/fairness.md).
    RateLimit("client_seed", ("SubmitClientSeed",), player=Rate(5, 20), platform=_PLATFORM),
    RateLimit("proofs", ("GetHandProof", "GetRoundProof"), player=Rate(5, 30), platform=_PLATFORM),
    # A read, but up to 100 hands written per call: a player's export pages through at its own pace.
    RateLimit("export", ("ExportHandHistories",), player=Rate(1, 10), platform=_PLATFORM),
    # Reads (issue 24: unlimited, one player's flood of them slowed every table). The web client reads
    # the view again after each batch of events (folded while one read is on its way), and a player may
    # sit at several fast tables: 20/s refused players of unpaced bot tables in the integration tests.
    # 50/s is still ~1/20 of what one flooding client sends.
    RateLimit(
        "view", ("GetTable", "GetTableView", "GetRound"), player=Rate(50, 500), platform=Rate(5_000, 50_000)
    ),
    RateLimit(
        "lobby", ("ListTables", "ListGames", "ListCasinoTables"), player=Rate(5, 30), platform=_PLATFORM
    ),
    RateLimit(
        "history",
        ("GetHandHistory", "ListHandHistories", "GetGameHistory"),
        player=Rate(5, 30),
        platform=_PLATFORM,
    ),
)


def _serving(channel: grpc.Channel) -> bool:
    """Cheap and exception-safe: a health Check with a short timeout."""
    try:
        response = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=HEALTH_TIMEOUT_SECONDS
        )
    except Exception:
        return False
    return bool(response.status == health_pb2.HealthCheckResponse.SERVING)


def migrate_schema(config: ServerConfig) -> list[str]:
    """`felt migrate`: the leases, poker and casino logs at this release's schema."""
    return migrate_database(str(config.extra.get("database_url", "")), config.data_dir)


def service_spec(config: ServerConfig) -> ServiceSpec:
    keys = auth.load_keys(config.data_dir, config.production)
    token = tokens.service_token(keys, "table", config)
    dealer, wallet = Dependency("table", "dealer"), Dependency("table", "wallet")
    dealer_address = str(config.extra.get("dealer_address", default_internal_address("dealer")))
    wallet_address = str(config.extra.get("wallet_address", default_internal_address("wallet")))
    # Their internal ports, with this service's certificate (mutual TLS: servicekit.tls).
    own = tls.files_for(config)
    dealer_channel = client.channel(dealer_address, token, dependency=dealer, tls_files=own)
    wallet_channel = client.channel(wallet_address, token, dependency=wallet, tls_files=own)
    # One shard per service process, shared by both stores; the log in TABLE_DATABASE_URL or SQLite.
    sharded = bool(config.extra.get("sharded", False))
    shard = this_shard(
        str(config.extra.get("shard_id", "")),
        advertised_address(config),
        advertised_address(config, internal=True),
        advertised_web_url(config),
    )
    scan = float(config.extra.get("shard_scan_seconds", 1.0)) if sharded else None
    stored: dict[str, Any] = {
        "database_url": str(config.extra.get("database_url", "")),
        "shard": shard,
        "lease_ms": int(float(config.extra.get("lease_seconds", 10.0)) * 1000),
        "pool_size": int(config.extra.get("pg_pool_size", 8)),
        "sharded": sharded,
        "schema": config.schema,
    }
    store = CasinoStore(
        config.data_dir / SQLITE_FILES[log_schema.CASINO],
        wall_clock_ms=config.extra.get("wall_clock_ms"),
        **stored,
    )
    casino = Casino(
        casino_tables(config),
        store,
        Wallet(wallet_channel),
        Shoes(dealer_channel),
        config.extra.get("clock") or time.monotonic,
        float(config.extra.get("betting_seconds", 20.0)),
        float(config.extra.get("decision_seconds", 20.0)),
        float(config.extra.get("tick_seconds", 0.05)),
        seat_policy(config),
    )

    poker_store = TableStore(config.data_dir / SQLITE_FILES[log_schema.POKER], **stored)
    room = PokerRoom(
        poker_tables(config),
        poker_store,
        Escrow(WalletCalls(wallet_channel, prefix="poker")),
        Dealer(dealer_channel),
        config.extra.get("poker_clock") or (lambda: int(time.time() * 1000)),
        Options(
            bot_pacing=bool(config.extra.get("bot_pacing", True)),
            hand_pause_ms=int(config.extra.get("hand_pause_ms", 2000)),
            resume_hands=bool(config.extra.get("resume_hands", True)),
        ),
        float(config.extra.get("tick_seconds", 0.05)),
        scan_seconds=scan,
    )

    def register(server: grpc.Server) -> None:
        casino_pb_grpc.add_CasinoServiceServicer_to_server(CasinoServicer(casino), server)
        full_history = frozenset(config.extra.get("full_history_services") or ())
        table_pb_grpc.add_TableServiceServicer_to_server(
            TableServicer(room, full_history, float(config.extra.get("watch_send_seconds", 10.0))), server
        )
        director_pb_grpc.add_TableDirectorServiceServicer_to_server(TableDirectorServicer(room), server)
        identity_pb_grpc.add_IdentityServiceServicer_to_server(IdentityServicer(), server)
        casino.start(scan)
        room.start()

    def on_drain() -> None:
        # A shard of several hands its tables over before it stops answering (the others take them at
        # their next scan); a lone service keeps them to the end (released at close, as before).
        if sharded:
            casino.drain()
            room.drain()

    def on_stop() -> None:
        casino.stop()
        room.stop()
        store.close()
        poker_store.close()
        dealer_channel.close()
        wallet_channel.close()

    def ready() -> bool:
        return _serving(dealer_channel) and _serving(wallet_channel)

    def holding() -> bool:
        # Its leases renewed in the store within the lease: past it the other shards may take its tables.
        return store.owned.leases_current() and poker_store.owned.leases_current()

    return ServiceSpec(
        name="table",
        services=[CASINO, TABLE, DIRECTOR, IDENTITY],
        register=register,
        ready=ready,
        holding=holding,
        dependencies=[dealer, wallet],
        on_stop=on_stop,
        on_drain=on_drain,
        max_streams=MAX_STREAMS,
        field_caps=FIELD_CAPS,
        rate_limits=RATE_LIMITS,
    )


def advertised_web_url(config: ServerConfig) -> str:
    """FELT_TABLE_ADVERTISE_WEB_URL, else https://host:web port (http without the door's TLS) when the door
    has a fixed port, else ''."""
    given = str(config.extra.get("advertise_web_url", ""))
    if given or not config.web_port:
        return given
    host = config.host if config.host not in ("", "0.0.0.0", "::", "[::]") else socket.gethostname()
    return f"{config.web_scheme}://{host}:{config.web_port}"


def advertised_address(config: ServerConfig, internal: bool = False) -> str:
    """FELT_TABLE_ADVERTISE_ADDRESS, else host:port (the host's name when bound to every interface);
    `internal`: FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS, else host:internal port (the other services')."""
    given = str(config.extra.get("advertise_internal_address" if internal else "advertise_address", ""))
    if given:
        return given
    host = config.host if config.host not in ("", "0.0.0.0", "::", "[::]") else socket.gethostname()
    return f"{host}:{config.internal_listen_port() if internal else config.port}"


def build_server(config: ServerConfig) -> Service:
    """The table service's server, built and bound (call .start())."""
    return build(service_spec(config), config)
