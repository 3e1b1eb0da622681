"""Dealer workers in one test process: two dealers configured as workers 0 and 1 of 2, each on its own
TCP port and its private unix socket, forwarding calls about shoes the other holds (routing.py).

Fast and without a supervisor; tests/dealer/test_workers_processes.py runs the real thing (two
processes on one port, a SIGKILL, the restart)."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import grpc
import pytest
from dealing import DeterministicSeedSource
from dealing.cards import CARD_TEXTS
from dealing.shuffle import shoe_order
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.config import ConfigError, ServerConfig
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.claims import SLOTS_PER_BUCKET, ClaimTable, buckets_for
from services.dealer.routing import FORWARDED_BY, Router, prepare_socket_dir, socket_path
from services.dealer.server import service_spec
from services.dealer.servicer import FORWARDED


@pytest.fixture
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Short: a unix socket path is limited to 107 bytes.
    return Path(os.path.realpath(tmp_path_factory.mktemp("dw")))


def _worker(data_dir: Path, index: int, master: int) -> ServerConfig:
    return config_for_tests(
        "dealer", data_dir, workers=2, worker_index=index, seed_source=DeterministicSeedSource(master)
    )


@pytest.fixture
def pair(data_dir: Path) -> Iterator[list[RunningService]]:
    with ExitStack() as stack:
        yield [stack.enter_context(running(service_spec, _worker(data_dir, i, 100 + i))) for i in range(2)]


def stub(svc: RunningService, subject: str = "table", role: Role = Role.SERVICE) -> pb_grpc.DealerServiceStub:
    return pb_grpc.DealerServiceStub(svc.channel(subject, role))


def forwarded(rpc: str) -> float:
    return FORWARDED.labels(rpc)._value.get()


def test_shoes_created_and_dealt_through_either_worker_give_each_card_once(
    pair: list[RunningService],
) -> None:
    a, b = stub(pair[0]), stub(pair[1])
    before = forwarded("Deal"), forwarded("CreateShoe")
    shoes = [
        (a if i % 2 else b).CreateShoe(pb.CreateShoeRequest(decks=1, request_id=f"r{i}")) for i in range(8)
    ]
    owners = {shoe.shoe_id.split("-")[0] for shoe in shoes}
    assert owners == {"w0", "w1"}  # each worker makes the shoes asked of it
    for shoe in shoes:
        dealt = []
        for turn in range(4):  # alternate channels: half of the deals are forwarded
            via = (a, b)[turn % 2]
            dealt += via.Deal(pb.DealRequest(shoe_id=shoe.shoe_id, count=13, request_id=f"d{turn}")).cards
        # A retry through the other worker is a replay: the same cards, none dealt again.
        again = b.Deal(pb.DealRequest(shoe_id=shoe.shoe_id, count=13, request_id="d0")).cards
        assert list(again) == list(dealt[:13])
        assert [c.position for c in dealt] == list(range(52))
        assert len({c.card for c in dealt}) == 52
        a.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe.shoe_id, request_id="close"))
        revealed = b.Reveal(pb.RevealRequest(shoe_id=shoe.shoe_id))
        order = shoe_order(bytes.fromhex(revealed.server_seed), "", 0, 1)
        assert [c.card for c in dealt] == [CARD_TEXTS[code] for code in order]  # the owner's cards
        assert revealed.commitment == shoe.commitment
    assert forwarded("Deal") > before[0] and forwarded("CreateShoe") == before[1]


def test_create_shoe_replayed_through_the_other_worker_is_one_shoe(pair: list[RunningService]) -> None:
    a, b = stub(pair[0]), stub(pair[1])
    before = forwarded("CreateShoe")
    for i in range(6):
        request = pb.CreateShoeRequest(decks=2, request_id=f"same-{i}", client_seed="c")
        first, second = a.CreateShoe(request), b.CreateShoe(request)
        assert first.shoe_id == second.shoe_id and first.commitment == second.commitment
    assert forwarded("CreateShoe") == before + 6  # each replay went to the worker that made the shoe
    # Another caller with the same request id gets its own shoe (ids are per caller).
    other = stub(pair[1], "other-table").CreateShoe(
        pb.CreateShoeRequest(decks=2, request_id="same-0", client_seed="c")
    )
    assert (
        other.shoe_id
        != a.CreateShoe(pb.CreateShoeRequest(decks=2, request_id="same-0", client_seed="c")).shoe_id
    )
    # A reuse with other parameters is refused wherever it lands.
    for via in (a, b):
        with pytest.raises(grpc.RpcError) as caught:
            via.CreateShoe(pb.CreateShoeRequest(decks=3, request_id="same-1", client_seed="c"))
        assert details_of(caught.value).reason == "REQUEST_ID_REUSED"


def test_the_owner_applies_its_rules_to_forwarded_calls(pair: list[RunningService]) -> None:
    """The caller's own token travels with the call: the owner refuses what it would refuse directly,
    and its error (code, reason, ErrorInfo) reaches the caller unchanged."""
    a = stub(pair[0])
    shoe = a.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="mine"))
    elsewhere = pair[1 - int(shoe.shoe_id[1])]  # the worker that does not hold it
    intruder = stub(elsewhere, "mallory", Role.PLAYER)
    for call in (
        lambda: intruder.Deal(pb.DealRequest(shoe_id=shoe.shoe_id, count=1, request_id="x")),
        lambda: intruder.Peek(pb.PeekRequest(shoe_id=shoe.shoe_id)),
        lambda: intruder.Reveal(pb.RevealRequest(shoe_id=shoe.shoe_id)),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            call()
        details = details_of(caught.value)
        assert details.code is grpc.StatusCode.PERMISSION_DENIED and details.domain == "dealer"
    missing = f"{shoe.shoe_id[:3]}00000000-0000-4000-8000-000000000000"
    with pytest.raises(grpc.RpcError) as caught:
        stub(elsewhere).Deal(pb.DealRequest(shoe_id=missing, count=1, request_id="x"))
    assert details_of(caught.value).reason == "SHOE_NOT_FOUND"
    assert stub(elsewhere).GetShoe(pb.GetShoeRequest(shoe_id=shoe.shoe_id)).shoe.remaining == 52


def test_the_forwarded_marker_is_ignored_from_a_network_peer(pair: list[RunningService]) -> None:
    """Only a unix-socket peer (another worker) can stop a call from being forwarded."""
    a = stub(pair[0])
    shoe = a.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="marker"))
    elsewhere = pair[1 - int(shoe.shoe_id[1])]
    cards = stub(elsewhere).Deal(
        pb.DealRequest(shoe_id=shoe.shoe_id, count=2, request_id="d"), metadata=[(FORWARDED_BY, "9")]
    )
    assert len(cards.cards) == 2  # forwarded to the owner, not answered NOT_FOUND here


def test_a_shoe_on_a_worker_that_is_down_is_unavailable_without_transport_details(data_dir: Path) -> None:
    lone_config = _worker(data_dir, 1, 7)
    with running(service_spec, lone_config) as lone, pytest.raises(grpc.RpcError) as caught:
        stub(lone).Deal(
            pb.DealRequest(shoe_id="w0-00000000-0000-4000-8000-000000000000", count=1, request_id="x")
        )
    details = details_of(caught.value)
    assert details.code is grpc.StatusCode.UNAVAILABLE and details.reason == "SHOE_WORKER_UNAVAILABLE"
    assert str(data_dir) not in details.message and "sock" not in details.message


def test_socket_directory_is_private_and_ids_route_stably(data_dir: Path, tmp_path: Path) -> None:
    path = prepare_socket_dir(data_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    path.chmod(0o755)
    assert stat.S_IMODE(prepare_socket_dir(data_dir).stat().st_mode) == 0o700
    with pytest.raises(ConfigError):
        socket_path(tmp_path / ("x" * 120), 0)
    router = Router(data_dir, 1, 3)  # no claim table: every request is made here
    try:
        assert router.new_shoe_id().startswith("w1-")
        assert router.creator_of("service:table", "r1") == 1
        assert router.owner_of_shoe("w2-abc") == 2
        for foreign in ("w7-abc", "wx-abc", "abc", "w-1", ""):  # not a worker's id: looked up here
            assert router.owner_of_shoe(foreign) == 1
    finally:
        router.close()
    single = Router.single()
    assert "-" in single.new_shoe_id() and not single.new_shoe_id().startswith("w")


def test_claims_are_shared_through_the_file_lapse_and_give_way_when_full(tmp_path: Path) -> None:
    now = [1000.0]
    first = ClaimTable(tmp_path / "claims", 1, ttl_seconds=60, clock=lambda: now[0])
    second = ClaimTable(tmp_path / "claims", 1, ttl_seconds=60, clock=lambda: now[0])  # another process
    try:
        assert first.claim("service:table", "r1", 0) == 0
        assert second.claim("service:table", "r1", 1) == 0  # the retry elsewhere: worker 0 has it
        assert second.claim("player:bob", "r1", 1) == 1  # request ids are per caller
        now[0] += 62  # both workers forgot the request by now: a new claim
        assert second.claim("service:table", "r1", 1) == 1
        assert first.claim("service:table", "r1", 0) == 1
        # One bucket of 16 slots: a 17th live claim takes the oldest slot.
        for i in range(SLOTS_PER_BUCKET):
            now[0] += 1
            assert first.claim("service:table", f"fill-{i}", 0) == 0
        assert second.claim("service:table", "fill-0", 1) == 0
        assert second.claim("service:table", "one-more", 1) == 1
        assert second.claim("service:table", "fill-15", 1) == 0  # the newest are kept
    finally:
        first.close()
        second.close()
    assert buckets_for(100_000, 2) == 32_768 and buckets_for(10**9, 3) == 1 << 17 and buckets_for(1, 1) == 1


def test_forwarding_both_ways_with_busy_thread_pools_does_not_stall(data_dir: Path) -> None:
    """Each worker with 2 threads, 12 callers forwarding through each at once: forwarded calls are
    served by the private socket's own threads, so full pools on both sides cannot wait on each other."""
    configs = [
        config_for_tests(
            "dealer",
            data_dir,
            workers=2,
            worker_index=i,
            max_workers=2,
            seed_source=DeterministicSeedSource(i),
        )
        for i in range(2)
    ]
    with ExitStack() as stack:
        pair = [stack.enter_context(running(service_spec, config)) for config in configs]
        stubs = [stub(svc) for svc in pair]
        shoes = [
            stubs[i % 2].CreateShoe(pb.CreateShoeRequest(decks=8, request_id=f"busy-{i}")) for i in range(24)
        ]
        errors: list[BaseException] = []

        def deal_elsewhere(i: int) -> None:
            shoe = shoes[i]
            via = stubs[1 - int(shoe.shoe_id[1])]  # always the worker that does not hold it
            try:
                for turn in range(10):
                    via.Deal(pb.DealRequest(shoe_id=shoe.shoe_id, count=3, request_id=f"t{turn}"), timeout=4)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=deal_elsewhere, args=(i,)) for i in range(len(shoes))]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors[0]
        assert time.monotonic() - started < 20


