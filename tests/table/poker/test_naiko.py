"""Naiko mode through TableService (issue 11, at the tables), over real gRPC with the real dealer and
wallet, on a virtual clock: the Carrusel from the dealer's draw, Destellos, UsePower / RespondToAnchor with
their refusals, the 8-second shield window (shield in time, pass, silence, a restart inside it), the view's
powers, each viewer's events (the peeker alone sees the peeked card, the swapper alone the card received)
and the hand histories. Rules NK-5, NK-9 to NK-14."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from dealing.verifier import draw_value
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.naiko import CARRUSELS
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, running

from services.table.poker.convert import POWER_PB
from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from tests.table.poker.conftest import MsClock, Stack, Watcher, rid, table_config, wait_until

PEEK, SWAP = pb.POWER_LIRIKAN_DIAM_DIAM, pb.POWER_TUKAR_LENGAN_BAJU
ANCHOR, SHIELD = pb.POWER_JANGKAR_PENDEK, pb.POWER_PERISAI_SEGEL
NAIKO = pb.TableSettings(
    game=pb.GAME_NAIKO, small_blind=50, big_blind=100, min_buy_in=2_000, max_buy_in=10_000, seats=6
)


def naiko_table(stack: Stack, players: tuple[str, ...]) -> str:
    """A new public Naiko table (window: the default 8 s) with `players` in seats 1, 2, 3, ..."""
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid("naiko"), settings=NAIKO)
    )
    table_id = str(made.table.table_id)
    assert made.table.settings.shield_window_seconds == 8
    for seat, player in enumerate(players, start=1):
        stack.fund(player, 50_000)
        stack.join(player, table_id, seat=seat)
    return table_id


def refusal(stack: Stack, player: str, request: pb.UsePowerRequest | pb.RespondToAnchorRequest) -> str:
    stub = stack.tables(player)
    try:
        if isinstance(request, pb.UsePowerRequest):
            stub.UsePower(request)
        else:
            stub.RespondToAnchor(request)
    except grpc.RpcError as error:
        return str(details_of(error).reason)
    raise AssertionError("not refused")


def use(stack: Stack, player: str, table_id: str, power: int, **fields: object) -> pb.UsePowerResponse:
    view = stack.view(player, table_id)
    request = pb.UsePowerRequest(
        request_id=rid("power"), table_id=table_id, expected_version=view.version, power=power, **fields
    )
    return stack.tables(player).UsePower(request)  # type: ignore[no-any-return]


def respond(stack: Stack, player: str, table_id: str, shield: bool) -> pb.RespondToAnchorResponse:
    request = pb.RespondToAnchorRequest(request_id=rid("answer"), table_id=table_id, shield=shield)
    return stack.tables(player).RespondToAnchor(request)  # type: ignore[no-any-return]


def to_act(stack: Stack, table_id: str, players: tuple[str, ...]) -> str:
    view = stack.view(players[0], table_id)
    return next(p for p in players if stack.view(p, table_id).your_seat == view.seat_to_act)


def fold_out(stack: Stack, table_id: str, players: tuple[str, ...]) -> None:
    """Everyone to act folds (or checks) until the hand in play is over; waits for the next hand."""
    number = stack.view(players[0], table_id).hand_number
    while (view := stack.view(players[0], table_id)).hand_in_play and view.hand_number == number:
        player = to_act(stack, table_id, players)
        legal = stack.view(player, table_id).legal
        stack.act(player, table_id, pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_FOLD)
    wait_until(lambda: (v := stack.view(players[0], table_id)).hand_in_play and v.hand_number > number)


def hand_with(
    stack: Stack, table_id: str, players: tuple[str, ...], powers: set[int], destellos: int = 2
) -> pb.TableView:
    """Folds hands out until one whose Carrusel has `powers` is dealt with everyone at `destellos` or
    more (the Carrusel is the dealer's draw: 2 of 3 hands have Perisai Segel, for one)."""
    wait_until(lambda: stack.view(players[0], table_id).hand_in_play)
    for _ in range(40):
        view = stack.view(players[0], table_id)
        held = [d.destellos for d in view.naiko.destellos]
        if powers <= set(view.naiko.carrusel) and min(held) >= destellos:
            return view
        fold_out(stack, table_id, players)
    raise AssertionError("no such hand in 40")


def anchor_the_big_blind(stack: Stack, table_id: str, players: tuple[str, ...]) -> tuple[str, str, int]:
    """A hand with Perisai Segel in its Carrusel: the first to act pre-flop declares Jangkar Pendek on the
    big blind (who has not acted: a blind is no action, NK-A7). Returns (declarer, target, deadline)."""
    hand_with(stack, table_id, players, {ANCHOR, SHIELD})
    declarer = to_act(stack, table_id, players)
    started = stack.view(declarer, table_id)
    big_blind = next(p.seat.seat for p in started.players if p.round_bet == 100)
    target = next(p for p in players if stack.view(p, table_id).your_seat == big_blind)
    answer = use(stack, declarer, table_id, ANCHOR, target_seat=big_blind)
    windows = list(answer.view.naiko.windows)
    assert [(w.target_seat, w.ms_left) for w in windows] == [(big_blind, 8_000)]  # NK-13.5: 8 s
    assert windows[0].deadline_ms == stack.clock() + 8_000
    return declarer, target, windows[0].deadline_ms


@pytest.fixture
def stack(shared_stack: Stack) -> Stack:
    return shared_stack


# -- the shield window on the table clock -----------------------------------------------------------------------


def test_nk_13_5_shield_in_time_on_the_last_millisecond(stack: Stack) -> None:
    players = ("sa1", "sa2", "sa3")
    table_id = naiko_table(stack, players)
    _, target, deadline = anchor_the_big_blind(stack, table_id, players)
    before = {d.seat: d.destellos for d in stack.view(target, table_id).naiko.destellos}
    stack.clock.advance(deadline - stack.clock() - 1)
    answered = respond(stack, target, table_id, shield=True)
    assert not answered.view.naiko.windows
    after = {d.seat: d.destellos for d in answered.view.naiko.destellos}
    seat = answered.view.your_seat
    assert after[seat] == before[seat] - 1  # Perisai Segel costs 1; the declarer's 2 stay paid (NK-13.7)
    assert refusal(stack, target, pb.RespondToAnchorRequest(request_id=rid(), table_id=table_id)) == (
        "NO_ANCHOR_WINDOW"
    )
    watch = Watcher(stack.tables(target), table_id)
    try:
        wait_until(lambda: "anchor_resolved" in watch.kinds())
        resolved = next(e.anchor_resolved for e in watch.events if e.HasField("anchor_resolved"))
        assert (resolved.outcome, resolved.capped) == ("SHIELDED", False)
    finally:
        watch.close()


def test_nk_13_6_a_pass_applies_the_cap_at_once_and_costs_nothing(stack: Stack) -> None:
    players = ("sb1", "sb2", "sb3")
    table_id = naiko_table(stack, players)
    _, target, _ = anchor_the_big_blind(stack, table_id, players)
    before = stack.view(target, table_id).naiko
    passed = respond(stack, target, table_id, shield=False)
    assert not passed.view.naiko.windows
    assert list(passed.view.naiko.destellos) == list(before.destellos)
    assert passed.view.naiko.anchored == [passed.view.your_seat]
    # Everyone calls to the target: its raise is capped at the pot-size amount (NK-3.7, NK-12.2).
    while (who := to_act(stack, table_id, players)) != target:
        stack.act(who, table_id, pb.ACTION_KIND_CALL)
    legal = stack.view(target, table_id).legal
    assert legal.can_check and 0 < legal.max_to < legal.all_in_to
    pot = stack.view(target, table_id).pot
    assert legal.max_to == 100 + pot  # to call 0: the current bet plus the pot (NK-3.7)


def test_nk_13_6_silence_applies_the_cap_when_the_8_seconds_run_out(stack: Stack) -> None:
    players = ("sc1", "sc2", "sc3")
    table_id = naiko_table(stack, players)
    rail = Watcher(stack.tables("ops", Role.OPERATOR), table_id)
    try:
        _, target, deadline = anchor_the_big_blind(stack, table_id, players)
        stack.clock.advance(deadline - stack.clock() - 1)
        assert stack.view(target, table_id).naiko.windows[0].ms_left == 1
        stack.clock.advance(1)
        wait_until(lambda: "anchor_resolved" in rail.kinds())
        resolved = next(e.anchor_resolved for e in rail.events if e.HasField("anchor_resolved"))
        assert (resolved.outcome, resolved.capped) == ("TIMED_OUT", True)
        assert not stack.view(target, table_id).naiko.windows
        # Issue 23: the window resolved at its deadline; a foreign client's late answer is told so, as the
        # proto promises (it used to read NO_ANCHOR_WINDOW, as if none had been aimed).
        for shield in (True, False):
            late = refusal(
                stack, target, pb.RespondToAnchorRequest(request_id=rid(), table_id=table_id, shield=shield)
            )
            assert late == "ANCHOR_WINDOW_EXPIRED"
        late_power = refusal(
            stack,
            target,
            pb.UsePowerRequest(
                request_id=rid(),
                table_id=table_id,
                power=SHIELD,
                expected_version=stack.view(target, table_id).version,
            ),
        )
        assert late_power == "ANCHOR_WINDOW_EXPIRED"
    finally:
        rail.close()


def test_nk_13_5_a_restarted_table_service_resumes_the_window(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    """The table service stops inside a window and starts again from its log: the window is there with
    the same deadline (absolute, on the table clock); a shield after the restart, in time, is taken, and
    silence after another restart applies the cap at the deadline."""
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(
        data_dir, dealer, wallet, poker_clock=clock, poker_tables=parse_tables("nk:NAIKO:50/100:2000-10000:6")
    )
    players = ("ra1", "ra2", "ra3")

    @contextmanager
    def started() -> Iterator[Stack]:
        with running(table_spec, config) as table:
            yield Stack(data_dir, dealer, wallet, table, clock)

    with started() as stack:
        for seat, player in enumerate(players, start=1):
            stack.fund(player, 50_000)
            stack.join(player, "nk", seat=seat)
        _, target, deadline = anchor_the_big_blind(stack, "nk", players)
        stack.clock.advance(3_000)
        before = stack.view(target, "nk")
    with started() as stack:  # restarted mid-window
        after = stack.view(target, "nk")
        assert after.version == before.version and after.hand_number == before.hand_number
        assert [(w.target_seat, w.deadline_ms) for w in after.naiko.windows] == [(after.your_seat, deadline)]
        assert after.naiko.windows[0].ms_left == 5_000
        assert list(after.naiko.destellos) == list(before.naiko.destellos)
        assert list(after.naiko.carrusel) == list(before.naiko.carrusel)
        stack.clock.advance(4_999)
        assert not respond(stack, target, "nk", shield=False).view.naiko.windows  # in time
        number = after.hand_number
        fold_out(stack, "nk", players)
        assert stack.view(target, "nk").hand_number == number + 1
        _, target, deadline = anchor_the_big_blind(stack, "nk", players)
    with started() as stack:  # restarted again: silence through the deadline applies the cap
        stack.clock.advance(deadline - stack.clock())
        wait_until(lambda: not stack.view(target, "nk").naiko.windows)
        assert stack.view(target, "nk").naiko.anchored == [stack.view(target, "nk").your_seat]


# -- refusals and bad input ------------------------------------------------------------------------------------------


def test_nk_1_5_powers_are_refused_at_a_table_without_them(stack: Stack, hu: str) -> None:
    stack.fund("nn1", 50_000)
    stack.fund("nn2", 50_000)
    stack.join("nn1", hu, seat=1)
    stack.join("nn2", hu, seat=2)
    wait_until(lambda: stack.view("nn1", hu).hand_in_play)
    request = pb.UsePowerRequest(request_id=rid(), table_id=hu, power=PEEK)
    assert refusal(stack, "nn1", request) == "NOT_NAIKO_MODE"
    assert not stack.view("nn1", hu).HasField("naiko")


def test_bad_power_requests_name_their_field(stack: Stack) -> None:
    table_id = naiko_table(stack, ("bi1", "bi2"))
    cases = [
        (pb.UsePowerRequest(request_id=rid(), table_id=table_id), "power", "POWER_REQUIRED"),
        (
            pb.UsePowerRequest(request_id=rid(), table_id=table_id, power=ANCHOR, target_seat=7),
            "target_seat",
            "NO_SUCH_SEAT",
        ),
        (
            pb.UsePowerRequest(request_id=rid(), table_id=table_id, power=SWAP, hole_card="Zz"),
            "hole_card",
            "BAD_CARD",
        ),
        (
            pb.UsePowerRequest(request_id=rid(), table_id=table_id, power=SWAP, hole_card="10h"),
            "hole_card",
            "FIELD_TOO_LONG",
        ),
    ]
    for request, field, reason in cases:
        with pytest.raises(grpc.RpcError) as error:
            stack.tables("bi1").UsePower(request)
        details = details_of(error.value)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (details.reason, [v.field for v in details.violations]) == (reason, [field])
        assert "Zz" not in details.message


def test_refused_powers_cost_nothing_and_name_the_reason(stack: Stack) -> None:
    """NK-5.10, NK-9.4: each refusal names its reason and changes nothing (the same version, the same
    Destellos)."""
    players = ("rf1", "rf2", "rf3")
    table_id = naiko_table(stack, players)
    view = hand_with(stack, table_id, players, {ANCHOR}, destellos=1)
    actor = to_act(stack, table_id, players)
    other = next(p for p in players if p != actor)
    before = stack.view(actor, table_id)
    assert refusal(stack, other, pb.UsePowerRequest(request_id=rid(), table_id=table_id, power=PEEK)) in (
        "NOT_YOUR_TURN",
        "NOT_IN_CARRUSEL",
    )
    stale = pb.UsePowerRequest(
        request_id=rid(), table_id=table_id, power=ANCHOR, expected_version=before.version + 1
    )
    assert refusal(stack, actor, stale) == "STALE_VERSION"
    itself = pb.UsePowerRequest(
        request_id=rid(), table_id=table_id, power=ANCHOR, target_seat=before.your_seat
    )
    held = {d.seat: d.destellos for d in before.naiko.destellos}[before.your_seat]
    assert refusal(stack, actor, itself) == ("INVALID_TARGET" if held >= 2 else "NOT_ENOUGH_DESTELLOS")
    assert refusal(stack, actor, pb.RespondToAnchorRequest(request_id=rid(), table_id=table_id)) == (
        "NO_ANCHOR_WINDOW"
    )
    after = stack.view(actor, table_id)
    assert (after.version, list(after.naiko.destellos)) == (before.version, list(before.naiko.destellos))
    assert after.naiko.activations_left == 3 == view.naiko.activations_left


def test_a_repeated_use_power_request_uses_the_power_once(stack: Stack) -> None:
    players = ("id1", "id2", "id3")
    table_id = naiko_table(stack, players)
    hand_with(stack, table_id, players, {PEEK}, destellos=1)
    actor = to_act(stack, table_id, players)
    request = pb.UsePowerRequest(request_id="peek-once", table_id=table_id, power=PEEK)
    first = stack.tables(actor).UsePower(request)
    again = stack.tables(actor).UsePower(request)
    assert first == again and first.peeked_card
    assert len(stack.view(actor, table_id).naiko.peeks) == 1
    with pytest.raises(grpc.RpcError) as reused:
        stack.tables(actor).UsePower(
            pb.UsePowerRequest(request_id="peek-once", table_id=table_id, power=SWAP)
        )
    assert details_of(reused.value).reason == "REQUEST_ID_REUSED"


# -- views, events and their privacy -------------------------------------------------------------------------------


def test_the_view_shows_the_carrusel_destellos_and_the_callers_powers(stack: Stack) -> None:
    players = ("vw1", "vw2", "vw3")
    table_id = naiko_table(stack, players)
    view = hand_with(stack, table_id, players, set(), destellos=1)
    naiko = view.naiko
    assert [POWER_PB[p] for p in CARRUSELS[naiko.carrusel_draw]] == list(naiko.carrusel)  # NK-5.12
    assert sorted(d.seat for d in naiko.destellos) == [1, 2, 3]
    assert naiko.activations_left == 3 and not naiko.windows
    actor = to_act(stack, table_id, players)
    mine = {o.power: o for o in stack.view(actor, table_id).naiko.options}
    assert set(mine) == {PEEK, SWAP, ANCHOR, SHIELD}
    assert mine[SHIELD].reason in ("NOT_IN_CARRUSEL", "NO_ANCHOR_WINDOW")
    assert any(o.usable for o in mine.values()) or all(o.reason for o in mine.values())
    other = next(p for p in players if p != actor)
    theirs = {o.power: o for o in stack.view(other, table_id).naiko.options}
    assert all(not o.usable for p, o in theirs.items() if p != SHIELD)
    observer = stack.view("rail-vw", table_id).naiko
    assert not observer.options and not observer.peeks and list(observer.destellos) == list(naiko.destellos)
    fold_out(stack, table_id, players)
    check_the_carrusel_from_the_revealed_shoe(stack, table_id, view.hand_number)


def check_the_carrusel_from_the_revealed_shoe(stack: Stack, table_id: str, hand: int) -> None:
    """docs/fairness.md section 9: from the hand's published events (the shoe and its commitment at
    HandStarted, the draw at CarruselDrawn) and the dealer's reveal after the hand, anyone recomputes
    the Carrusel (NK-5.4)."""
    watch = Watcher(stack.tables("rail-check"), table_id, from_seq=1)
    try:
        wait_until(lambda: any(e.hand_number == hand and e.HasField("carrusel_drawn") for e in watch.events))
        events = [e for e in watch.events if e.hand_number == hand]
    finally:
        watch.close()
    started = next(e.hand_started for e in events if e.HasField("hand_started"))
    drawn = next(e.carrusel_drawn for e in events if e.HasField("carrusel_drawn"))
    dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("auditor", Role.OPERATOR))
    shoe = dpb.GetShoeRequest(shoe_id=started.shoe_id)
    wait_until(lambda: dealer.GetShoe(shoe).shoe.state == dpb.SHOE_STATE_CLOSED)
    revealed = dealer.Reveal(dpb.RevealRequest(shoe_id=started.shoe_id))
    seed = bytes.fromhex(revealed.server_seed)
    assert hashlib.sha256(seed).hexdigest() == started.commitment == revealed.commitment
    value = draw_value(seed, revealed.client_seed, revealed.nonce, "carrusel", 3)
    assert value == drawn.draw and [POWER_PB[p] for p in CARRUSELS[value]] == list(drawn.powers)
    assert [(d.label, d.outcomes, d.value) for d in revealed.draws] == [("carrusel", 3, value)]


def test_nk_10_4_the_peeker_alone_learns_the_peeked_card(stack: Stack) -> None:
    players = ("pk1", "pk2", "pk3")
    table_id = naiko_table(stack, players)
    streams = {p: Watcher(stack.tables(p), table_id) for p in (*players, "rail-pk")}
    try:
        hand_with(stack, table_id, players, {PEEK}, destellos=1)
        peeker = to_act(stack, table_id, players)
        answer = use(stack, peeker, table_id, PEEK)
        card = answer.peeked_card
        assert len(card) == 2
        assert [(p.street, p.card) for p in answer.view.naiko.peeks] == [(pb.STREET_FLOP, card)]
        wait_until(lambda: all("power_used" in w.kinds() for w in streams.values()))
        for player, watch in streams.items():
            peeks = [e.board_card_peeked for e in watch.events if e.HasField("board_card_peeked")]
            if player == peeker:
                assert [(p.card, p.street) for p in peeks] == [(card, pb.STREET_FLOP)]
            else:
                assert not peeks
                assert not stack.view(player, table_id).naiko.peeks
            used = next(e.power_used for e in watch.events if e.HasField("power_used"))
            assert used.power == PEEK and used.cost == 1  # public: who, which, the cost; no card
    finally:
        for watch in streams.values():
            watch.close()


def test_nk_11_4_the_swapper_alone_learns_the_card_received(stack: Stack) -> None:
    players = ("sw1", "sw2", "sw3")
    table_id = naiko_table(stack, players)
    streams = {p: Watcher(stack.tables(p), table_id) for p in (*players, "rail-sw")}
    try:
        hand_with(stack, table_id, players, {SWAP}, destellos=2)
        swapper = to_act(stack, table_id, players)
        view = stack.view(swapper, table_id)
        mine = next(p for p in view.players if p.seat.seat == view.your_seat)
        kept, discarded = list(mine.hole_cards)
        answer = use(stack, swapper, table_id, SWAP, hole_card=discarded)
        received = answer.received_card
        now_held = next(p for p in answer.view.players if p.seat.seat == view.your_seat).hole_cards
        assert list(now_held) == [kept, received] and received != discarded
        wait_until(lambda: all("power_used" in w.kinds() for w in streams.values()))
        for player, watch in streams.items():
            swaps = [e.hole_card_swapped for e in watch.events if e.HasField("hole_card_swapped")]
            if player == swapper:
                assert [(s.discarded, s.received) for s in swaps] == [(discarded, received)]
            else:
                assert not swaps
                seen = stack.view(player, table_id).players
                assert all(not p.hole_cards for p in seen if p.seat.seat == view.your_seat)
        # The hand's histories: the swapper's with the cards it ended with; the operator's with the swap.
        number = view.hand_number
        fold_out(stack, table_id, players)
        own = stack.tables(swapper).GetHandHistory(
            pb.GetHandHistoryRequest(table_id=table_id, hand_number=number)
        )
        full = stack.tables("ops", Role.OPERATOR).GetHandHistory(
            pb.GetHandHistoryRequest(table_id=table_id, hand_number=number)
        )
        dealt = [a.split() for a in tomllib.loads(own.phh)["actions"] if a.startswith("d dh")]
        ended_with = kept + received  # NK-11.2: recorded with the cards it ended with (PokerKit replays it)
        assert ended_with in [cards for _, _, _, cards in dealt]
        comments = [a for a in tomllib.loads(own.phh)["actions"] if a.startswith("# ")]
        assert any("Tukar Lengan Baju" in a for a in comments) and any("Carrusel" in a for a in comments)
        assert any(f"discards {discarded}, receives {received}" in a for a in comments)
        assert any(
            f"discards {discarded}, receives {received}" in a for a in tomllib.loads(full.phh)["actions"]
        )
        for other in (p for p in players if p != swapper):
            request = pb.GetHandHistoryRequest(table_id=table_id, hand_number=number)
            theirs = stack.tables(other).GetHandHistory(request).phh
            assert "receives" not in theirs and "Tukar Lengan Baju" in theirs  # the use is public
    finally:
        for watch in streams.values():
            watch.close()


def test_a_power_in_a_turn_sends_no_second_turn_to_act_and_its_answer_has_the_version(stack: Stack) -> None:
    """Issue 23: a client that acts on every TurnToAct used to get a second one for the same seat after
    its own UsePower (Tukar Lengan Baju changes the hand's version) and answer a stale one. Now a turn has
    one TurnToAct; the power's answer carries the new version, the one the action goes with."""
    players = ("tt1", "tt2", "tt3")
    table_id = naiko_table(stack, players)
    rail = Watcher(stack.tables("rail-tt"), table_id)
    try:
        hand_with(stack, table_id, players, {SWAP}, destellos=2)
        swapper = to_act(stack, table_id, players)
        view = stack.view(swapper, table_id)
        seat = view.your_seat
        wait_until(
            lambda: any(
                e.HasField("turn_to_act") and e.turn_to_act.version == view.version for e in rail.events
            )
        )
        first = [
            e.turn_to_act for e in rail.events if e.HasField("turn_to_act") and e.turn_to_act.seat == seat
        ]
        mine = next(p for p in view.players if p.seat.seat == seat)
        answer = use(stack, swapper, table_id, SWAP, hole_card=list(mine.hole_cards)[1])
        assert answer.view.version != view.version  # the swap moved the hand's version
        assert answer.view.seat_to_act == seat  # the turn goes on (NK-14.1)
        acted = stack.tables(swapper).Act(
            pb.ActRequest(
                request_id=rid("act"),
                table_id=table_id,
                expected_version=answer.view.version,
                kind=pb.ACTION_KIND_CALL,
            )
        )
        assert acted.view.seat_to_act != seat
        wait_until(
            lambda: "power_used" in (k := rail.kinds()) and "player_acted" in k[k.index("power_used") :]
        )
        turns = [
            e.turn_to_act for e in rail.events if e.HasField("turn_to_act") and e.turn_to_act.seat == seat
        ]
        assert [t.version for t in turns] == [t.version for t in first], (
            "a second TurnToAct for the same turn"
        )
        after = [e.WhichOneof("event") for e in rail.events]
        used = after.index("power_used")
        assert "turn_to_act" not in after[used : after.index("player_acted", used)]
    finally:
        rail.close()
