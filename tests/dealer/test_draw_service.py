"""DealerService.Draw contract tests: a real server on a real socket, real tokens, real status details.

The labelled draw (docs/fairness.md §9) is how a table draws a hand's Naiko Carrusel (label `carrusel`,
3 outcomes) and a tournament a Spin's multiplier: owner-only like Deal, request ids like Deal, listed by
Reveal and checked by Verify and the stand-alone verifier.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from dealing import DeterministicSeedSource, draw_value
from google.protobuf import json_format
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.clients.dealer import DealerClient
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec

ROOT = Path(__file__).resolve().parents[2]
MASTER = 2026


@pytest.fixture(scope="module")
def dealer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    config = config_for_tests(
        "dealer", tmp_path_factory.mktemp("dealer"), seed_source=DeterministicSeedSource(MASTER)
    )
    with running(service_spec, config) as svc:
        yield svc


def stub(svc: RunningService, subject: str = "table", role: Role = Role.SERVICE) -> pb_grpc.DealerServiceStub:
    return pb_grpc.DealerServiceStub(svc.channel(subject, role))


def expect_error(call: object, code: grpc.StatusCode, reason: str) -> list[str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    details = details_of(caught.value)  # type: ignore[arg-type]
    assert (details.code, details.reason, details.domain) == (code, reason, "dealer")
    return [v.field for v in details.violations]


def draw(
    table: pb_grpc.DealerServiceStub, shoe_id: str, label: str, outcomes: int, rid: str
) -> pb.DrawResponse:
    return table.Draw(pb.DrawRequest(shoe_id=shoe_id, label=label, outcomes=outcomes, request_id=rid))  # type: ignore[no-any-return]


def test_carrusel_draw_is_the_documented_function_of_the_committed_seed(dealer: RunningService) -> None:
    """The `carrusel` draw is draw_value of the seed the shoe committed to: after the hand Reveal lists it,
    the revealed seed recomputes it, and Verify accepts it (a forged value is caught)."""
    table = stub(dealer)
    created = table.CreateShoe(pb.CreateShoeRequest(decks=1, client_seed="t1", nonce=3, request_id="hand-1"))
    got = draw(table, created.shoe_id, "carrusel", 3, "hand-1-carrusel")
    assert got.algorithm == "felt-hmac-sha256-draw-v1"
    assert (got.draw.label, got.draw.outcomes) == ("carrusel", 3) and 0 <= got.draw.value < 3
    assert table.GetShoe(pb.GetShoeRequest(shoe_id=created.shoe_id)).shoe.next_position == 0  # no card used
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=created.shoe_id, request_id="close"))
    revealed = table.Reveal(pb.RevealRequest(shoe_id=created.shoe_id))
    assert list(revealed.draws) == [got.draw]
    seed = bytes.fromhex(revealed.server_seed)
    assert draw_value(seed, "t1", 3, "carrusel", 3) == got.draw.value
    request = pb.VerifyRequest(
        algorithm=revealed.algorithm,
        decks=revealed.decks,
        server_seed=revealed.server_seed,
        client_seed=revealed.client_seed,
        nonce=revealed.nonce,
        commitment=revealed.commitment,
        draws=revealed.draws,
    )
    assert table.Verify(request).valid
    request.draws[0].value = (got.draw.value + 1) % 3
    verdict = table.Verify(request)
    assert not verdict.valid and [p.reason for p in verdict.problems] == ["DRAW_MISMATCH"]


def test_only_the_creator_or_an_operator_draws(dealer: RunningService) -> None:
    table = stub(dealer)
    shoe_id = table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="owner-only")).shoe_id
    for intruder in (stub(dealer, "table-2"), stub(dealer, "table", Role.PLAYER)):
        expect_error(
            lambda s=intruder: draw(s, shoe_id, "carrusel", 3, "steal"),  # type: ignore[misc]
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_SHOE_OWNER",
        )
    value = draw(stub(dealer, "audit", Role.OPERATOR), shoe_id, "carrusel", 3, "op").draw.value
    assert draw(table, shoe_id, "carrusel", 3, "mine").draw.value == value  # one label, one value


def test_request_ids_and_labels_are_idempotent_and_conflicts_refused(dealer: RunningService) -> None:
    table = stub(dealer)
    shoe_id = table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="idem")).shoe_id
    first = draw(table, shoe_id, "carrusel", 3, "c1")
    assert draw(table, shoe_id, "carrusel", 3, "c1") == first
    expect_error(
        lambda: draw(table, shoe_id, "spin-multiplier", 10, "c1"),
        grpc.StatusCode.ALREADY_EXISTS,
        "REQUEST_ID_REUSED",
    )
    expect_error(
        lambda: draw(table, shoe_id, "carrusel", 4, "c2"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "DRAW_LABEL_USED",
    )
    # the retried client call gives the same draw too
    assert (
        DealerClient(dealer.channel("table", Role.SERVICE)).draw(shoe_id, "carrusel", 3, "c1") == first.draw
    )


@pytest.mark.parametrize(
    ("label", "outcomes", "field", "reason"),
    [
        ("", 3, "label", "LABEL_INVALID"),
        ("carrusel:2", 3, "label", "LABEL_INVALID"),
        ("x" * 65, 3, "label", "LABEL_INVALID"),
        ("carrusel", 0, "outcomes", "OUTCOMES_OUT_OF_RANGE"),
    ],
)
def test_bad_input_gets_invalid_argument_naming_the_field(
    dealer: RunningService, label: str, outcomes: int, field: str, reason: str
) -> None:
    table = stub(dealer)
    shoe_id = table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id=f"bad-{field}-{len(label)}")).shoe_id
    fields = expect_error(
        lambda: draw(table, shoe_id, label, outcomes, "r"), grpc.StatusCode.INVALID_ARGUMENT, reason
    )
    assert fields == [field]
    assert expect_error(
        lambda: draw(table, shoe_id, "carrusel", 3, ""),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_INVALID",
    ) == ["request_id"]
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="close"))
    assert list(table.Reveal(pb.RevealRequest(shoe_id=shoe_id)).draws) == []  # nothing was recorded


def test_shoe_states_refuse_new_draws(dealer: RunningService) -> None:
    table = stub(dealer)
    expect_error(
        lambda: draw(table, "no-such-shoe", "carrusel", 3, "r"), grpc.StatusCode.NOT_FOUND, "SHOE_NOT_FOUND"
    )
    shoe_id = table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id="closing")).shoe_id
    before = draw(table, shoe_id, "carrusel", 3, "before")
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="close"))
    assert draw(table, shoe_id, "carrusel", 3, "before") == before  # a retry is still answered
    expect_error(
        lambda: draw(table, shoe_id, "spin-multiplier", 5, "after"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SHOE_CLOSED",
    )


def _fresh(table: pb_grpc.DealerServiceStub, request_id: str) -> str:
    return table.CreateShoe(pb.CreateShoeRequest(decks=1, request_id=request_id)).shoe_id  # type: ignore[no-any-return]


def test_a_shoe_answers_at_most_sixteen_draw_requests(dealer: RunningService) -> None:
    table = stub(dealer)
    shoe_id = _fresh(table, "bounded")
    for k in range(16):
        draw(table, shoe_id, f"label-{k}", 2, f"r{k}")
    expect_error(
        lambda: draw(table, shoe_id, "label-16", 2, "r16"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOO_MANY_DRAWS",
    )


def test_standalone_verifier_checks_the_draws_of_a_revealed_shoe(
    dealer: RunningService, tmp_path: Path
) -> None:
    """A third party recomputes the Carrusel with the copied verifier.py alone (python -I -S)."""
    table = stub(dealer)
    shoe_id = _fresh(table, "third-party")
    draw(table, shoe_id, "carrusel", 3, "carrusel")
    table.CloseShoe(pb.CloseShoeRequest(shoe_id=shoe_id, request_id="c"))
    revealed = table.Reveal(pb.RevealRequest(shoe_id=shoe_id))
    copy = tmp_path / "verifier.py"
    shutil.copy(ROOT / "libs" / "dealing" / "verifier.py", copy)
    good = tmp_path / "shoe.json"
    good.write_text(json_format.MessageToJson(revealed))
    run = subprocess.run([sys.executable, "-I", "-S", str(copy), str(good)], capture_output=True, text=True)
    assert run.returncode == 0 and "1 draw(s)" in run.stdout, run.stdout + run.stderr
    revealed.draws[0].value = (revealed.draws[0].value + 1) % 3
    bad = tmp_path / "forged.json"
    bad.write_text(json_format.MessageToJson(revealed))
    run = subprocess.run([sys.executable, "-I", "-S", str(copy), str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and "DRAW_MISMATCH" in run.stdout