def test_a_callers_quota_holds_across_workers_and_a_services_does_not_shrink(data_dir: Path) -> None:
    """Issue 13 finding 3 with two workers: each enforces half of a player's quota (4 -> 2 each), so a player
    spreading calls over both still holds no more than 4; the table service keeps its whole quota in the
    worker its one connection lands on."""
    limits = {"shoes_per_caller": 4, "shoe_burst_per_caller": 100, "shoes_per_service": 6}
    with ExitStack() as stack:
        workers = [
            stack.enter_context(
                running(
                    service_spec,
                    config_for_tests(
                        "dealer",
                        data_dir,
                        **{
                            "workers": 2,
                            "worker_index": i,
                            **limits,
                        },
                    ),
                )
            )
            for i in range(2)
        ]
        made, refused = 0, []
        for i in range(6):
            try:
                stub(workers[i % 2], "mallory", Role.PLAYER).CreateShoe(
                    pb.CreateShoeRequest(decks=1, request_id=f"m{i}")
                )
                made += 1
            except grpc.RpcError as error:
                refused.append(details_of(error).reason)
        assert made == 4 and refused == ["SHOE_QUOTA_EXCEEDED"] * 2
        table = stub(workers[0])
        for hand in range(6):
            table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id=f"h{hand}"))
        with pytest.raises(grpc.RpcError) as over:
            table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="h6"))
        assert details_of(over.value).reason == "SHOE_QUOTA_EXCEEDED"
