"""Issue 13, finding 7: unauthenticated callers wrote unlimited bytes into the logs (ids were bound to the
log line before the token was checked; 8 MiB per call). And finding 10, last part: undecodable request
bodies were INTERNAL. On the real table service and wallet: the caps refuse first, name the field, echo
nothing, and the logs stay small."""

from __future__ import annotations

import json

import grpc
import prometheus_client
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import errors, testing
from servicekit.auth import Role

from tests.abuse.conftest import Limited


def _refusals_counted(method: str, reason: str) -> float:
    """Calls of the table service's `method` refused before their handler (felt_rpc_refused_total)."""
    value = prometheus_client.REGISTRY.get_sample_value(
        "felt_rpc_refused_total",
        {
            "grpc_service": pb.DESCRIPTOR.services_by_name["TableService"].full_name,
            "grpc_method": method,
            "reason": reason,
            "protocol": "grpc",
        },
    )
    return value or 0.0


FLOOD = "A" * 30_000  # three of them stay under the table service's receive limit, far over any cap


def _refused(call: object, request: object) -> errors.ErrorDetails:
    with pytest.raises(grpc.RpcError) as refused:
        call(request, timeout=10)  # type: ignore[operator]
    return errors.details_of(refused.value)


def _table_method(channel: grpc.Channel, name: str, response: object) -> object:
    return channel.unary_unary(
        f"/poker.table.v1.TableService/{name}",
        request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
        response_deserializer=response.FromString,  # type: ignore[attr-defined]
    )


def test_an_unauthenticated_flood_of_ids_never_reaches_the_logs(
    limited: Limited, capsys: pytest.CaptureFixture[str]
) -> None:
    table = limited.stack.table
    anonymous = testing.channel(table.address)
    join = _table_method(anonymous, "JoinTable", pb.JoinTableResponse)
    before = _refusals_counted("JoinTable", "FIELD_TOO_LONG")
    capsys.readouterr()
    for _ in range(20):
        details = _refused(join, pb.JoinTableRequest(request_id=FLOOD, table_id=FLOOD, invite_code=FLOOD))
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT  # not UNAUTHENTICATED: the caps come first
        assert details.reason == "FIELD_TOO_LONG" and details.violations[0].field == "request_id"
        assert "AAAA" not in details.message
    eight_mib = pb.JoinTableRequest(table_id="A" * (8 * 1024 * 1024))
    with pytest.raises(grpc.RpcError) as too_big:
        join(eight_mib, timeout=10)  # type: ignore[operator]
    assert too_big.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # not even read
    out = capsys.readouterr().out
    assert "AAAA" not in out
    # Every refusal counted; one short line for the 20 (the first of the peer's in 10 s: issue 24).
    assert _refusals_counted("JoinTable", "FIELD_TOO_LONG") - before == 20
    joins = [line for line in out.splitlines() if '"rpc": "JoinTable"' in line]
    assert len(joins) == 1 and max(len(line) for line in joins) < 400
    assert {json.loads(line)["grpc_code"] for line in joins} == {"INVALID_ARGUMENT"}


def test_a_player_names_the_field_over_its_cap(limited: Limited) -> None:
    stack = limited.stack
    tables = stack.tables("ana")
    settings = pb.TableSettings(game=pb.GAME_NO_LIMIT_HOLDEM, name="n" * 81, small_blind=1, big_blind=2)
    cases = [
        (tables.CreateTable, pb.CreateTableRequest(request_id="r", settings=settings), "settings.name"),
        (
            tables.InvitePlayers,
            pb.InvitePlayersRequest(request_id="r", table_id="hu", player_ids=["a", "b", "c", "p" * 129]),
            "player_ids[3]",
        ),
        (
            tables.InvitePlayers,
            pb.InvitePlayersRequest(request_id="r", table_id="hu", player_ids=["p"] * 101),
            "player_ids",
        ),
        (
            tables.ListHandHistories,
            pb.ListHandHistoriesRequest(table_id="hu", page_token="9" * 300),
            "page_token",
        ),
        (tables.Act, pb.ActRequest(request_id="r" * 129, table_id="hu"), "request_id"),
    ]
    for call, request, path in cases:
        details = _refused(call, request)
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in details.violations] == [path], path
    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("table", Role.SERVICE))
    batch = wpb.TransferBatchRequest(request_id="b", transfers=[wpb.TransferSpec(request_id="t")] * 101)
    assert _refused(wallet.TransferBatch, batch).violations[0].field == "transfers"
    # A full batch of the ledger's own limits passes the caps (and is judged by the ledger).
    resolutions = [wpb.HoldResolution(hold_id=f"h{i}") for i in range(500)]
    full = wpb.TransferBatchRequest(request_id="b", resolutions=resolutions)
    assert _refused(wallet.TransferBatch, full).reason != "TOO_MANY_ITEMS"


@pytest.mark.parametrize("body", [b"\x0a\xff\xff\xff", b"\x12\x02\xff\xfe"], ids=["corrupt", "bad-utf8"])
def test_an_undecodable_body_is_invalid_argument_not_internal(limited: Limited, body: bytes) -> None:
    act = _table_method(limited.stack.table.channel("ana"), "Act", pb.ActResponse)
    details = _refused(act, body)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT and details.reason == "REQUEST_UNDECODABLE"
    assert [v.field for v in details.violations] == ["request"]
    assert details.metadata["message_type"] == "poker.table.v1.ActRequest"


def test_the_largest_legitimate_requests_still_fit_the_receive_limits(limited: Limited) -> None:
    """The receive limits come from the caps: the biggest batch the ledger takes (100 transfers of 64
    postings, 500 resolutions, ids and memos at their caps) and a Verify of an 8-deck shoe are read
    and judged by the service, not refused for their size."""
    from poker.dealer.v1 import dealer_service_pb2 as dpb
    from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc

    stack = limited.stack
    wide = "\U0001f0a1"  # four bytes of UTF-8
    posting = wpb.Posting(account_id="a" * 128, side=wpb.POSTING_SIDE_DEBIT, amount=1)
    batch = wpb.TransferBatchRequest(
        request_id="b" * 128,
        transfers=[wpb.TransferSpec(request_id="t" * 128, postings=[posting] * 64, memo=wide * 256)] * 100,
        resolutions=[wpb.HoldResolution(hold_id="h" * 128, capture_request_id="c" * 128, memo=wide * 256)]
        * 500,
    )
    assert 1_500_000 < len(batch.SerializeToString()) <= stack.wallet.service.receive_bytes
    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("table", Role.SERVICE))
    details = _refused(wallet.TransferBatch, batch)
    assert details.code is not grpc.StatusCode.RESOURCE_EXHAUSTED and details.reason  # the ledger's answer
    entries = 52 * 8
    verify = dpb.VerifyRequest(
        decks=8,
        dealt=[dpb.RevealedCard(position=i, card="As") for i in range(entries)],
        card_commitments=["0" * 64] * entries,
        openings=[dpb.CardOpening(position=i, card="As", salt="00" * 16) for i in range(entries)],
    )
    dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("ana"))
    assert not dealer.Verify(verify, timeout=10).valid  # judged: these cards open nothing
