"""Deals nobody can choose at a poker table (issue 23, docs/fairness.md section 11), over real gRPC with the
real dealer and wallet: each hand's shoe is committed (ShoeCommitted) before its seeds are collected, every
seated player's seed (their own, or the table's) goes into the shuffle, the players get their own openings
privately at the deal and the server seed once the hand is over, and GetHandProof gives each participant
what `felt verify` needs. A hand costs the dealer one call (DealHand)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import grpc
import prometheus_client
import pytest
from dealing import verifier
from felt import verification
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer import Action
from pokerrules.table import Mode, TableConfig, TableState, handle, sit
from pokerrules.table import commands as c
from pokerrules.table.fairness import Contribution
from servicekit.auth import Role
from servicekit.testing import config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.poker.convert import event_protos
from services.table.poker.snapshot import from_snapshot, to_snapshot
from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, Watcher, reason, rid, table_config, to_act, wait_until

PAUSE_MS = 2_000  # between hands: the seeds' window of a freshly committed shoe
DEALER = "poker.dealer.v1.DealerService"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One table service whose only tables are the tests' own (nothing else calls the dealer)."""
    data_dir: Path = tmp_path_factory.mktemp("fair")
    with (
        running(dealer_spec, config_for_tests("dealer", data_dir)) as dealer,
        running(wallet_spec, config_for_tests("wallet", data_dir)) as wallet,
    ):
        clock = MsClock()
        tables = parse_tables("fair:NLHE:50/100:2000-10000:6,calls:NLHE:50/100:2000-10000:6")
        config = table_config(
            data_dir, dealer, wallet, poker_clock=clock, poker_tables=tables, hand_pause_ms=PAUSE_MS
        )
        with running(table_spec, config) as table:
            yield Stack(data_dir, dealer, wallet, table, clock)


def events_of(watcher: Watcher, kind: str) -> list[pb.TableEvent]:
    return [e for e in list(watcher.events) if e.WhichOneof("event") == kind]


def seed(stack: Stack, player: str, table_id: str, hand: int, value: str) -> pb.SubmitClientSeedResponse:
    return stack.tables(player).SubmitClientSeed(
        pb.SubmitClientSeedRequest(
            request_id=rid("seed"), table_id=table_id, hand_number=hand, client_seed=value
        )
    )


def proof(
    stack: Stack, player: str, table_id: str, hand: int, role: Role = Role.PLAYER
) -> pb.GetHandProofResponse:
    return stack.tables(player, role).GetHandProof(
        pb.GetHandProofRequest(table_id=table_id, hand_number=hand)
    )


