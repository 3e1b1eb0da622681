"""DealerService contract tests: a real server on a real socket, real tokens, real status details."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from dealing import DeterministicSeedSource, SystemSeedSource
from dealing.cards import CARD_TEXTS
from dealing.shuffle import shoe_order
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit import auth, testing
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, free_port, running

from services.dealer.server import service_spec

ROOT = Path(__file__).resolve().parents[2]
MASTER = 2026


def expected_seed() -> bytes:
    """The seed of the first shoe: the start-up entropy self-test draws (and discards) seed 0."""
    source = DeterministicSeedSource(MASTER)
    source.server_seed()
    return source.server_seed()


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def dealer(tmp_path: Path, clock: FakeClock) -> Iterator[RunningService]:
    config = config_for_tests(
        "dealer",
        tmp_path,
        seed_source=DeterministicSeedSource(MASTER),
        clock=clock,
        shoe_idle_seconds=300.0,
    )
    with running(service_spec, config) as svc:
        yield svc


def stub(
    svc: RunningService, subject: str | None = "table", role: Role = Role.SERVICE
) -> pb_grpc.DealerServiceStub:
    return pb_grpc.DealerServiceStub(svc.channel(subject, role))


def expect_error(call: object, code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    details = details_of(caught.value)  # type: ignore[arg-type]
    assert (details.code, details.reason, details.domain) == (code, reason, "dealer")


def new_shoe(
    table: pb_grpc.DealerServiceStub, request_id: str = "hand-1", **fields: object
) -> pb.CreateShoeResponse:
    return table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id=request_id, **fields))  # type: ignore[arg-type]


def test_a_hand_end_to_end_verifies(dealer: RunningService) -> None:
    table = stub(dealer)
    created = new_shoe(table, client_seed="alice+bob", nonce=17)
    assert created.algorithm == "felt-hmac-sha256-fisher-yates-v1"
    assert len(created.commitment) == 64 and len(created.card_commitments) == 52
    assert created.shoe.state == pb.SHOE_STATE_OPEN and created.shoe.remaining == 52
    hole = table.Deal(pb.DealRequest(shoe_id=created.shoe_id, count=4, request_id="hole"))
    burned = table.Burn(pb.BurnRequest(shoe_id=created.shoe_id, count=1, request_id="burn"))
    flop = table.Deal(pb.DealRequest(shoe_id=created.shoe_id, count=3, request_id="flop"))
    assert [c.position for c in hole.cards] == [0, 1, 2, 3] and list(burned.positions) == [4]
    assert flop.remaining == 44
    # the cards are the documented function of the injected seed
    seed = expected_seed()
    order = [CARD_TEXTS[c] for c in shoe_order(seed, "alice+bob", 17, 1)]
    assert [c.card for c in hole.cards] + [c.card for c in flop.cards] == order[:4] + order[5:8]
    closed = table.CloseShoe(pb.CloseShoeRequest(shoe_id=created.shoe_id, request_id="close"))
    assert closed.shoe.state == pb.SHOE_STATE_CLOSED
    revealed = table.Reveal(pb.RevealRequest(shoe_id=created.shoe_id))
    assert revealed.server_seed == seed.hex() and list(revealed.order) == order
    assert [(d.position, d.use) for d in revealed.dealt][3:6] == [
        (3, pb.CARD_USE_DEALT),
        (4, pb.CARD_USE_BURNED),
        (5, pb.CARD_USE_DEALT),
    ]
    verified = table.Verify(
        pb.VerifyRequest(
            algorithm=revealed.algorithm,
            decks=revealed.decks,
            server_seed=revealed.server_seed,
            client_seed=revealed.client_seed,
            nonce=revealed.nonce,
            commitment=created.commitment,
            dealt=revealed.dealt,
            card_commitments=created.card_commitments,
        )
    )
    assert verified.valid and verified.cards_checked == 8


def test_players_verify_their_own_cards_with_openings(dealer: RunningService) -> None:
    table = stub(dealer)
    created = new_shoe(table)
    cards = table.Deal(pb.DealRequest(shoe_id=created.shoe_id, count=2, request_id="alice")).cards
    player = stub(dealer, "alice", Role.PLAYER)
    openings = [pb.CardOpening(position=c.position, card=c.card, salt=c.salt) for c in cards]
    ok = player.Verify(pb.VerifyRequest(card_commitments=created.card_commitments, openings=openings))
    assert ok.valid and ok.cards_checked == 2
    lie = pb.CardOpening(
        position=cards[0].position, card="As" if cards[0].card != "As" else "Ks", salt=cards[0].salt
    )
    bad = player.Verify(pb.VerifyRequest(card_commitments=created.card_commitments, openings=[lie]))
    assert not bad.valid and bad.problems[0].reason == "CARD_COMMITMENT_MISMATCH"
    assert bad.problems[0].position == cards[0].position


def test_verify_catches_a_tampered_shoe(dealer: RunningService) -> None:
    table = stub(dealer)
    created = new_shoe(table)
    table.Deal(pb.DealRequest(shoe_id=created.shoe_id, count=3, request_id="d"))
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=created.shoe_id, request_id="c"))
    revealed = table.Reveal(pb.RevealRequest(shoe_id=created.shoe_id))
    forged = pb.RevealedCard(position=1, card=revealed.order[2])
    other_seed = DeterministicSeedSource(1).server_seed().hex()
    common = {"algorithm": revealed.algorithm, "decks": 1, "commitment": created.commitment}
    wrong_card = table.Verify(pb.VerifyRequest(server_seed=revealed.server_seed, dealt=[forged], **common))
    assert [p.reason for p in wrong_card.problems] == ["CARD_MISMATCH"]
    wrong_seed = table.Verify(pb.VerifyRequest(server_seed=other_seed, **common))
    assert "COMMITMENT_MISMATCH" in [p.reason for p in wrong_seed.problems]
    expect_error(
        lambda: table.Verify(pb.VerifyRequest(server_seed="zz", **common)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "HEX_MALFORMED",
    )


@pytest.mark.parametrize(("decks", "reason"), [(0, "DECKS_OUT_OF_RANGE"), (9, "DECKS_OUT_OF_RANGE")])
def test_bad_input_gets_invalid_argument_with_field_violation(
    dealer: RunningService, decks: int, reason: str
) -> None:
    table = stub(dealer)
    with pytest.raises(grpc.RpcError) as caught:
        table.CreateShoe(pb.CreateShoeRequest(decks=decks, request_id="r"))
    details = details_of(caught.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT and details.reason == reason
    assert [v.field for v in details.violations] == ["decks"]
    expect_error(
        lambda: table.CreateShoe(pb.CreateShoeRequest(decks=1)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_INVALID",
    )


def test_shoe_errors_carry_the_right_code_and_change_nothing(dealer: RunningService) -> None:
    table = stub(dealer)
    shoe_id = new_shoe(table).shoe_id
    table.Deal(pb.DealRequest(shoe_id=shoe_id, count=50, request_id="most"))
    before = table.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id)).shoe
    expect_error(
        lambda: table.Deal(pb.DealRequest(shoe_id=shoe_id, count=3, request_id="past-end")),
        grpc.StatusCode.OUT_OF_RANGE,
        "SHOE_EXHAUSTED",
    )
    expect_error(
        lambda: table.Deal(pb.DealRequest(shoe_id=shoe_id, count=0, request_id="zero")),
        grpc.StatusCode.INVALID_ARGUMENT,
        "COUNT_OUT_OF_RANGE",
    )
    expect_error(
        lambda: table.Reveal(pb.RevealRequest(shoe_id=shoe_id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_OPEN",
    )
    expect_error(
        lambda: table.Deal(pb.DealRequest(shoe_id="nope", count=1, request_id="x")),
        grpc.StatusCode.NOT_FOUND,
        "SHOE_NOT_FOUND",
    )
    assert table.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id)).shoe == before
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="close"))
    expect_error(
        lambda: table.Deal(pb.DealRequest(shoe_id=shoe_id, count=1, request_id="late")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_CLOSED",
    )
    expect_error(
        lambda: table.Burn(pb.BurnRequest(shoe_id=shoe_id, count=1, request_id="late")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_CLOSED",
    )


def test_request_ids_make_mutations_idempotent(dealer: RunningService) -> None:
    table = stub(dealer)
    first = new_shoe(table, request_id="hand-9", deck_set="B")
    assert new_shoe(table, request_id="hand-9", deck_set="B") == first
    expect_error(
        lambda: new_shoe(table, request_id="hand-9", deck_set="A"),
        grpc.StatusCode.ALREADY_EXISTS,
        "REQUEST_ID_REUSED",
    )
    deal = pb.DealRequest(shoe_id=first.shoe_id, count=2, request_id="hole-1")
    assert table.Deal(deal).cards == table.Deal(deal).cards  # a retry is not a second deal
    assert table.GetShoe(pb.GetShoeRequest(shoe_id=first.shoe_id)).shoe.next_position == 2
    # another caller's request id space is separate
    assert stub(dealer, "table-2").CreateShoe(pb.CreateShoeRequest(decks=1, request_id="hand-9")).shoe_id != (
        first.shoe_id
    )


def test_peek_is_for_trusted_internal_callers_only(dealer: RunningService) -> None:
    """NK-10.2/NK-10.4: the peek shows the card that would be dealt, without moving it, and only the
    table service (which shows it to one player) or an operator may ask for it."""
    table = stub(dealer)
    shoe_id = new_shoe(table).shoe_id
    peeked = table.Peek(pb.PeekRequest(shoe_id=shoe_id, offset=1))
    assert peeked.position == 1
    assert table.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id)).shoe.next_position == 0  # nothing dealt
    dealt = table.Deal(pb.DealRequest(shoe_id=shoe_id, count=2, request_id="d")).cards
    assert dealt[1].card == peeked.card
    for subject, role, reason in (
        ("alice", Role.PLAYER, "ROLE_NOT_ALLOWED"),
        ("other-table", Role.SERVICE, "NOT_SHOE_OWNER"),
    ):
        expect_error(
            lambda subject=subject, role=role: stub(dealer, subject, role).Peek(
                pb.PeekRequest(shoe_id=shoe_id)
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            reason,
        )
    assert stub(dealer, "ops", Role.OPERATOR).Peek(pb.PeekRequest(shoe_id=shoe_id)).position == 2


def test_only_the_creator_or_an_operator_deals_closes_and_reveals(dealer: RunningService) -> None:
    table = stub(dealer)
    shoe_id = new_shoe(table).shoe_id
    intruders = [
        stub(dealer, "alice", Role.PLAYER),
        stub(dealer, "other-table"),
        stub(dealer, "table", Role.PLAYER),
    ]
    for intruder in intruders:
        expect_error(
            lambda intruder=intruder: intruder.Deal(
                pb.DealRequest(shoe_id=shoe_id, count=1, request_id="steal")
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_SHOE_OWNER",
        )
        expect_error(
            lambda intruder=intruder: intruder.CloseShoe(
                pb.CloseShoeRequest(shoe_id=shoe_id, request_id="c")
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_SHOE_OWNER",
        )
    operator = stub(dealer, "ops", Role.OPERATOR)
    assert len(operator.Deal(pb.DealRequest(shoe_id=shoe_id, count=1, request_id="op")).cards) == 1
    operator.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="c"))
    expect_error(
        lambda: intruders[0].Reveal(pb.RevealRequest(shoe_id=shoe_id)),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_SHOE_OWNER",
    )
    assert operator.Reveal(pb.RevealRequest(shoe_id=shoe_id)).server_seed
    # GetShoe needs only a valid token
    assert intruders[0].GetShoe(pb.GetShoeRequest(shoe_id=shoe_id)).shoe.state == pb.SHOE_STATE_CLOSED


def test_public_reveal_policy_lets_anyone_audit(dealer: RunningService) -> None:
    table = stub(dealer)
    shoe_id = new_shoe(table, reveal_policy=pb.REVEAL_POLICY_PUBLIC).shoe_id
    player = stub(dealer, "alice", Role.PLAYER)
    expect_error(
        lambda: player.Reveal(pb.RevealRequest(shoe_id=shoe_id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_OPEN",
    )
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="c"))
    assert len(player.Reveal(pb.RevealRequest(shoe_id=shoe_id)).order) == 52


def test_calls_without_a_token_are_refused(dealer: RunningService) -> None:
    anonymous = stub(dealer, None)
    expect_error(
        lambda: anonymous.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="r")),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )


def test_idle_shoes_expire(dealer: RunningService, clock: FakeClock) -> None:
    table = stub(dealer)
    shoe_id = new_shoe(table).shoe_id
    clock.now += 301
    expect_error(
        lambda: table.Deal(pb.DealRequest(shoe_id=shoe_id, count=1, request_id="d")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_EXPIRED",
    )
    assert table.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id)).shoe.state == pb.SHOE_STATE_EXPIRED
    assert table.Reveal(pb.RevealRequest(shoe_id=shoe_id)).server_seed


def _metrics(svc: RunningService) -> str:
    with urllib.request.urlopen(svc.metrics_url, timeout=5) as response:
        return response.read().decode()


def _health(svc: RunningService) -> int:
    with testing.channel(svc.address) as channel:
        request = health_pb2.HealthCheckRequest(service="poker.dealer.v1.DealerService")
        return int(health_pb2_grpc.HealthStub(channel).Check(request, timeout=5).status)


def test_a_working_dealer_is_serving(dealer: RunningService) -> None:
    assert _health(dealer) == health_pb2.HealthCheckResponse.SERVING


def test_entropy_failure_makes_the_dealer_refuse(tmp_path: Path) -> None:
    def broken(size: int) -> bytes:
        raise OSError("getrandom: no entropy")

    config = config_for_tests("dealer", tmp_path, seed_source=SystemSeedSource(read=broken))
    with running(service_spec, config) as svc:
        table = stub(svc)
        assert _health(svc) == health_pb2.HealthCheckResponse.NOT_SERVING  # the start-up self-test failed
        expect_error(lambda: new_shoe(table), grpc.StatusCode.UNAVAILABLE, "ENTROPY_UNAVAILABLE")
        assert re.search(r"^poker_dealer_entropy_failures_total [1-9]", _metrics(svc), re.M)
        # and nothing was created: a retry with the same request id still fails the same way
        expect_error(lambda: new_shoe(table), grpc.StatusCode.UNAVAILABLE, "ENTROPY_UNAVAILABLE")


def test_secrets_never_reach_logs_metrics_or_early_responses(
    dealer: RunningService, capfd: pytest.CaptureFixture[str]
) -> None:
    table = stub(dealer)
    created = new_shoe(table)
    shoe_id = created.shoe_id
    seed = expected_seed()
    order = [CARD_TEXTS[c] for c in shoe_order(seed, "", 0, 1)]
    dealt = table.Deal(pb.DealRequest(shoe_id=shoe_id, count=2, request_id="d")).cards
    table.Peek(pb.PeekRequest(shoe_id=shoe_id, offset=0))
    for call in (
        lambda: table.Deal(pb.DealRequest(shoe_id=shoe_id, count=60, request_id="x")),
        lambda: table.Reveal(pb.RevealRequest(shoe_id=shoe_id)),
        lambda: table.Peek(pb.PeekRequest(shoe_id=shoe_id, offset=99)),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            call()
        error_text = f"{caught.value.details()} {details_of(caught.value)}"  # type: ignore[attr-defined]
        assert seed.hex() not in error_text
        assert not set(re.findall(r"\b[2-9TJQKA][cdhs]\b", error_text))
    early = [created, table.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id))]
    for message in early:
        text = json_format.MessageToJson(message)
        assert seed.hex() not in text
        assert not set(re.findall(r'"[2-9TJQKA][cdhs]"', text))  # no card at all before Deal
    captured = capfd.readouterr()
    logged = captured.out + captured.err
    assert '"rpc": "Deal"' in logged  # the log is really captured
    scraped = _metrics(dealer)
    secrets = [seed.hex(), *(c.salt for c in dealt)]
    for text in (logged, scraped):
        for secret in secrets:
            assert secret not in text
        tokens = set(re.findall(r"\b[2-9TJQKA][cdhs]\b", text))
        assert not tokens & set(order), "a card appears in logs or metrics"


def test_dealer_runs_as_a_process_and_drains_on_sigterm(tmp_path: Path) -> None:
    port, internal, metrics_port = free_port(), free_port(), free_port()
    env = {**os.environ, "FELT_DATA_DIR": str(tmp_path)}
    argv = ["--port", str(port), "--internal-port", str(internal), "--metrics-port", str(metrics_port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "services.dealer", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        channel = None
        deadline = time.monotonic() + 20
        keys = None
        while time.monotonic() < deadline:
            if (tmp_path / auth.DEV_KEYSET_FILE).exists():
                keys = auth.load_keys(tmp_path)
                # The internal port, with the certificate of the token's subject (the table).
                channel = testing.channel(f"127.0.0.1:{internal}", name="table")
                try:
                    grpc.channel_ready_future(channel).result(timeout=1)
                    break
                except grpc.FutureTimeoutError:
                    channel.close()
            time.sleep(0.1)
        assert channel is not None and keys is not None, "dealer did not start"
        token = auth.issue_token(keys, "table", Role.SERVICE)
        table = pb_grpc.DealerServiceStub(channel)
        created = table.CreateShoe(
            pb.CreateShoeRequest(decks=6, request_id="r"), metadata=auth.bearer_metadata(token), timeout=5
        )
        assert created.shoe.size == 312
        channel.close()
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=20)[0].decode()
    assert process.returncode == 0, output
    assert '"event": "stopped"' in output


def test_standalone_verifier_checks_a_revealed_shoe_from_its_json(
    dealer: RunningService, tmp_path: Path
) -> None:
    """A third party copies verifier.py alone and runs it without Felt (python -I -S: no site-packages)."""
    table = stub(dealer)
    shoe_id = new_shoe(table, client_seed="third-party").shoe_id
    table.Deal(pb.DealRequest(shoe_id=shoe_id, count=5, request_id="d"))
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="c"))
    revealed = table.Reveal(pb.RevealRequest(shoe_id=shoe_id))
    copy = tmp_path / "copied" / "verifier.py"
    copy.parent.mkdir()
    shutil.copy(ROOT / "libs" / "dealing" / "verifier.py", copy)
    good = tmp_path / "shoe.json"
    good.write_text(json_format.MessageToJson(revealed))  # lowerCamelCase keys, as grpcurl prints
    run = subprocess.run([sys.executable, "-I", "-S", str(copy), str(good)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK" in run.stdout
    document = json.loads(good.read_text())
    document["dealt"][2]["card"] = document["order"][10]
    bad = tmp_path / "forged.json"
    bad.write_text(json.dumps(document))
    run = subprocess.run([sys.executable, "-I", "-S", str(copy), str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and "CARD_MISMATCH position 2" in run.stdout


def test_shoes_held_gauge_follows_creates_and_closes(dealer: RunningService) -> None:
    table = stub(dealer)
    first = new_shoe(table, request_id="a").shoe_id
    new_shoe(table, request_id="b")
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=first, request_id="c"))
    scraped = _metrics(dealer)
    assert re.search(r'^poker_dealer_shoes\{state="open"\} 1\.0$', scraped, re.M)
    assert re.search(r'^poker_dealer_shoes\{state="closed"\} 1\.0$', scraped, re.M)
    assert re.search(r'^poker_dealer_shoes\{state="expired"\} 0\.0$', scraped, re.M)
