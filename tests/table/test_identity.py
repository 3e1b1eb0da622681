"""IdentityService.WhoAmI: a client learns its own identity (the token's subject, which is the player id the
tables show for its seats) from the API."""

from __future__ import annotations

import grpc
import pytest
from poker.identity.v1 import identity_service_pb2 as pb
from poker.identity.v1 import identity_service_pb2_grpc as pb_grpc
from servicekit.auth import Role

from tests.table.conftest import Stack, rpc_reason


def who(stack: Stack, subject: str | None, role: Role = Role.PLAYER) -> pb.WhoAmIResponse:
    stub = pb_grpc.IdentityServiceStub(stack.table.channel(subject, role))
    return stub.WhoAmI(pb.WhoAmIRequest(), timeout=5)


def test_who_am_i_names_the_tokens_subject_and_role(stack: Stack) -> None:
    assert (who(stack, "ana").subject, who(stack, "ana").role) == ("ana", pb.ROLE_PLAYER)
    assert who(stack, "ops", Role.OPERATOR).role == pb.ROLE_OPERATOR
    assert who(stack, "tournament", Role.SERVICE).role == pb.ROLE_SERVICE
    with pytest.raises(grpc.RpcError) as anonymous:
        who(stack, None)
    assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert rpc_reason(anonymous.value) == "TOKEN_MISSING"