def deal_next(stack: Stack, table: str, player: str, hand: int) -> None:
    """Move the table's clock on until hand `hand` is dealt (the pause between hands runs from when the
    clock thread saw the last one end, which the test cannot see: it moves the clock until then)."""

    def dealt() -> bool:
        if stack.view(player, table).hand_number >= hand:
            return True
        stack.clock.advance(PAUSE_MS // 4)
        return False

    wait_until(dealt)


def dealer_calls() -> dict[str, float]:
    """Every DealerService call handled in this process so far, by method."""
    counts: dict[str, float] = {}
    for metric in prometheus_client.REGISTRY.collect():
        for sample in metric.samples:
            if sample.name == "grpc_server_handled_total" and sample.labels.get("grpc_service") == DEALER:
                method = sample.labels["grpc_method"]
                counts[method] = counts.get(method, 0) + sample.value
    return counts


def test_each_players_seed_goes_into_the_hand_and_each_player_verifies_it(stack: Stack) -> None:
    """The commitment first, then the seeds, then the deal; each player's openings privately; the proof."""
    table = "fair"
    watchers = {name: Watcher(stack.tables(name), table) for name in ("ana", "bob", "eve")}
    try:
        for player, number in (("ana", 1), ("bob", 2)):
            stack.fund(player, 20_000)
            stack.join(player, table, seat=number)
        committed = wait_until(lambda: events_of(watchers["ana"], "shoe_committed"))[0]
        assert committed.shoe_committed.hand_number == 1
        assert committed.shoe_committed.algorithm == verifier.ALGORITHM_V2
        assert not stack.view("ana", table).hand_in_play  # the seeds' window: the hand waits the pause
        answer = seed(stack, "ana", table, 1, "ana's seed for hand 1")
        assert answer.commitment == committed.shoe_committed.commitment
        stack.clock.advance(PAUSE_MS)
        wait_until(lambda: stack.view("ana", table).hand_in_play)
        started = wait_until(lambda: events_of(watchers["ana"], "hand_started"))[0].hand_started
        assert started.commitment == committed.shoe_committed.commitment
        assert started.shoe_id == committed.shoe_committed.shoe_id
        seeds = {(s.seat, s.player_id): s for s in started.client_seeds}
        assert seeds[(1, "ana")].seed == "ana's seed for hand 1" and seeds[(1, "ana")].from_player
        assert not seeds[(2, "bob")].from_player and len(seeds[(2, "bob")].seed) == 32  # the table's own
        assert started.committed_ms <= seeds[(1, "ana")].given_ms
        assert len(started.card_commitments) == 6 * 2 + 8  # a full table's cards: dealt before anyone sits
        # Each player's own openings, privately; they open the commitments published in HandStarted.
        for name, number in (("ana", 1), ("bob", 2)):
            dealt = wait_until(lambda n=name: events_of(watchers[n], "hole_cards_dealt"))
            assert [d.hole_cards_dealt.seat for d in dealt] == [number]
            openings = dealt[0].hole_cards_dealt.openings
            assert [o.card for o in openings] == list(dealt[0].hole_cards_dealt.cards)
            for o in openings:
                salt = bytes.fromhex(o.salt)
                assert verifier.verify_opening(o.position, o.card, salt, started.card_commitments[o.position])
        # The next hand's commitment is out during this hand, before its seeds: bob gives his now.
        following = wait_until(lambda: events_of(watchers["bob"], "shoe_committed")[1:])[0].shoe_committed
        assert following.hand_number == 2 and following.commitment != committed.shoe_committed.commitment
        seed(stack, "bob", table, 2, "bob's seed for hand 2")
        stack.act(to_act(stack, table), table, pb.ACTION_KIND_FOLD)
        wait_until(lambda: not stack.view("ana", table).hand_in_play)
        with pytest.raises(grpc.RpcError) as early:  # over, but its seed comes with the next deal
            proof(stack, "ana", table, 1)
        assert (early.value.code(), reason(early.value)) == (grpc.StatusCode.UNAVAILABLE, "PROOF_NOT_READY")
        deal_next(stack, table, "ana", 2)
        for name in ("ana", "bob"):  # the seed, to each player of hand 1, privately
            revealed = wait_until(lambda n=name: events_of(watchers[n], "shoe_revealed"))
            assert revealed[0].hand_number == 1 and revealed[0].shoe_revealed.hand_number == 1
        second = wait_until(lambda: events_of(watchers["ana"], "hand_started")[1:])[0].hand_started
        assert any(s.seed == "bob's seed for hand 2" and s.from_player for s in second.client_seeds)
        for kind in ("hole_cards_dealt", "client_seed_given", "shoe_revealed"):
            assert not events_of(watchers["eve"], kind), kind  # an observer: none of anyone's secrets
        assert not any(e.client_seed_given.seat != 2 for e in events_of(watchers["bob"], "client_seed_given"))
    finally:
        for watcher in watchers.values():
            watcher.close()
    mine = proof(stack, "ana", table, 1)
    assert mine.your_seat == 1
    document = verification.hand_document(mine)
    outcome = verification.verify_document(document, my_seed="ana's seed for hand 1")
    assert outcome.ok, outcome.problems
    ana_positions = {o.position for o in mine.proof.openings}
    theirs = proof(stack, "bob", table, 1)
    assert {o.position for o in theirs.proof.openings}.isdisjoint(ana_positions)  # only one's own
    assert verification.verify_document(verification.hand_document(theirs)).ok
    audit = proof(stack, "ops", table, 1, Role.OPERATOR)
    assert audit.your_seat == 0 and not audit.proof.openings
    stack.fund("eve", 1)
    with pytest.raises(grpc.RpcError) as stranger:
        proof(stack, "eve", table, 1)
    assert reason(stranger.value) == "NOT_IN_HAND"
    # A proof that lies anywhere fails: another seed, another card, another server seed.
    for change in ("seed", "card", "server_seed", "opening"):
        forged = copy.deepcopy(document)
        if change == "seed":
            forged["client_seeds"][0]["seed"] = "someone else's"
        elif change == "card":
            forged["cards"][0]["card"] = "As" if forged["cards"][0]["card"] != "As" else "Kd"
        elif change == "server_seed":
            forged["server_seed"] = "00" * 32
        else:
            forged["openings"][0]["salt"] = "00" * 16
        assert not verification.verify_document(forged).ok, change


def test_seeds_are_refused_outside_their_window(stack: Stack) -> None:
    table = "fair"
    open_hand = stack.view("ana", table).hand_number + 1
    with pytest.raises(grpc.RpcError) as wrong_hand:
        seed(stack, "ana", table, open_hand + 5, "too early")
    assert reason(wrong_hand.value) == "SEED_HAND_NOT_OPEN"
    stack.fund("zed", 1)
    with pytest.raises(grpc.RpcError) as stranger:
        seed(stack, "zed", table, open_hand, "not seated")
    assert reason(stranger.value) == "NOT_SEATED"
    bad_seeds = {"": "CLIENT_SEED_INVALID", "two\nlines": "CLIENT_SEED_INVALID", "nul\x00": "CLIENT_SEED_INVALID",
                 "é" * 200: "CLIENT_SEED_INVALID", "x" * 257: "FIELD_TOO_LONG"}  # fmt: skip
    for bad, why in bad_seeds.items():  # 400 bytes in 200 characters; 257 characters: the field's cap
        with pytest.raises(grpc.RpcError) as invalid:
            seed(stack, "ana", table, open_hand, bad)
        assert (invalid.value.code(), reason(invalid.value)) == (grpc.StatusCode.INVALID_ARGUMENT, why)
    with pytest.raises(grpc.RpcError) as no_hand:
        seed(stack, "ana", table, 0, "x")
    assert reason(no_hand.value) == "HAND_NUMBER_REQUIRED"
    with pytest.raises(grpc.RpcError) as unknown:
        proof(stack, "ana", table, 999)
    assert reason(unknown.value) == "HAND_NOT_FOUND"


def test_a_hand_costs_the_dealer_one_call_and_the_last_one_is_revealed_on_its_own(stack: Stack) -> None:
    """Steady state: one DealHand per hand (it seals the hand's shoe, commits the next one and reveals the
    last one); no CreateShoe, Deal, Draw or CloseShoe. When no hand follows, one Reveal for the last."""
    table = "calls"
    for player, number in (("cy", 1), ("dee", 2)):
        stack.fund(player, 20_000)
        stack.join(player, table, seat=number)
    deal_next(stack, table, "cy", 1)
    before = dealer_calls()
    hands = 4
    for _ in range(hands):
        number = stack.view("cy", table).hand_number
        stack.act(to_act(stack, table, ("cy", "dee")), table, pb.ACTION_KIND_FOLD)
        deal_next(stack, table, "cy", number + 1)
    after = dealer_calls()
    spent = {m: after.get(m, 0) - before.get(m, 0) for m in after if after.get(m, 0) != before.get(m, 0)}
    assert spent == {"DealHand": hands}, spent
    last = stack.view("cy", table).hand_number
    stack.act(to_act(stack, table, ("cy", "dee")), table, pb.ACTION_KIND_FOLD)
    stack.tables("dee").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id=table))
    wait_until(
        lambda: not stack.view("cy", table).hand_in_play and len(stack.view("cy", table).table.seats) == 1
    )
    with pytest.raises(grpc.RpcError) as early:
        proof(stack, "cy", table, last)
    assert reason(early.value) == "PROOF_NOT_READY"

    def revealed() -> pb.GetHandProofResponse | None:
        stack.clock.advance(500)  # no hand follows: revealed on its own after the pause and the grace
        return _proof_or_none(stack, "cy", table, last)

    done = wait_until(revealed)
    assert verification.verify_document(verification.hand_document(done)).ok
    assert dealer_calls().get("Reveal", 0) - after.get("Reveal", 0) == 1


