"""DealerService.DealHand and v2 shoes over real gRPC (docs/fairness.md section 10): a shoe committed by
CreateShoe(await_client_seeds) deals nothing until DealHand gives its client seeds; DealHand deals, draws,
closes, commits the next shoe and reveals the previous one in one call; Reveal and Verify carry the seeds;
only the owner deals and reveals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from dealing import DeterministicSeedSource, verifier
from google.protobuf import json_format
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.clients.dealer import DealerClient
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec


@pytest.fixture(scope="module")
def dealer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    config = config_for_tests(
        "dealer", tmp_path_factory.mktemp("dealer"), seed_source=DeterministicSeedSource(9)
    )
    with running(service_spec, config) as svc:
        yield svc


def stub(svc: RunningService, subject: str = "table", role: Role = Role.SERVICE) -> pb_grpc.DealerServiceStub:
    return pb_grpc.DealerServiceStub(svc.channel(subject, role))  # type: ignore[no-untyped-call]


def refused(call: object, code: grpc.StatusCode, reason: str) -> list[str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    details = details_of(caught.value)
    assert (details.code, details.reason) == (code, reason)
    return [v.field for v in details.violations]


SEEDS = [("seat-1", "ana's seed"), ("seat-2", "table:7d3f")]


def test_a_hand_costs_one_call_and_verifies_from_what_it_returns(dealer: RunningService) -> None:
    client = DealerClient(dealer.channel("table", Role.SERVICE))
    first = client.commit_shoe("t1-h1-commit", nonce=1)
    assert first.algorithm == verifier.ALGORITHM_V2 and first.shoe.awaiting_client_seeds
    assert not first.card_commitments  # nothing to commit per card before the order exists
    refused(
        lambda: client.deal(first.shoe_id, 2, "early"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_AWAITING_SEEDS",
    )
    next_request = pb.CreateShoeRequest(request_id="t1-h2-commit", decks=1, nonce=2, await_client_seeds=True)
    hand1 = client.deal_hand(first.shoe_id, SEEDS, 9, "t1-h1-deal", (("carrusel", 3),), next_request)
    assert [c.position for c in hand1.cards] == list(range(9))
    assert hand1.shoe.state == pb.SHOE_STATE_CLOSED and not hand1.shoe.awaiting_client_seeds
    assert [(s.contributor, s.seed) for s in hand1.shoe.client_seeds] == SEEDS
    assert hand1.next.shoe.awaiting_client_seeds and hand1.next.commitment
    assert not hand1.HasField("revealed")
    # The next hand, in one call: its deal, the hand after it committed, the first hand revealed.
    third = pb.CreateShoeRequest(request_id="t1-h3-commit", decks=1, nonce=3, await_client_seeds=True)
    hand2 = client.deal_hand(hand1.next.shoe_id, SEEDS[:1], 5, "t1-h2-deal", (), third, first.shoe_id)
    revealed = hand2.revealed
    assert revealed.shoe_id == first.shoe_id and revealed.client_seeds == hand1.shoe.client_seeds
    assert revealed.order[:9] == [c.card for c in hand1.cards]
    document = json_format.MessageToDict(revealed, preserving_proto_field_name=True)
    assert verifier.verify_document(document).valid
    # A retry of the whole call gives the same answer and creates nothing more.
    again = client.deal_hand(hand1.next.shoe_id, SEEDS[:1], 5, "t1-h2-deal", (), third, first.shoe_id)
    assert again.cards == hand2.cards and again.next.shoe_id == hand2.next.shoe_id
    # The Verify RPC takes the client seeds too, and a forged seed list fails.
    verify = pb.VerifyRequest(
        algorithm=revealed.algorithm,
        decks=1,
        server_seed=revealed.server_seed,
        nonce=revealed.nonce,
        commitment=revealed.commitment,
        dealt=revealed.dealt,
        card_commitments=revealed.card_commitments,
        client_seeds=revealed.client_seeds,
    )
    assert stub(dealer).Verify(verify).valid
    del verify.client_seeds[-1]
    assert not stub(dealer).Verify(verify).valid


def test_deal_hand_refusals_change_nothing(dealer: RunningService) -> None:
    table = stub(dealer)
    made = table.CreateShoe(pb.CreateShoeRequest(request_id="r-commit", decks=1, await_client_seeds=True))
    shoe_id = made.shoe_id

    def deal(**fields: object) -> object:
        base: dict[str, Any] = {"shoe_id": shoe_id, "count": 4, "request_id": "r-deal"}
        return table.DealHand(pb.DealHandRequest(**{**base, **fields}))

    fields = refused(
        lambda: deal(client_seeds=[pb.ClientSeed(contributor="seat-1", seed="a\x00b")]),
        grpc.StatusCode.INVALID_ARGUMENT,
        "CLIENT_SEED_INVALID",
    )
    assert fields == ["client_seeds[0].seed"]
    refused(lambda: deal(count=53), grpc.StatusCode.INVALID_ARGUMENT, "COUNT_OUT_OF_RANGE")
    refused(
        lambda: deal(next=pb.CreateShoeRequest(request_id="n", decks=1)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "NEXT_NOT_AWAITING",
    )
    refused(
        lambda: deal(
            next=pb.CreateShoeRequest(
                request_id="n", decks=1, await_client_seeds=True, reveal_policy=pb.REVEAL_POLICY_PUBLIC
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REVEAL_POLICY_NOT_ALLOWED",
    )
    player = stub(dealer, "mallory", Role.PLAYER)
    refused(
        lambda: player.DealHand(pb.DealHandRequest(shoe_id=shoe_id, count=2, request_id="steal")),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_SHOE_OWNER",
    )
    open_one = table.CreateShoe(pb.CreateShoeRequest(request_id="r-open", decks=1))
    refused(lambda: deal(reveal_shoe_id=open_one.shoe_id), grpc.StatusCode.FAILED_PRECONDITION, "SHOE_OPEN")
    refused(
        lambda: table.Reveal(pb.RevealRequest(shoe_id=shoe_id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_OPEN",
    )
    assert table.GetShoe(pb.GetShoeRequest(shoe_id=shoe_id)).shoe.awaiting_client_seeds  # untouched
    done = deal(reveal_shoe_id="no-such-shoe")
    assert not done.HasField("revealed")  # type: ignore[attr-defined]
    refused(lambda: deal(count=5), grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED")
    refused(lambda: deal(request_id="r-deal-again"), grpc.StatusCode.FAILED_PRECONDITION, "SHOE_CLOSED")
    v1 = table.CreateShoe(pb.CreateShoeRequest(request_id="r-v1", decks=1))
    refused(
        lambda: table.DealHand(pb.DealHandRequest(shoe_id=v1.shoe_id, count=2, request_id="v1")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_NOT_AWAITING_SEEDS",
    )
    refused(
        lambda: table.CreateShoe(
            pb.CreateShoeRequest(
                request_id="r-public", decks=1, await_client_seeds=True, reveal_policy=pb.REVEAL_POLICY_PUBLIC
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REVEAL_POLICY_NOT_ALLOWED",
    )


def test_the_stand_alone_verifier_checks_a_v2_reveal_copied_alone(
    dealer: RunningService, tmp_path: Path
) -> None:
    import shutil
    import subprocess
    import sys

    client = DealerClient(dealer.channel("table", Role.SERVICE))
    made = client.commit_shoe("copy-commit")
    client.deal_hand(
        made.shoe_id, [("seat-1", "x"), ("seat-2", "y")], 52, "copy-deal", (("spin", 1_000_000),)
    )
    revealed = client.reveal(made.shoe_id)
    copy = tmp_path / "verifier.py"
    shutil.copy(Path(verifier.__file__), copy)
    good = tmp_path / "good.json"
    good.write_text(json_format.MessageToJson(revealed), encoding="utf-8")  # lowerCamelCase keys
    ran = subprocess.run([sys.executable, "-I", "-S", str(copy), str(good)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    revealed.client_seeds[0].seed = "z"  # another seed: another order, and the client seed no longer mixes
    bad = tmp_path / "bad.json"
    bad.write_text(json_format.MessageToJson(revealed), encoding="utf-8")
    ran = subprocess.run([sys.executable, "-I", "-S", str(copy), str(bad)], capture_output=True, text=True)
    assert ran.returncode == 1 and "CLIENT_SEED_MISMATCH" in ran.stdout and "CARD_MISMATCH" in ran.stdout


def test_an_auditor_gets_a_dealt_hands_seed_only_after_its_owner_says_the_hand_is_over(
    dealer: RunningService,
) -> None:
    """DealHand closes the shoe at the deal (a hand takes its cards at once) while the hand is played: the
    seed stays the owner's (the table, which holds the hand's cards anyway) until it reveals the shoe."""
    client = DealerClient(dealer.channel("table", Role.SERVICE))
    auditor = stub(dealer, "auditor", Role.OPERATOR)
    made = client.commit_shoe("audit-commit")
    client.deal_hand(made.shoe_id, SEEDS, 9, "audit-deal")
    refused(
        lambda: auditor.Reveal(pb.RevealRequest(shoe_id=made.shoe_id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_OPEN",
    )
    following = client.commit_shoe("audit-commit-2", nonce=2)
    client.deal_hand(following.shoe_id, SEEDS, 9, "audit-deal-2", reveal_shoe_id=made.shoe_id)  # hand 1 over
    assert auditor.Reveal(pb.RevealRequest(shoe_id=made.shoe_id)).server_seed
    refused(
        lambda: auditor.Reveal(pb.RevealRequest(shoe_id=following.shoe_id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_OPEN",
    )
    client.close(following.shoe_id, "audit-close")  # the owner ends it explicitly
    assert auditor.Reveal(pb.RevealRequest(shoe_id=following.shoe_id)).server_seed
