"""The evaluator service on the platform: anonymous calls allowed, no dependencies."""

from __future__ import annotations

import grpc
from poker.evaluator.v1 import evaluator_service_pb2 as pb
from poker.evaluator.v1 import evaluator_service_pb2_grpc as pb_grpc
from servicekit.config import ServerConfig
from servicekit.server import Service, ServiceSpec, build

from services.evaluator.servicer import EvaluatorServicer

SERVICE = pb.DESCRIPTOR.services_by_name["EvaluatorService"]


def service_spec(config: ServerConfig) -> ServiceSpec:
    def register(server: grpc.Server) -> None:
        pb_grpc.add_EvaluatorServiceServicer_to_server(EvaluatorServicer(), server)

    return ServiceSpec(name="evaluator", services=[SERVICE], register=register, allow_anonymous=True)


def build_server(config: ServerConfig) -> Service:
    """The evaluator's server, built and bound (call .start()); `.server` and `.port` as usual."""
    return build(service_spec(config), config)
