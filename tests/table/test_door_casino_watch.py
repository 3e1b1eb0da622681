"""WatchCasinoTable through the browser door (gRPC-Web, connectrpc's client): the same numbered, private
events as over gRPC, and a round's decisions seen as they are made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from poker.table.v1 import casino_service_pb2 as pb
from servicekit.connect_client import DoorClient
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import FakeClock, Stack, bets, rid, table_config

CASINO = pb.DESCRIPTOR.services_by_name["CasinoService"]
WATCH = CASINO.methods_by_name["WatchCasinoTable"]


@pytest.fixture
def stack(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = FakeClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, clock=clock, web_port=0)) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def test_casino_stream_over_grpc_web_is_the_grpc_stream(stack: Stack) -> None:
    for player, seat in (("alice", 1), ("bob", 2)):
        stack.fund(player, 500)
        stub = stack.casino(player)
        stub.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-live", seat=seat))
        stub.PlaceBets(
            pb.PlaceBetsRequest(request_id=rid(), table_id="ch-live", seat=seat, bets=bets(ante=10))
        )
    stack.casino("alice").DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-live"))
    with DoorClient(stack.table.web_url, "grpc-web+proto", stack.table.token("bob")) as bob:
        stream = bob.stream(WATCH, pb.WatchCasinoTableRequest(table_id="ch-live"), timeout=30)
        events: list[pb.CasinoEvent] = []
        while not any(e.HasField("phase_changed") for e in events):
            events.append(next(stream).event)
        native = stack.casino("bob").WatchCasinoTable(
            pb.WatchCasinoTableRequest(table_id="ch-live"), timeout=5
        )
        over_grpc = [next(native).event for _ in events]
        native.cancel()
        assert over_grpc == events
        hole = [e.hole_cards for e in events if e.HasField("hole_cards")]
        assert [h.seat for h in hole] == [2]  # bob's own cards only
        # Alice decides: bob's open stream has it at once (the decision's event, before anything else).
        stack.casino("alice").Decide(
            pb.DecideRequest(request_id=rid(), table_id="ch-live", seat=1, decision=pb.CASINO_DECISION_FOLD)
        )
        decided = next(stream).event
        assert decided.WhichOneof("event") == "decision_made" and decided.seq > events[-1].seq
        stream.close()  # type: ignore[attr-defined]
