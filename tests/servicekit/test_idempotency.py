"""Request ids scoped to the caller; a repeat with another request is refused (ARCHITECTURE, issue 13.1)."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2
from servicekit import errors
from servicekit.auth import Caller, Role
from servicekit.idempotency import Saved, check_request_id, fingerprint, replayed, request_key


def test_keys_are_scoped_by_role_and_subject() -> None:
    operator = Caller("operator", Role.OPERATOR)
    player_named_operator = Caller("operator", Role.PLAYER)
    assert request_key("CreateTable", "r1", caller=operator) != request_key(
        "CreateTable", "r1", caller=player_named_operator
    )
    ana, ben = Caller("ana", Role.PLAYER), Caller("ben", Role.PLAYER)
    assert request_key("Act", "r1", caller=ana) != request_key("Act", "r1", caller=ben)
    assert request_key("Act", "r1", caller=ana) != request_key("Join", "r1", caller=ana)
    assert request_key("Act", "r1", scope="t1", caller=ana) != request_key(
        "Act", "r1", scope="t2", caller=ana
    )


def test_a_separator_in_a_subject_cannot_spell_another_key() -> None:
    a = request_key("Act", "x", scope="t", caller=Caller('ana","Act', Role.PLAYER))
    b = request_key("Act", "x", scope="t", caller=Caller("ana", Role.PLAYER))
    assert a != b


def test_request_ids_are_capped_without_echo() -> None:
    check_request_id("r" * 128)
    for bad in ("", "r" * 129):
        with pytest.raises(errors.DomainError) as raised:
            check_request_id(bad)
        assert errors.status_code(raised.value) is grpc.StatusCode.INVALID_ARGUMENT
        assert raised.value.metadata["field"] == "request_id"
        assert "rrrr" not in raised.value.message


def test_a_repeat_gets_the_first_answer_and_another_request_is_refused() -> None:
    first = health_pb2.HealthCheckRequest(service="a")
    answer = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
    saved = Saved(fingerprint(first), answer.SerializeToString())
    assert replayed(None, first, health_pb2.HealthCheckResponse) is None
    assert replayed(saved, first, health_pb2.HealthCheckResponse) == answer
    with pytest.raises(errors.DomainError) as raised:
        replayed(saved, health_pb2.HealthCheckRequest(service="b"), health_pb2.HealthCheckResponse)
    assert raised.value.reason == "REQUEST_ID_REUSED"
    assert errors.status_code(raised.value) is grpc.StatusCode.ALREADY_EXISTS