def _proof_or_none(stack: Stack, player: str, table: str, hand: int) -> pb.GetHandProofResponse | None:
    try:
        return proof(stack, player, table, hand)
    except grpc.RpcError:
        return None


def test_a_lost_commitment_is_replaced_before_the_hand(stack: Stack) -> None:
    """The dealer no longer deals from the committed shoe (an operator closed it here; a restarted dealer
    forgets it): the table publishes a fresh commitment for the same hand, and deals from that one."""
    table = "fair"
    watcher = Watcher(stack.tables("ana"), table)
    try:
        hand = stack.view("ana", table).hand_number
        stack.act(to_act(stack, table), table, pb.ACTION_KIND_FOLD)
        wait_until(lambda: not stack.view("ana", table).hand_in_play)
        pending = wait_until(
            lambda: [
                e for e in events_of(watcher, "shoe_committed") if e.shoe_committed.hand_number == hand + 1
            ]
        )[-1].shoe_committed
        dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("auditor", Role.OPERATOR))  # type: ignore[no-untyped-call]
        dealer.CloseShoe(dpb.CloseShoeRequest(shoe_id=pending.shoe_id, request_id=rid("close")))

        def fresh() -> list[pb.TableEvent]:
            stack.clock.advance(PAUSE_MS // 4)
            found = [
                e for e in events_of(watcher, "shoe_committed") if e.shoe_committed.hand_number == hand + 1
            ]
            return found[1:]

        again = wait_until(fresh)[0].shoe_committed
        assert again.shoe_id != pending.shoe_id and again.commitment != pending.commitment
        seed(stack, "ana", table, hand + 1, "again, for the fresh shoe")
        deal_next(stack, table, "ana", hand + 1)
        started = wait_until(lambda: events_of(watcher, "hand_started"))[-1].hand_started
        assert started.shoe_id == again.shoe_id
        assert any(s.seed == "again, for the fresh shoe" for s in started.client_seeds)
    finally:
        watcher.close()


def test_a_revealed_seed_reaches_the_hands_players_and_survives_the_snapshot() -> None:
    """The service's privacy for ShoeRevealed is by name (a seat's next occupant gets nothing of the
    hand before), and the snapshot between hands keeps the commitment, its seeds and the hand to reveal."""
    config = TableConfig(Mode.HOLDEM, 50, 100, 2_000, 10_000, seats=6)
    state = TableState.create(config)
    for number, player in enumerate(("ana", "bob"), start=1):
        state = sit(state, player, number, 5_000).state
    state = handle(state, c.CommitShoe(1, "shoe-1", "c" * 64), 10).state
    state = handle(state, c.GiveSeed("ana", 1, "ana-1"), 20).state
    contributions = (
        Contribution(1, "ana", "ana-1", True, 20).as_tuple(),
        Contribution(2, "bob", "t", False).as_tuple(),
    )
    cards = list(range(20))
    state = handle(
        state, c.StartHand("shoe-1", 20, None, contributions, "shoe-2", "n" * 64), 30, deck=cards
    ).state
    while state.hand_in_progress:
        legal = state.hand.legal_actions()  # type: ignore[union-attr]
        state = handle(state, c.Act(state.seats[legal.seat].player, Action.fold()), 40).state  # type: ignore[union-attr]
    state = handle(state, c.Leave("bob"), 50).state
    state = sit(state, "zed", 2, 5_000).state  # bob's seat, someone else now
    state = handle(state, c.GiveSeed("ana", 2, "ana-2"), 60).state
    back = from_snapshot(config, to_snapshot(state))
    assert (back.commitment, back.unrevealed, back.dealt_shoe) == (
        state.commitment,
        state.unrevealed,
        "shoe-1",
    )
    revealed = handle(back, c.RecordReveal(1, "shoe-1", "ab" * 32), 70)
    protos = event_protos(revealed.events, revealed.state)
    assert sorted(private for _, private in protos) == ["ana", "bob"]  # never "zed"
