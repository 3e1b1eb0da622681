"""A watcher whose client stops reading is cut off once its bounded buffer (HTTP/2 flow control) is full
and a send waits past FELT_TABLE_WATCH_SEND_SECONDS: RESOURCE_EXHAUSTED SLOW_CONSUMER with the seq to
watch again from; the other watchers of the table keep receiving meanwhile, and the cut one resumes."""

from __future__ import annotations

import http.client
import json
import queue
import re
import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import testing
from servicekit.auth import Role
from servicekit.connect_client import DoorClient
from servicekit.testing import RunningService, running

from services.table.poker import slow_watchers
from services.table.server import service_spec as table_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, Watcher, rid, table_config, wait_until

SEND_SECONDS = 1.0
DOOR_SEND_BUFFER = 4_096
WATCH = pb.DESCRIPTOR.services_by_name["TableService"].methods_by_name["WatchTable"]
# A client that reads little at a time: its receive window (the buffer the server may fill) is small,
# so the bots of one table fill it in a few hands.
SMALL_WINDOW = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]


@pytest.fixture
def quick(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(data_dir, dealer, wallet, poker_clock=clock, watch_send_seconds=SEND_SECONDS)
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def _cut() -> float:
    return prometheus_client.REGISTRY.get_sample_value("poker_table_watchers_cut_total") or 0.0


def _open() -> float | None:
    return prometheus_client.REGISTRY.get_sample_value("felt_server_streams_open", {"service": "table"})


def _bot_table(stack: Stack) -> str:
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM,
        small_blind=50,
        big_blind=100,
        min_buy_in=2_000,
        max_buy_in=10_000,
        seats=6,
        bots_allowed=True,
        bot_seats=5,
    )
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=settings)
    )
    return str(made.table.table_id)


def test_a_watcher_that_stops_reading_is_cut_off_without_slowing_the_others_and_resumes(
    quick: Stack,
) -> None:
    cut_before = _cut()
    table_id = _bot_table(quick)
    reader = Watcher(quick.tables("ann"), table_id)
    channel = testing.channel(quick.table.address, quick.table.token("sam"), options=SMALL_WINDOW)
    stalled = pb_grpc.TableServiceStub(channel).WatchTable(  # type: ignore[no-untyped-call]
        pb.WatchTableRequest(table_id=table_id), timeout=120
    )
    try:
        first = next(stalled)  # then sam's client reads nothing more
        assert first.events
        # The bots play on: the stalled stream's window fills, its send waits, and it is cut off.
        wait_until(lambda: _cut() > cut_before, timeout=60)
        # Meanwhile and after, ann's stream keeps receiving.
        seen = len(reader.events)
        wait_until(lambda: len(reader.events) > seen + 20, timeout=20)
        got = [e.seq for e in reader.events]
        assert got == sorted(set(got))  # in order, nothing twice
        # What sam's client still had buffered, then the status with the seq to watch again from.
        received = [e.seq for e in first.events]
        with pytest.raises(grpc.RpcError) as cut:
            for response in stalled:
                received += [e.seq for e in response.events]
        assert cut.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "SLOW_CONSUMER" in (cut.value.details() or "")
        found = re.search(r"from_seq=(\d+)", cut.value.details() or "")
        assert found is not None and int(found.group(1)) <= received[-1] + 1
        # The client resumes from its own last seq: the events follow on without a gap.
        resumed = Watcher(quick.tables("sam"), table_id, from_seq=received[-1] + 1)
        try:
            wait_until(lambda: len(resumed.events) > 5, timeout=20)
            after = [e.seq for e in resumed.events]
            assert after[0] == received[-1] + 1 and after == sorted(set(after))
            assert set(after[:5]) <= set(got)  # the same events ann received
        finally:
            resumed.close()
        assert received == sorted(set(received))
        wait_until(lambda: _open() == 1, timeout=10)
    finally:
        stalled.cancel()
        reader.close()
        channel.close()


