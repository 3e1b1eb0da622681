"""The wallet service on the platform: every call needs a token; the ledger lives in SQLite (default,
in the data directory) or PostgreSQL (WALLET_DATABASE_URL)."""

from __future__ import annotations

import threading

import grpc
from ledger import validation
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit import workers
from servicekit.caps import Cap
from servicekit.config import ServerConfig
from servicekit.logging import get_logger
from servicekit.ratelimit import Rate, RateLimit
from servicekit.server import Service, ServiceSpec, build

from services.wallet.servicer import WalletServicer
from services.wallet.storage import Clock, LedgerStore, migrate_database, open_store, wall_clock_ms
from services.wallet.workers import Announce
from services.wallet.workers import serve as serve_workers

SERVICE = pb.DESCRIPTOR.services_by_name["WalletService"]
# The ledger's own limits (libs/ledger/validation.py); the largest request is a full TransferBatch.
FIELD_CAPS = {
    "owner": Cap(length=128),
    "TransferBatchRequest.transfers": Cap(items=validation.MAX_BATCH),
    "TransferBatchRequest.resolutions": Cap(items=validation.MAX_RESOLUTIONS),
    "TransferSpec.postings": Cap(items=validation.MAX_POSTINGS),
}
# Per caller (README "Limits per caller"): a player only opens their own account; the services that
# move chips (table, tournament) get budgets far above what the ledger can write.
RATE_LIMITS = (
    RateLimit("create_account", ("CreateAccount",), player=Rate(1, 5), platform=Rate(2_000, 5_000)),
    RateLimit(
        "money",
        ("Issue", "Transfer", "TransferBatch", "Hold", "Capture", "Release"),
        player=Rate(5, 20),
        platform=Rate(20_000, 40_000),
    ),
    # Reads (issue 24): a player's balance and history now and then; the services read far more.
    RateLimit(
        "read",
        ("GetAccount", "ListAccounts", "GetHold", "GetTransfer", "ListTransfers", "GetLedgerSummary"),
        player=Rate(10, 50),
        platform=Rate(20_000, 40_000),
    ),
)


class HoldSweeper:
    """Expires pending holds past their expiry so their chips are free again (writes also expire the
    holds of the accounts they touch, so a sweep that lags never blocks a player)."""

    def __init__(self, store: LedgerStore, interval_seconds: float) -> None:
        self._store = store
        self._interval = interval_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wallet-hold-sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        log = get_logger(service="wallet")
        while not self._stop.wait(self._interval):
            try:
                expired = self._store.expire_holds()
                if expired:
                    log.info("holds_expired", count=expired)
            except Exception:  # the next sweep retries; a database hiccup must not kill the thread
                log.exception("hold_sweep_failed")

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def migrate_schema(config: ServerConfig) -> list[str]:
    """`felt migrate`: the ledger at this release's schema (what the wallet does at start when embedded)."""
    return migrate_database(str(config.extra.get("database_url", "")), str(config.data_dir))


def service_spec(config: ServerConfig) -> ServiceSpec:
    clock: Clock = config.extra.get("clock") or wall_clock_ms
    store = open_store(
        str(config.extra.get("database_url", "")),
        str(config.data_dir),
        clock=clock,
        pg_pool_size=int(config.extra.get("pg_pool_size", 16)),
        schema=config.schema,
    )
    sweeper = HoldSweeper(store, float(config.extra.get("hold_sweep_seconds", 1.0)))
    # Of several worker processes only the first sweeps: one sweep a second is enough for the ledger
    # (writes expire the due holds of the accounts they touch anyway).
    if config.extra.get("worker_index") in (None, 0):
        sweeper.start()

    def register(server: grpc.Server) -> None:
        pb_grpc.add_WalletServiceServicer_to_server(WalletServicer(store, clock), server)

    def on_stop() -> None:
        sweeper.stop()
        store.close()

    def ready() -> bool:
        # SERVING once the store answers: migrations ran when it opened, and a read must succeed.
        try:
            store.get_account("acc_issuance")
        except Exception:
            return False
        return True

    return ServiceSpec(
        name="wallet",
        services=[SERVICE],
        register=register,
        on_stop=on_stop,
        ready=ready,
        # A worker shares its port with its siblings; a lone wallet fails to bind a port in use.
        options=workers.port_options(config),
        field_caps=FIELD_CAPS,
        rate_limits=RATE_LIMITS,
    )


def serve(config: ServerConfig, announce: Announce) -> int:
    """`felt serve wallet`: one process, or with FELT_WALLET_WORKERS=N > 1 a supervisor of N."""
    return serve_workers(service_spec, config, announce)


def build_server(config: ServerConfig) -> Service:
    """The wallet's server, built and bound (call .start()); `.server` and `.port` as usual."""
    return build(service_spec(config), config)
