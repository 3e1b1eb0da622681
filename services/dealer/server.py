"""The dealer service on the platform: every call needs a token; shoes live in this process's memory.

`felt serve dealer` runs one process, or with FELT_DEALER_WORKERS=N > 1 a supervisor of N worker
processes on one port (servicekit/workers.py), each holding its own shoes (routing.py)."""

from __future__ import annotations

import time
from dataclasses import replace

import grpc
from dealing import EntropyUnavailable, SeedSource, ShoeBook, SystemSeedSource
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit import workers
from servicekit.caps import Cap
from servicekit.config import ServerConfig
from servicekit.ratelimit import Rate, RateLimit
from servicekit.server import Service, ServiceSpec, build

from services.dealer.claims import ClaimTable, buckets_for
from services.dealer.config import book_settings
from services.dealer.routing import Router, claims_path, prepare_socket_dir, socket_path
from services.dealer.servicer import MAX_VERIFY_ENTRIES, DealerServicer

SERVICE = pb.DESCRIPTOR.services_by_name["DealerService"]
# Verify takes a whole revealed shoe: up to 8 decks of entries; a commitment is hex SHA-256.
FIELD_CAPS = {
    "VerifyRequest.dealt": Cap(items=MAX_VERIFY_ENTRIES),
    "VerifyRequest.card_commitments": Cap(length=64, items=MAX_VERIFY_ENTRIES),
    "VerifyRequest.openings": Cap(items=MAX_VERIFY_ENTRIES),
}
# Per caller (docs: README "Limits per caller"). The table service makes a shoe per hand and deals a
# few times per hand: its (platform) budget is far above what the stack can play.
RATE_LIMITS = (
    RateLimit("create_shoe", ("CreateShoe",), player=Rate(2, 20), platform=Rate(5_000, 10_000)),
    RateLimit(
        "dealing",
        ("Deal", "Burn", "Peek", "Draw", "CloseShoe", "DealHand"),
        player=Rate(20, 100),
        platform=Rate(50_000, 100_000),
    ),
    # Reads (issue 24); Verify recomputes a whole shoe's commitments: a player checks a hand, not a stream.
    RateLimit("read", ("Reveal", "Verify", "GetShoe"), player=Rate(5, 30), platform=Rate(5_000, 10_000)),
)


def entropy_works(seeds: SeedSource) -> bool:
    """Start-up self-test: SERVING only if the seed source gives a seed (the seed is discarded)."""
    try:
        seeds.server_seed()
    except EntropyUnavailable:
        return False
    return True


def service_spec(config: ServerConfig) -> ServiceSpec:
    seeds: SeedSource = config.extra.get("seed_source") or SystemSeedSource()
    index = workers.worker_index(config)
    router, private = Router.single(), []
    settings = book_settings(config)
    if index is not None:
        # A worker also listens on its private unix socket, where its siblings forward calls.
        prepare_socket_dir(config.data_dir)
        own_socket = socket_path(config.data_dir, index)
        own_socket.unlink(missing_ok=True)  # left by this worker's previous life
        count = workers.worker_count(config)
        claims = ClaimTable(
            claims_path(config.data_dir),
            buckets_for(settings.max_shoes, count),
            ttl_seconds=settings.idle_seconds + settings.retention_seconds,
        )
        router = Router(config.data_dir, index, count, claims)
        private = [f"unix:{own_socket}"]
        # Each worker enforces 1/N of a (non-service) caller's quota rather than sharing counters with
        # its siblings: a shoe lives in one worker and is forgotten there, so its count is local by
        # nature; a shared table would put a cross-process lock on every CreateShoe (~1,000/s) and need
        # repairing after a worker dies with its shoes. A caller spreading its calls over all workers
        # still gets no more than its quota on the host. Services keep their whole quota in each worker
        # (their calls come over one connection, to one worker), and the share reserved for them is of
        # each worker's own cap (FELT_DEALER_MAX_SHOES is per process too).
        settings = replace(settings, quotas=settings.quotas.split(count))
    book = ShoeBook(
        seeds=seeds,
        settings=settings,
        clock=config.extra.get("clock") or time.monotonic,
        new_id=router.new_shoe_id,
    )

    def register(server: grpc.Server) -> None:
        pb_grpc.add_DealerServiceServicer_to_server(DealerServicer(book, router), server)

    return ServiceSpec(
        name="dealer",
        services=[SERVICE],
        register=register,
        ready=lambda: entropy_works(seeds),
        on_stop=router.close,
        options=workers.port_options(config),
        private_addresses=private,
        field_caps=FIELD_CAPS,
        rate_limits=RATE_LIMITS,
    )


def serve(config: ServerConfig, announce: workers.Announce) -> int:
    """`felt serve dealer`: one process, a supervisor of FELT_DEALER_WORKERS, or one of its workers."""
    if workers.worker_index(config) is None and workers.worker_count(config) > 1:
        prepare_socket_dir(config.data_dir)
        ClaimTable.reset(claims_path(config.data_dir))  # claims of an earlier run name dead processes
    return workers.serve(service_spec, config, announce)


def build_server(config: ServerConfig) -> Service:
    """The dealer's server, built and bound (call .start()); `.server` and `.port` as usual."""
    return build(service_spec(config), config)
