"""IdentityService: the caller's identity as its token names it (the subject is the player id the tables
show), so a client learns it from the API."""

from __future__ import annotations

import grpc
from poker.identity.v1 import identity_service_pb2 as pb
from poker.identity.v1 import identity_service_pb2_grpc as pb_grpc
from servicekit.auth import Role, current_caller

ROLES = {
    Role.PLAYER: pb.ROLE_PLAYER,
    Role.SERVICE: pb.ROLE_SERVICE,
    Role.OPERATOR: pb.ROLE_OPERATOR,
    Role.ANONYMOUS: pb.ROLE_UNSPECIFIED,
}


class IdentityServicer(pb_grpc.IdentityServiceServicer):
    def WhoAmI(self, request: pb.WhoAmIRequest, context: grpc.ServicerContext) -> pb.WhoAmIResponse:
        caller = current_caller()
        return pb.WhoAmIResponse(subject=caller.subject, role=ROLES[caller.role])
