"""Deals nobody can choose at a casino table (issue 23, docs/fairness.md section 11), with the real dealer and
wallet over real gRPC: the round's shoe is committed before the round's bets and seeds (RoundView.commitment,
CasinoShoeCommitted), the player's seed from PlaceBets goes into the shuffle, their cards come with their
openings, and once the round is paid GetRoundProof gives what `felt verify` checks. Each round after the
first costs the dealer DealHand and Reveal."""

from __future__ import annotations

import copy

import grpc
import pytest
from dealing import verifier
from felt import verification
from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import TABLES, Stack, bets, rid, rpc_reason
from tests.table.poker.test_fairness import dealer_calls


def play_round(stack: Stack, player: str, table: str, seed: str | None) -> pb.RoundView:
    """Ante, deal, call: one Casino Hold'em round to its settlement."""
    casino = stack.casino(player)
    request = pb.PlaceBetsRequest(request_id=rid(), table_id=table, seat=1, bets=bets(ante=10))
    if seed is not None:
        request.client_seed = seed
    casino.PlaceBets(request)
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id=table))
    return casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id=table, seat=1, decision=pb.CASINO_DECISION_CALL)
    ).round


def round_proof(stack: Stack, player: str, table: str, number: int) -> pb.GetRoundProofResponse:
    return stack.casino(player).GetRoundProof(pb.GetRoundProofRequest(table_id=table, round=number))


def test_a_round_is_shuffled_with_the_players_seed_and_verifies(stack: Stack) -> None:
    stack.fund("alice", 1_000)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    before = stack.round("alice", "ch-touch")
    assert len(before.commitment) == 64  # committed before any bet or seed of the round
    final = play_round(stack, "alice", "ch-touch", "alice's seed")
    assert final.phase == "SETTLED"
    number = final.round
    events = [
        e for e in casino.GetGameHistory(pb.GetGameHistoryRequest(table_id="ch-touch")).rounds[0].events
    ]
    started = next(e.round_started for e in events if e.HasField("round_started"))
    assert started.commitment == before.commitment and started.algorithm == verifier.ALGORITHM_V2
    mine = [s for s in started.client_seeds if s.player_id == "alice"]
    assert [(s.seed, s.from_player) for s in mine] == [("alice's seed", True)]
    assert started.committed_ms <= mine[0].given_ms
    hole = next(e.hole_cards for e in events if e.HasField("hole_cards"))
    for o in hole.openings:
        assert verifier.verify_opening(
            o.position, o.card, bytes.fromhex(o.salt), started.card_commitments[o.position]
        )
    assert any(e.HasField("shoe_revealed") and e.shoe_revealed.round == number for e in events)
    response = round_proof(stack, "alice", "ch-touch", number)
    document = verification.round_document(response)
    outcome = verification.verify_document(document, my_seed="alice's seed")
    assert outcome.ok, outcome.problems
    uses = {c.use for c in response.proof.cards}
    assert {"hole seat 1", "dealer", "flop"} <= uses
    forged = copy.deepcopy(document)
    forged["cards"][-1]["card"] = "As" if forged["cards"][-1]["card"] != "As" else "Kd"
    assert not verification.verify_document(forged).ok
    # The next round's shoe was committed by this round's deal, before its seeds: one DealHand and one Reveal.
    # Every table's clock commits its first round's shoe on a tick (CreateShoe): wait for all of them.
    tables = [t.split(":")[0] for t in TABLES.split(",")]
    stack.wait_for(lambda: all(stack.round("alice", t).commitment for t in tables), timeout=30)
    calls = dealer_calls()
    nxt = play_round(stack, "alice", "ch-touch", None)  # no seed: the table's own for alice
    spent = {
        m: dealer_calls().get(m, 0) - calls.get(m, 0) for m in ("CreateShoe", "DealHand", "Reveal", "Deal")
    }
    assert spent == {"CreateShoe": 0, "DealHand": 1, "Reveal": 1, "Deal": 0}
    second = round_proof(stack, "alice", "ch-touch", nxt.round)
    assert [s.from_player for s in second.proof.client_seeds] == [False]
    assert verification.verify_document(verification.round_document(second)).ok


def test_round_proofs_are_for_the_rounds_players(stack: Stack) -> None:
    stack.fund("alice", 1_000)
    stack.fund("mallory", 1_000)
    stack.casino("alice").JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    final = play_round(stack, "alice", "ch-touch", "s")
    with pytest.raises(grpc.RpcError) as stranger:
        round_proof(stack, "mallory", "ch-touch", final.round)
    assert rpc_reason(stranger.value) == "NOT_IN_ROUND"
    with pytest.raises(grpc.RpcError) as unknown:
        round_proof(stack, "alice", "ch-touch", final.round + 5)
    assert rpc_reason(unknown.value) == "ROUND_NOT_FOUND"
    with pytest.raises(grpc.RpcError) as missing:
        round_proof(stack, "alice", "ch-touch", 0)
    assert rpc_reason(missing.value) == "ROUND_REQUIRED"
    with pytest.raises(grpc.RpcError) as bad:
        stack.casino("alice").PlaceBets(
            pb.PlaceBetsRequest(
                request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10), client_seed="a\nb"
            )
        )
    assert rpc_reason(bad.value) == "CLIENT_SEED_INVALID"
    assert stack.round("alice", "ch-touch").round == final.round  # the refused call opened nothing
    assert stack.account("alice").pending == 0  # and held nothing