def test_grpc_core_call_is_still_there() -> None:
    """The cut-off's one private use of grpcio (slow_watchers.grpc_core_call): a sync server's stream,
    ended from another thread, reaches its client as RESOURCE_EXHAUSTED with the seq to resume from. If a
    grpcio release moves the core call, this fails (and the cut-off would end streams CANCELLED)."""
    contexts: queue.Queue[Any] = queue.Queue()
    release = threading.Event()

    def watch(_request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        contexts.put(context)
        yield b"first"
        release.wait(30)  # the handler's thread is busy (as a send waiting on a full window)

    handler = grpc.method_handlers_generic_handler(
        "felt.test.Slow", {"Watch": grpc.unary_stream_rpc_method_handler(watch)}
    )
    server = grpc.server(ThreadPoolExecutor(max_workers=2), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        watch_call: Any = channel.unary_stream("/felt.test.Slow/Watch", None, None)
        call = watch_call(b"", timeout=30)
        assert next(call) == b"first"
        context = contexts.get(timeout=10)
        assert slow_watchers.grpc_core_call(context) is not None
        slow_watchers.cut_call(context, 7, 1.0)
        with pytest.raises(grpc.RpcError) as cut:
            next(call)
        assert cut.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "SLOW_CONSUMER" in (cut.value.details() or "") and "from_seq=7" in (cut.value.details() or "")
    finally:
        release.set()
        channel.close()
        server.stop(None)


@pytest.fixture
def quick_door(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(
        data_dir,
        dealer,
        wallet,
        poker_clock=clock,
        watch_send_seconds=SEND_SECONDS,
        web_port=0,
        # The kernel's buffer of the door's connections, small (autotuned it grows to MiBs): the
        # stalled stream fills the door's buffers within seconds.
        web_send_buffer_bytes=DOOR_SEND_BUFFER,
    )
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


class RawConnectWatch:
    """WatchTable over Connect (binary) on a raw HTTPS connection with a small receive buffer, read only
    when the test asks: a browser tab that stops reading (connectrpc's client reads on its own)."""

    def __init__(self, stack: Stack, player: str, table_id: str) -> None:
        host, port = stack.table.web_url.removeprefix("https://").split(":")
        trust = ssl.create_default_context(cafile=str(testing.trust_files().ca))
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.settimeout(60)
        raw.connect((socket.gethostbyname(host), int(port)))
        self._connection = http.client.HTTPSConnection(host, int(port), timeout=60, context=trust)
        self._connection.sock = trust.wrap_socket(raw, server_hostname=host)
        body = pb.WatchTableRequest(table_id=table_id).SerializeToString()
        self._connection.request(
            "POST",
            "/poker.table.v1.TableService/WatchTable",
            body=struct.pack(">BI", 0, len(body)) + body,
            headers={
                "content-type": "application/connect+proto",
                "connect-protocol-version": "1",
                "authorization": f"Bearer {stack.table.token(player)}",
            },
        )
        self._reply = self._connection.getresponse()
        assert self._reply.status == 200

    def next(self) -> pb.WatchTableResponse | dict[str, Any]:
        """The next message, or the stream's end (Connect's end-stream JSON)."""
        flags, length = struct.unpack(">BI", self._reply.read(5))
        data = self._reply.read(length)
        if flags & 0x02:
            return dict(json.loads(data))
        return pb.WatchTableResponse.FromString(data)

    def close(self) -> None:
        self._connection.close()


@pytest.mark.slow  # ~30 s: the stalled stream fills asyncio's and TLS's buffers at the bots' pace
def test_a_door_watcher_that_stops_reading_is_cut_off_and_resumes(quick_door: Stack) -> None:
    """The same cut-off through the browser door (Connect): the stream's handler is freed once the door's
    buffer (servicekit.door.STREAM_BUFFER messages) stays full past the send timeout; the client, reading
    again, gets what was buffered, then RESOURCE_EXHAUSTED SLOW_CONSUMER with the seq to resume from."""
    stack = quick_door
    cut_before = _cut()
    table_id = _bot_table(stack)
    reader = Watcher(stack.tables("ann"), table_id)
    stalled = RawConnectWatch(stack, "sam", table_id)
    try:
        first = stalled.next()  # then sam's client reads nothing more
        assert isinstance(first, pb.WatchTableResponse) and first.events
        wait_until(lambda: _cut() > cut_before, timeout=60)
        seen = len(reader.events)
        wait_until(lambda: len(reader.events) > seen + 20, timeout=20)
        got = [e.seq for e in reader.events]
        assert got == sorted(set(got))
        received = [e.seq for e in first.events]
        while isinstance(item := stalled.next(), pb.WatchTableResponse):
            received += [e.seq for e in item.events]
        error = item["error"]
        assert error["code"] == "resource_exhausted" and "SLOW_CONSUMER" in error["message"]
        found = re.search(r"from_seq=(\d+)", error["message"])
        assert found is not None and int(found.group(1)) <= received[-1] + 1
        # In order, nothing twice, and no gap: every event ann (watching too) got in that range.
        assert received == [s for s in got if received[0] <= s <= received[-1]]
        with DoorClient(stack.table.web_url, "connect+proto", stack.table.token("sam")) as door:
            resumed = door.stream(WATCH, pb.WatchTableRequest(table_id=table_id, from_seq=received[-1] + 1))
            after: list[int] = []
            while len(after) < 5:
                after += [e.seq for e in next(resumed).events]
            resumed.close()  # type: ignore[attr-defined]
        later = [e.seq for e in reader.events if e.seq > received[-1]]
        assert after == later[: len(after)]  # on from where sam's stream was cut, without a gap
    finally:
        stalled.close()
        reader.close()
