"""Naiko persistence (issue 11): the table service is killed (SIGKILL) in the middle of a Naiko hand in which
powers were used, and started again from its log. The hand resumes with the same Destellos, Carrusel,
anchors and window (its deadline absolute, on the table's clock); or, when it cannot resume (resuming
switched off), it is voided with every chip and every Destello spent in it returned (DestellosReturned).
Chips are conserved throughout: the escrow equals the stacks plus the pot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.testing import RunningService

from tests.table.poker.conftest import MsClock, Stack, chips_on_table
from tests.table.poker.test_crash import PokerProcess
from tests.table.poker.test_naiko import ANCHOR, PEEK, fold_out, hand_with, to_act, use

PLAYERS = ("kia", "kob", "kal")


@pytest.fixture
def process(deps: tuple[Path, RunningService, RunningService]) -> Iterator[tuple[PokerProcess, Stack]]:
    data_dir, dealer, wallet = deps
    proc = PokerProcess(data_dir, dealer, wallet)
    proc.env["FELT_TABLE_POKER_TABLES"] = "nk:NAIKO:50/100:2000-10000:6"
    proc.start()
    stack = Stack(data_dir, dealer, wallet, dealer, MsClock())
    stack.tables = proc.tables  # type: ignore[method-assign]
    try:
        yield proc, stack
    finally:
        proc.stop()


def destellos(view: pb.TableView) -> dict[int, int]:
    return {d.seat: d.destellos for d in view.naiko.destellos}


def powers_used(stack: Stack) -> tuple[pb.TableView, dict[int, int]]:
    """A hand in which the first to act pre-flop anchors the big blind and calls, and the next player
    peeks if the Carrusel has Lirikan Diam-diam: the view after, and the balances right after the deal."""
    view = hand_with(stack, "nk", PLAYERS, {ANCHOR}, destellos=2)
    dealt = destellos(view)
    declarer = to_act(stack, "nk", PLAYERS)
    big_blind = next(p.seat.seat for p in view.players if p.round_bet == 100)
    use(stack, declarer, "nk", ANCHOR, target_seat=big_blind)
    stack.act(declarer, "nk", pb.ACTION_KIND_CALL)
    nxt = to_act(stack, "nk", PLAYERS)
    if PEEK in stack.view(nxt, "nk").naiko.carrusel:
        use(stack, nxt, "nk", PEEK)
    after = stack.view(PLAYERS[0], "nk")
    assert destellos(after) != dealt  # Destellos were spent in this hand
    return after, dealt


@pytest.mark.slow
def test_sigkill_mid_naiko_hand_resumes_or_voids_with_destellos_returned(
    process: tuple[PokerProcess, Stack],
) -> None:
    proc, stack = process
    for seat, player in enumerate(PLAYERS, start=1):
        stack.fund(player, 50_000)
        stack.join(player, "nk", seat=seat)
    before, _ = powers_used(stack)
    proc.kill()
    proc.start()
    after = stack.view(PLAYERS[0], "nk")
    assert (after.hand_number, after.hand_in_play, after.version) == (
        before.hand_number,
        True,
        before.version,
    )
    assert destellos(after) == destellos(before)
    assert list(after.naiko.carrusel) == list(before.naiko.carrusel)
    assert list(after.naiko.anchored) == list(before.naiko.anchored)
    assert list(after.naiko.used) == list(before.naiko.used)
    assert after.naiko.activations_left == before.naiko.activations_left
    # A window still open resumes with its deadline; one whose deadline passed while the service was
    # down has applied its cap at the restart (both on the table's clock).
    open_before = {(w.target_seat, w.deadline_ms) for w in before.naiko.windows}
    assert {(w.target_seat, w.deadline_ms) for w in after.naiko.windows} <= open_before
    assert stack.escrow("nk") == chips_on_table(after)
    fold_out(stack, "nk", PLAYERS)  # play on: the resumed hand ends, the next is dealt

    during, dealt = powers_used(stack)
    proc.kill()
    proc.env["FELT_TABLE_POKER_RESUME"] = "0"
    proc.env["FELT_TABLE_POKER_HAND_PAUSE_MS"] = "600000"  # hold the next hand: look at the voided one
    proc.start()
    voided = stack.view(PLAYERS[0], "nk")
    assert not voided.hand_in_play and voided.hand_number == during.hand_number
    assert destellos(voided) == dealt  # every Destello spent in the voided hand came back
    assert stack.escrow("nk") == chips_on_table(voided)
    watch = stack.tables(PLAYERS[0]).WatchTable(pb.WatchTableRequest(table_id="nk", from_seq=1), timeout=5)
    returned = None
    for event in (e for response in watch for e in response.events):
        if event.HasField("destellos_returned") and event.hand_number == during.hand_number:
            returned = event.destellos_returned
            watch.cancel()
            break
    assert returned is not None and returned.refunds
    assert {b.seat: b.destellos for b in returned.balances} == dealt
    summary = stack.tables(PLAYERS[1]).GetHandHistory(
        pb.GetHandHistoryRequest(table_id="nk", hand_number=during.hand_number)
    )
    assert summary.summary.voided and summary.summary.net == 0
