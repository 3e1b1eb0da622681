"""The Perisai Segel response window on a virtual clock (NK-12.8, NK-13.3, NK-13.5, NK-13.6): shield in time,
pass, silence, a late answer, and a table restored in the middle of a window."""

from __future__ import annotations

import pickle

from pokerrules.multiplayer import Action
from pokerrules.naiko import NaikoTable, expire
from pokerrules.naiko.events import PASSED, SHIELDED, TIMED_OUT, AnchorResolved

from tests.pokerrules.naiko.harness import ANCHOR, SHIELD, Naiko, hand_state_snapshot


def flop_with_anchor(window_ms: int = 8_000, declared_at: int = 1_000) -> Naiko:
    """Flop, three-handed (button 3): seat 1 declares Jangkar Pendek on seat 3 at `declared_at` ms."""
    n = Naiko({1: 1000, 2: 1000, 3: 1000}, 3, destellos={1: 2, 3: 1}, window_ms=window_ms)
    n.play((3, Action.call()), (1, Action.call()), (2, Action.check()))
    n.now = declared_at
    n.power(1, ANCHOR, target=3)
    assert n.naiko.next_deadline() == declared_at + window_ms
    return n


def test_shield_in_time_on_the_last_millisecond() -> None:
    n = flop_with_anchor()
    assert n.tick(7_999) == []  # nothing is due before the deadline
    n.respond(3, True)
    assert n.of(AnchorResolved)[-1].outcome == SHIELDED
    assert n.naiko.next_deadline() is None and not any(n.hand.pot_capped)
    assert n.tick(10_000) == []


def test_shield_at_the_deadline_is_late() -> None:
    n = flop_with_anchor()
    n.now = 9_000  # exactly the deadline
    assert n.refused(3, SHIELD) == "ANCHOR_WINDOW_EXPIRED"
    n.tick(0)
    assert n.of(AnchorResolved)[-1].outcome == TIMED_OUT and n.balance(3) == 1


def test_nk_13_5_an_answer_after_the_window_timed_out_is_told_it_expired() -> None:
    """Issue 23: once the table applied the time-out (the cap is on), a late shield or pass is refused as
    the proto promises, ANCHOR_WINDOW_EXPIRED, not NO_ANCHOR_WINDOW as if no Jangkar Pendek was aimed."""
    n = flop_with_anchor()
    n.tick(8_000)
    assert n.of(AnchorResolved)[-1].outcome == TIMED_OUT and n.naiko.next_deadline() is None
    n.now += 500
    assert n.refused(3, SHIELD) == "ANCHOR_WINDOW_EXPIRED"
    assert n.refused(3, SHIELD, shield=True) == "ANCHOR_WINDOW_EXPIRED"
    assert n.refused(3, SHIELD, shield=False) == "ANCHOR_WINDOW_EXPIRED"
    assert n.refused(2, SHIELD, shield=False) == "NO_ANCHOR_WINDOW"  # none was ever aimed at seat 2


def test_a_second_answer_before_the_deadline_finds_no_window_and_after_it_an_expired_one() -> None:
    n = flop_with_anchor()
    n.tick(2_000)
    n.respond(3, False)
    assert n.refused(3, SHIELD, shield=False) == "NO_ANCHOR_WINDOW"  # answered: none awaits an answer
    n.now = 9_000
    assert n.refused(3, SHIELD, shield=False) == "ANCHOR_WINDOW_EXPIRED"


def test_pass_applies_the_cap_at_once_and_costs_nothing() -> None:
    n = flop_with_anchor()
    n.tick(2_000)
    n.respond(3, False)
    assert n.of(AnchorResolved)[-1].outcome == PASSED
    assert n.hand.pot_capped[2] and n.balance(3) == 1 and n.naiko.next_deadline() is None


def test_silence_applies_the_cap_when_the_window_runs_out() -> None:
    n = flop_with_anchor()
    naiko, hand = n.naiko, n.hand
    early = expire(naiko, hand, 8_999)
    assert early.naiko is naiko and early.hand is hand and early.events == []  # nothing due: unchanged
    n.tick(8_000)
    assert n.of(AnchorResolved)[-1] == AnchorResolved(1, 3, TIMED_OUT)
    assert n.hand.pot_capped[2] and n.balance(3) == 1
    assert not hand.pot_capped[2]  # the state held before is untouched (copy-on-write)


def test_betting_goes_on_while_the_window_runs() -> None:
    n = flop_with_anchor()
    n.tick(1_000)
    n.act(1, Action.bet(100))
    n.tick(1_000)
    n.act(2, Action.call())
    assert n.naiko.next_deadline() == 9_000
    n.tick(5_999)
    n.respond(3, True)  # 7.999 s after the declaration
    n.act(3, Action.raise_to(900))  # shielded: the whole stack is allowed


def test_a_restored_table_resumes_the_window_where_it_was() -> None:
    """Deadlines are absolute table-clock times inside the state: a table restored from its snapshot (here
    a pickle round trip of the Naiko state; the hand is the engine's, rebuilt from its log) keeps the
    window and its deadline."""
    n = flop_with_anchor()
    n.tick(3_000)
    snapshot = pickle.dumps(n.naiko)
    restored_naiko, restored_hand = pickle.loads(snapshot), n.hand.copy()
    assert isinstance(restored_naiko, NaikoTable)
    assert restored_naiko == n.naiko and hand_state_snapshot(restored_hand) == hand_state_snapshot(n.hand)
    assert restored_naiko.next_deadline() == 9_000
    # answered in time after the restart
    n.naiko, n.hand = restored_naiko, restored_hand
    n.tick(4_999)
    n.respond(3, True)
    assert n.of(AnchorResolved)[-1].outcome == SHIELDED
    # or the restart came too late: the first expiry applies the cap
    late = flop_with_anchor()
    late.naiko = pickle.loads(snapshot)
    late.tick(60_000)
    assert late.of(AnchorResolved)[-1].outcome == TIMED_OUT


def test_replaying_the_logged_commands_gives_the_same_state() -> None:
    """The core is deterministic given the cards and the times: the same commands at the same times
    rebuild the same Naiko state (how a restarted table service recovers a hand in progress)."""
    first, second = flop_with_anchor(), flop_with_anchor()
    for n in (first, second):
        n.tick(2_500)
        n.act(1, Action.bet(200))
    assert first.naiko == second.naiko
    assert hand_state_snapshot(first.hand) == hand_state_snapshot(second.hand)
