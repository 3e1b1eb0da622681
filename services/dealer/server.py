"""The dealer service on the platform: every call needs a token; shoes live in this process's memory."""

from __future__ import annotations

import time

import grpc
from dealing import EntropyUnavailable, SeedSource, ShoeBook, SystemSeedSource
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit.config import ServerConfig
from servicekit.server import Service, ServiceSpec, build

from services.dealer.config import book_settings
from services.dealer.servicer import DealerServicer

SERVICE = pb.DESCRIPTOR.services_by_name["DealerService"]


def entropy_works(seeds: SeedSource) -> bool:
    """Start-up self-test: SERVING only if the seed source gives a seed (the seed is discarded)."""
    try:
        seeds.server_seed()
    except EntropyUnavailable:
        return False
    return True


def service_spec(config: ServerConfig) -> ServiceSpec:
    seeds: SeedSource = config.extra.get("seed_source") or SystemSeedSource()
    book = ShoeBook(
        seeds=seeds,
        settings=book_settings(config),
        clock=config.extra.get("clock") or time.monotonic,
    )

    def register(server: grpc.Server) -> None:
        pb_grpc.add_DealerServiceServicer_to_server(DealerServicer(book), server)

    return ServiceSpec(
        name="dealer", services=[SERVICE], register=register, ready=lambda: entropy_works(seeds)
    )


def build_server(config: ServerConfig) -> Service:
    """The dealer's server, built and bound (call .start()); `.server` and `.port` as usual."""
    return build(service_spec(config), config)
