"""The evaluator service on the platform: anonymous calls allowed, no dependencies."""

from __future__ import annotations

import grpc
import handeval
from poker.evaluator.v1 import evaluator_service_pb2 as pb
from poker.evaluator.v1 import evaluator_service_pb2_grpc as pb_grpc
from servicekit.caps import Cap
from servicekit.config import ServerConfig
from servicekit.server import Service, ServiceSpec, build

from services.evaluator.servicer import EvaluatorServicer

SERVICE = pb.DESCRIPTOR.services_by_name["EvaluatorService"]
# A card is a few characters ("As", " 10s"), a list of cards at most a deck; a batch holds up to
# MAX_BATCH_HANDS hands of at most 9 cards (Omaha: 4 hole cards and the board).
_CARD = Cap(length=8, items=52)
FIELD_CAPS = {
    "hole_cards": _CARD,
    "board": _CARD,
    "dead_cards": _CARD,
    "cards": _CARD,
    "EvaluateBatchRequest.packed_cards": Cap(length=handeval.MAX_BATCH_HANDS * 9),
}


def service_spec(config: ServerConfig) -> ServiceSpec:
    def register(server: grpc.Server) -> None:
        pb_grpc.add_EvaluatorServiceServicer_to_server(EvaluatorServicer(), server)

    return ServiceSpec(
        name="evaluator",
        services=[SERVICE],
        register=register,
        allow_anonymous=True,
        field_caps=FIELD_CAPS,
    )


def build_server(config: ServerConfig) -> Service:
    """The evaluator's server, built and bound (call .start()); `.server` and `.port` as usual."""
    return build(service_spec(config), config)
