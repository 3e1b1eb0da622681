"""Two dealer worker processes behind one port (FELT_DEALER_WORKERS=2), as `python -m services.dealer`.

Shoes created over some connections and dealt over others (forwarded between the workers) give the
right cards, each once; a CreateShoe replayed over another connection is one shoe; a SIGKILLed worker's
shoes answer UNAVAILABLE or NOT_FOUND (never cards) and the supervisor starts the worker again; no
server seed or salt is ever on disk (the whole data directory, metrics files included) or in the logs."""

from __future__ import annotations

import os
import random
import signal
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from dealing.cards import CARD_TEXTS
from dealing.commitments import position_salt
from dealing.shuffle import shoe_order
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit import auth, testing
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import Supervised

REPO = Path(__file__).resolve().parents[2]
CHANNELS = 12  # the kernel spreads connections: all 12 on one worker has odds 1 in 2,048
SHOES = 24


class Dealers(Supervised):
    """`python -m services.dealer` with FELT_DEALER_WORKERS=2, its logs in files."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__("dealer", data_dir, cwd=REPO, workers=2, env={"FELT_DEALER_MAX_WORKERS": "8"})

    def summed(self, name: str) -> float:
        """A metric summed over every worker, from the supervisor's one /metrics endpoint."""
        text = urllib.request.urlopen(self.metrics_url, timeout=5).read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{"))


@pytest.fixture
def dealers() -> Iterator[Dealers]:
    # A short data directory of its own: unix socket paths are limited to 107 bytes.
    with tempfile.TemporaryDirectory(prefix="dw-") as tmp:
        running = Dealers(Path(tmp))
        try:
            yield running
        finally:
            code = running.stop()
            assert code == 0, running.err.read_text()


def _retrying(call: Callable[[], object], seconds: float = 20.0) -> object:
    """Repeat while this connection's worker is away (UNAVAILABLE from the transport, not the dealer)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except grpc.RpcError as error:
            if error.code() is not grpc.StatusCode.UNAVAILABLE or details_of(error).reason:
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _channel(address: str) -> grpc.Channel:
    return testing.channel(
        address,
        name="table",  # the certificate of the table, whose service token the calls carry
        options=[
            ("grpc.use_local_subchannel_pool", 1),  # one connection per channel
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 300),
        ],
    )


@pytest.mark.slow
def test_shoes_stay_with_their_worker_and_die_with_it(dealers: Dealers) -> None:
    md = auth.bearer_metadata(auth.issue_token(auth.load_keys(dealers.data_dir), "table", Role.SERVICE))
    channels = [_channel(dealers.address) for _ in range(CHANNELS)]
    stubs = [pb_grpc.DealerServiceStub(ch) for ch in channels]
    rng = random.Random(3)
    workers = dealers.ready_workers()
    assert sorted(index for index, _ in workers) == [0, 1]

    # Shoes made through one connection, replayed through another: one shoe each.
    shoes: list[pb.CreateShoeResponse] = []
    for i in range(SHOES):
        request = pb.CreateShoeRequest(decks=1, request_id=f"hand-{i}")
        first = stubs[i % CHANNELS].CreateShoe(request, metadata=md)
        again = stubs[(i + 5) % CHANNELS].CreateShoe(request, metadata=md)
        assert again.shoe_id == first.shoe_id and again.commitment == first.commitment
        shoes.append(first)
    by_worker = {w: [s for s in shoes if s.shoe_id.startswith(f"w{w}-")] for w in (0, 1)}
    assert by_worker[0] and by_worker[1]

    # Dealt a few cards at a time through random connections (forwarded when they land elsewhere).
    dealt: dict[str, list[pb.DealtCard]] = {s.shoe_id: [] for s in shoes}
    for turn in range(3):
        for shoe in shoes:
            via = rng.choice(stubs)
            reply = via.Deal(
                pb.DealRequest(shoe_id=shoe.shoe_id, count=2, request_id=f"d{turn}"), metadata=md
            )
            dealt[shoe.shoe_id] += reply.cards
    for shoe in shoes:
        cards = dealt[shoe.shoe_id]
        assert [c.position for c in cards] == list(range(6)) and len({c.card for c in cards}) == 6
    for _, pid in workers:  # the kernel gave connections to both
        assert dealers.handled_by(pid, "Deal") > 0
    assert dealers.summed("poker_dealer_shoes_created_total") == SHOES  # replays made no shoe
    assert dealers.summed("poker_dealer_forwarded_calls_total") > 0

    # SIGKILL worker 0: its shoes answer UNAVAILABLE or NOT_FOUND through every connection, never cards.
    victim_pid = dict(workers)[0]
    os.kill(victim_pid, signal.SIGKILL)
    lost = by_worker[0]
    for shoe in lost:
        for via in stubs:
            with pytest.raises(grpc.RpcError) as caught:
                via.Deal(pb.DealRequest(shoe_id=shoe.shoe_id, count=2, request_id="after"), metadata=md)
            assert caught.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.NOT_FOUND)

    # The supervisor starts worker 0 again; it knows none of the old shoes.
    deadline = time.monotonic() + 30
    while len(dealers.ready_workers()) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    restarted = dealers.ready_workers()[2:]
    assert restarted and restarted[0][0] == 0 and restarted[0][1] != victim_pid
    for shoe in lost:
        for via in stubs:
            with pytest.raises(grpc.RpcError) as caught:
                _retrying(
                    lambda via=via, shoe=shoe: via.Deal(
                        pb.DealRequest(shoe_id=shoe.shoe_id, count=2, request_id="after"), metadata=md
                    )
                )
            assert details_of(caught.value).reason in ("SHOE_NOT_FOUND", "SHOE_WORKER_UNAVAILABLE")

    # Worker 1's shoes carry on from where they were, through any connection; new shoes reach both.
    for shoe in by_worker[1]:
        reply = _retrying(
            lambda shoe=shoe: rng.choice(stubs).Deal(
                pb.DealRequest(shoe_id=shoe.shoe_id, count=46, request_id="rest"), metadata=md
            )
        )
        dealt[shoe.shoe_id] += reply.cards  # type: ignore[attr-defined]
    # New connections reach both workers again, and each makes the shoes asked of it.
    fresh_channels = [_channel(dealers.address) for _ in range(CHANNELS)]
    fresh = [
        _retrying(
            lambda ch=ch, i=i: pb_grpc.DealerServiceStub(ch).CreateShoe(
                pb.CreateShoeRequest(decks=1, request_id=f"new-{i}"), metadata=md
            )
        )
        for i, ch in enumerate(fresh_channels)
    ]
    assert {s.shoe_id[:2] for s in fresh} == {"w0", "w1"}  # type: ignore[attr-defined]
    channels += fresh_channels

    # Every surviving shoe revealed: its dealt cards are the owner's order, each position once.
    seeds: list[bytes] = []
    for shoe in by_worker[1]:
        _retrying(
            lambda shoe=shoe: stubs[0].CloseShoe(
                pb.CloseShoeRequest(shoe_id=shoe.shoe_id, request_id="c"), metadata=md
            )
        )
        revealed = _retrying(
            lambda shoe=shoe: stubs[1].Reveal(pb.RevealRequest(shoe_id=shoe.shoe_id), metadata=md)
        )
        seed = bytes.fromhex(revealed.server_seed)  # type: ignore[attr-defined]
        seeds.append(seed)
        order = shoe_order(seed, "", 0, 1)
        cards = dealt[shoe.shoe_id]
        assert [c.position for c in cards] == list(range(52))
        assert [c.card for c in cards] == [CARD_TEXTS[code] for code in order]
        assert all(bytes.fromhex(c.salt) == position_salt(seed, c.position) for c in cards)
    for ch in channels:
        ch.close()

    # No seed and no salt anywhere on disk or in the logs (hex or raw).
    salts = [bytes.fromhex(c.salt) for cards in dealt.values() for c in cards]
    secrets_ = [s for secret in seeds + salts for s in (secret, secret.hex().encode())]
    files = [p for p in dealers.data_dir.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".db") for p in files)  # the metrics files are scanned too
    assert any(p.name == "claims" for p in files)  # and the workers' claim table
    assert dealers.out in files and dealers.err in files  # and the logs of every process
    for path in files:
        content = path.read_bytes()
        leaked = [s for s in secrets_ if s in content]
        assert not leaked, f"{path} holds a seed or salt"
