"""Bet sizes and refusals: NK section 3 (No-Limit and Pot-Limit), MP-A5, and illegal commands."""

from __future__ import annotations

import pytest
from pokerrules.multiplayer import Action, ActionKind, GameConfig, IllegalAction, apply
from pokerrules.multiplayer.events import PlayerActed

SIX = dict.fromkeys(range(1, 7), 10_000)


def refused(state, seat, action) -> str:  # type: ignore[no-untyped-def]
    """The refusal reason; also checks that the refused command changed nothing (copy and original)."""
    before = (state.version, state.stacks[:], state.bets[:], state.actor, state.board[:])
    with pytest.raises(IllegalAction) as info:
        apply(state, seat, action)
    with pytest.raises(IllegalAction):
        state.act(seat, action)  # the in-place form validates before mutating, too
    assert (state.version, state.stacks, state.bets, state.actor, state.board) == before
    return info.value.reason


def test_nk_3_2_minimum_opening_bet_is_big_blind(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-3.2 / NK-EX-3: after the flop the minimum opening bet is the big blind (100)."""
    h = hand({1: 5000, 2: 5000}, button=1)
    h.play((1, Action.call()), (2, Action.check()))
    la = h.state.legal_actions()
    assert la.bet_kind is ActionKind.BET and la.min_to == 100 and la.max_to == 5000 - 100
    assert refused(h.state, 2, Action.bet(99)) == "BELOW_MIN_BET"
    assert refused(h.state, 2, Action.raise_to(200)) == "CANNOT_RAISE"
    h.play((2, Action.bet(100)))
    assert refused(h.state, 1, Action.bet(300)) == "CANNOT_BET"


def test_nk_3_3_minimum_raise_is_last_full_raise(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-3.3 / NK-EX-3: A raises to 300 (a full raise of 200); the next full raise must reach 500."""
    h = hand(SIX, button=1)
    assert h.state.legal_actions().min_to == 200  # pre-flop: BB 100 + raise of one big blind
    h.play((4, Action.raise_to(300)))
    la = h.state.legal_actions()
    assert la.min_to == 500
    assert refused(h.state, 5, Action.raise_to(499)) == "BELOW_MIN_RAISE"
    h.play((5, Action.raise_to(500)))
    assert h.state.legal_actions().min_to == 700


def test_nk_3_1_no_limit_maximum_is_whole_stack(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-3.1 / NK-EX-1 variant: at No-Limit the maximum is every chip the player has (1000)."""
    h = hand({1: 1000, 2: 1000, 3: 1000}, button=1)
    la = h.state.legal_actions()
    assert la.max_to == 1000 == la.all_in_to
    assert refused(h.state, 1, Action.raise_to(1001)) == "ABOVE_STACK"
    h.play((1, Action.raise_to(1000)))
    assert h.state.stack_of(1) == 0


def test_nk_ex_3_short_all_in_does_not_reopen_betting(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-3.5 / NK-EX-3: A to 300, B all-in 400 (not a full raise); C may raise to 600+; A may only call."""
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 400, 6: 10_000}
    h = hand(stacks, button=1)
    h.play((4, Action.raise_to(300)), (5, Action.all_in()))
    acted = h.of(PlayerActed)[-1]
    assert (acted.kind, acted.round_bet, acted.all_in) == (ActionKind.RAISE, 400, True)
    la = h.state.legal_actions()  # C = seat 6, had not acted
    assert la.seat == 6 and la.call_amount == 400 and la.min_to == 600
    h.play((6, Action.call()), (1, Action.fold()), (2, Action.fold()), (3, Action.call()))
    la = h.state.legal_actions()
    assert la.seat == 4 and la.call_amount == 100 and not la.can_bet_or_raise
    assert refused(h.state, 4, Action.raise_to(700)) == "RAISE_NOT_REOPENED"
    assert refused(h.state, 4, Action.all_in()) == "RAISE_NOT_REOPENED"
    h.play((4, Action.call()))
    assert h.state.street == 1


def test_nk_3_5_full_raise_after_short_all_in_reopens(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-3.5: if a later player makes a full raise, the players who already acted may raise again."""
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 400, 6: 10_000}
    h = hand(stacks, button=1)
    h.play((4, Action.raise_to(300)), (5, Action.all_in()), (6, Action.raise_to(600)))
    h.play((1, Action.fold()), (2, Action.fold()), (3, Action.fold()))
    la = h.state.legal_actions()
    assert la.seat == 4 and la.can_bet_or_raise and la.min_to == 800


def test_nk_ex_2_pot_limit_preflop_maximums() -> None:
    """NK-EX-2 (NK-3.7): PL 10/20: UTG max raise-to 70; folded to the SB, its max raise-to is 60."""
    from pokerrules.multiplayer import start_hand

    t = start_hand(
        GameConfig.plo(10, 20), {1: 1000, 2: 1000, 3: 1000, 4: 1000}, 1, list(range(52)), lambda h, b: 0
    )
    s = t.state
    la = s.legal_actions()
    assert (la.seat, la.min_to, la.max_to) == (4, 40, 70)
    assert refused(s, 4, Action.raise_to(71)) == "ABOVE_POT_LIMIT"
    s.act(4, Action.fold())
    s.act(1, Action.fold())
    la = s.legal_actions()
    assert (la.seat, la.call_amount, la.max_to) == (2, 10, 60)


def test_nk_ex_1_pot_size_raise_source_example() -> None:
    """NK-EX-1 / NK-12.9 / NK-A1 (a raise *to*): pot 100 before the round, a bet of 40, nothing in yet: max raise-to 220."""
    from pokerrules.multiplayer import start_hand

    # Pre-flop 25/50 heads-up call-check leaves 100 in the pot; seat 2 (BB) bets 40 on the flop.
    t = start_hand(GameConfig.plo(25, 50), {1: 1050, 2: 1050}, 1, list(range(52)), lambda h, b: 0)
    s = t.state
    s.act(1, Action.call())
    s.act(2, Action.check())
    assert s.pot == 100
    # Minimum bet is the big blind (50) - bet 50 and check 40 cannot both hold, so use a 3-handed table.
    t = start_hand(
        GameConfig.plo(5, 10), {1: 1000, 2: 1000, 3: 1000, 4: 1000}, 1, list(range(52)), lambda h, b: 0
    )
    s = t.state
    s.act(4, Action.raise_to(25))
    for seat in (1, 2, 3):
        s.act(seat, Action.call())
    assert s.pot == 100 and s.street == 1
    s.act(2, Action.bet(40))
    la = s.legal_actions()
    assert (la.seat, la.call_amount, la.max_to) == (3, 40, 220)
    assert refused(s, 3, Action.raise_to(221)) == "ABOVE_POT_LIMIT"


def test_nk_ex_1_variant_short_stack_all_in_under_cap() -> None:
    """NK-EX-1 variant / NK-12.6: a stack of 150 may go all-in for 150 at most."""
    from pokerrules.multiplayer import start_hand

    t = start_hand(
        GameConfig.plo(5, 10), {1: 1000, 2: 1000, 3: 175, 4: 1000}, 1, list(range(52)), lambda h, b: 0
    )
    s = t.state
    s.act(4, Action.raise_to(25))
    for seat in (1, 2, 3):
        s.act(seat, Action.call())
    s.act(2, Action.bet(40))
    la = s.legal_actions()
    assert (la.call_amount, la.max_to, la.all_in_to) == (40, 150, 150)
    assert refused(s, 3, Action.raise_to(151)) == "ABOVE_STACK"


def test_nk_3_6_pot_cap_hook_at_no_limit() -> None:
    """NK-3.6 / NK-12.2: the Jangkar Pendek hook caps a No-Limit player at the pot-size raise this round
    only (NK-12.7), without removing the legal minimum (NK-12.6)."""
    from pokerrules.multiplayer import cap_raises_to_pot, start_hand

    t = start_hand(
        GameConfig.nlhe(5, 10), {1: 1000, 2: 1000, 3: 1000, 4: 1000}, 1, list(range(52)), lambda h, b: 0
    )
    s = t.state
    s.act(4, Action.raise_to(25))
    for seat in (1, 2, 3):
        s.act(seat, Action.call())
    s.act(2, Action.bet(40))
    assert s.legal_actions().max_to == 1000 - 25  # NK-EX-1 variant: No-Limit maximum is the stack
    s = cap_raises_to_pot(s, 3).state
    assert s.legal_actions().max_to == 220
    assert refused(s, 3, Action.raise_to(221)) == "ABOVE_POT_LIMIT"
    for seat in (3, 4, 1):
        s.act(seat, Action.call())
    s.act(2, Action.check())
    s.act(3, Action.bet(100))  # next round: the cap has expired
    assert s.street == 2


def test_mp_a5_fold_not_offered_when_check_is_free(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-A5 (chosen reading): with nothing to call, Check and Bet are offered and Fold is refused."""
    h = hand({1: 5000, 2: 5000}, button=1)
    h.play((1, Action.call()))
    la = h.state.legal_actions()
    assert la.can_check and not la.can_fold and la.call_amount == 0
    assert refused(h.state, 2, Action.fold()) == "CHECK_AVAILABLE"
    assert refused(h.state, 2, Action.call()) == "NOTHING_TO_CALL"


def test_refusals_change_nothing(hand) -> None:  # type: ignore[no-untyped-def]
    """An illegal action is refused with a reason and changes nothing (issue: Betting engine)."""
    h = hand(SIX, button=1)
    s = h.state
    assert refused(s, 5, Action.call()) == "NOT_YOUR_TURN"
    assert refused(s, 9, Action.call()) == "UNKNOWN_SEAT"
    assert refused(s, 4, Action.check()) == "CANNOT_CHECK"
    assert refused(s, 4, Action.raise_to(150)) == "BELOW_MIN_RAISE"
    assert refused(s, 4, Action.raise_to(20_000)) == "ABOVE_STACK"
    for seat in (4, 5, 6, 1, 2):
        h.play((seat, Action.fold()))
    assert h.state.finished
    assert refused(h.state, 3, Action.check()) == "HAND_OVER"


def test_apply_is_copy_on_write(hand) -> None:  # type: ignore[no-untyped-def]
    """`apply` returns a new state and leaves the one it was given as it was (for the table service)."""
    h = hand(SIX, button=1)
    old = h.state
    snapshot = (old.stacks[:], old.bets[:], old.actor, old.version)
    new = h.play((4, Action.raise_to(300)))
    assert (old.stacks, old.bets, old.actor, old.version) == snapshot
    assert new.version == old.version + 1 and new.stack_of(4) == 10_000 - 300


def test_all_in_command_resolves_to_call_when_stack_is_short(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-4.14: All-in with fewer chips than the call is a call for less."""
    h = hand({1: 10_000, 2: 10_000, 3: 250}, button=2)
    h.play((2, Action.fold()), (3, Action.call()), (1, Action.raise_to(1000)), (3, Action.all_in()))
    acted = h.of(PlayerActed)[-1]
    assert (acted.seat, acted.kind, acted.added, acted.all_in) == (3, ActionKind.CALL, 150, True)


def test_no_raise_when_every_opponent_is_all_in(hand) -> None:  # type: ignore[no-untyped-def]
    """A raise nobody could answer is not offered: facing only all-in opponents a player calls or folds."""
    h = hand({1: 10_000, 2: 10_000, 3: 500}, button=1)
    h.play((1, Action.fold()), (2, Action.call()), (3, Action.all_in()))
    la = h.state.legal_actions()
    assert la.seat == 2 and la.call_amount == 400 and not la.can_bet_or_raise
    assert refused(h.state, 2, Action.raise_to(2000)) == "NOBODY_TO_RAISE"


def test_replay_rebuilds_the_same_hand(hand) -> None:  # type: ignore[no-untyped-def]
    """A hand is replayed from its inputs and logged commands to the same state and events."""
    from pokerrules.multiplayer import replay

    h = hand(SIX, button=1)
    moves = [(4, Action.raise_to(300)), (5, Action.call()), (6, Action.fold()), (1, Action.fold())]
    moves += [(2, Action.fold()), (3, Action.call()), (3, Action.bet(500)), (4, Action.call())]
    h.play(*moves)
    s = h.state
    t = replay(s.config, dict(zip(s.seats, s.starting_stacks, strict=True)), 1, s.deck, s.rank, moves)
    assert t.events == h.events
    assert (t.state.stacks, t.state.board, t.state.actor, t.state.version) == (
        s.stacks,
        s.board,
        s.actor,
        s.version,
    )


def test_nk_ex_16_timeout_checks_when_free_else_folds(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-EX-16 / NK-7.2 / NK-A4: time-out facing a bet folds; with nothing to call it checks."""
    from pokerrules.multiplayer import timeout_action

    h = hand({1: 5000, 2: 5000}, button=1)
    assert timeout_action(h.state.legal_actions()) == Action.fold()
    h.play((1, Action.call()))
    assert timeout_action(h.state.legal_actions()) == Action.check()
    h.play((2, timeout_action(h.state.legal_actions())))
    assert h.state.street == 1  # the automatic action is an ordinary, legal action


def test_void_returns_every_committed_chip(hand) -> None:  # type: ignore[no-untyped-def]
    """A hand that cannot resume is voided and every chip committed to it is returned."""
    from pokerrules.multiplayer.events import HandVoided

    h = hand(SIX, button=1)
    h.play((4, Action.raise_to(300)), (5, Action.call()), (6, Action.fold()), (1, Action.call()))
    events = h.state.void()
    (voided,) = events
    assert isinstance(voided, HandVoided)
    assert dict(voided.refunds) == {2: 50, 3: 100, 4: 300, 5: 300, 1: 300}
    assert dict(voided.stacks) == SIX and h.state.finished
    assert refused(h.state, 2, Action.call()) == "HAND_OVER"


def test_amounts_are_whole_chips(hand) -> None:  # type: ignore[no-untyped-def]
    """Chips are integers: a fractional or non-numeric raise is refused with INVALID_AMOUNT."""
    h = hand(SIX, button=1)
    assert refused(h.state, 4, Action(ActionKind.RAISE, 250.5)) == "INVALID_AMOUNT"  # type: ignore[arg-type]
    assert refused(h.state, 4, Action(ActionKind.RAISE, True)) == "INVALID_AMOUNT"


def test_nk_3_7_pot_limit_all_in_offered_only_within_the_pot_size_raise() -> None:
    """NK-3.7: at Pot-Limit a stack above the pot-size raise may not go all-in; the view says so, and the
    ALL_IN command is refused ABOVE_POT_LIMIT; a stack within the cap may (NK-12.6), and at No-Limit always."""
    from pokerrules.multiplayer import start_hand

    t = start_hand(
        GameConfig.plo(10, 20), {1: 1000, 2: 1000, 3: 1000, 4: 1000}, 1, list(range(52)), lambda h, b: 0
    )
    la = t.state.legal_actions()
    assert (la.seat, la.max_to, la.all_in_to, la.can_all_in) == (4, 70, 1000, False)
    assert refused(t.state, 4, Action.all_in()) == "ABOVE_POT_LIMIT"
    t = start_hand(
        GameConfig.plo(10, 20), {1: 1000, 2: 1000, 3: 1000, 4: 60}, 1, list(range(52)), lambda h, b: 0
    )
    la = t.state.legal_actions()
    assert (la.all_in_to, la.can_all_in) == (60, True)
    t = start_hand(
        GameConfig.nlhe(10, 20), dict.fromkeys(range(1, 5), 1000), 1, list(range(52)), lambda h, b: 0
    )
    assert t.state.legal_actions().can_all_in
