"""Hypothesis state machine: random legal and illegal commands against the engine, with invariants.

Invariants (issue "Tests that must exist"): chips are conserved at every step, no stack is negative, the
legal-action view agrees with the rules, every command the view allows is accepted and every other one is
refused with a reason and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from pokerrules.multiplayer import (
    Action,
    ActionKind,
    GameConfig,
    HandState,
    IllegalAction,
    Limit,
    apply,
    next_button,
    start_hand,
)
from pokerrules.multiplayer.events import HandEnded, PotAwarded


def coarse_rank(hole: Sequence[int], board: Sequence[int]) -> int:
    # Few distinct strengths so that split pots and odd chips happen often.
    return (hole[0] + hole[1] + sum(board)) % 3


def predicted_legal(s: HandState, seat: int, action: Action) -> bool:
    """What the rules allow, computed from the legal-action view (the oracle for accept/refuse)."""
    la = s.legal_actions()
    if s.finished or la is None or la.seat != seat:
        return False
    kind = action.kind
    if kind is ActionKind.FOLD:
        return la.can_fold
    if kind is ActionKind.CHECK:
        return la.can_check
    if kind is ActionKind.CALL:
        return la.can_call
    if kind is ActionKind.ALL_IN:
        return la.call_amount == la.stack or (la.can_bet_or_raise and la.max_to == la.all_in_to)
    return kind is la.bet_kind and la.can_bet_or_raise and la.min_to <= action.amount <= la.max_to


class EngineMachine(RuleBasedStateMachine):
    state: HandState
    total: int

    @initialize(
        data=st.data(),
        n=st.integers(2, 10),
        omaha=st.booleans(),
        big_blind=st.sampled_from([2, 10, 100]),
        ante_share=st.sampled_from([0, 0, 1, 2]),  # big blind ante: none, half or the whole big blind
    )
    def new_hand(self, data: st.DataObject, n: int, omaha: bool, big_blind: int, ante_share: int) -> None:
        seats = data.draw(st.lists(st.integers(1, 10), min_size=n, max_size=n, unique=True), label="seats")
        stacks = {s: data.draw(st.integers(1, 60 * big_blind), label=f"stack{s}") for s in seats}
        button = data.draw(st.sampled_from(sorted(seats)), label="button")
        deck = data.draw(st.permutations(range(52)), label="deck")
        config = (GameConfig.plo if omaha else GameConfig.nlhe)(
            big_blind // 2, big_blind, big_blind * ante_share // 2
        )
        t = start_hand(config, stacks, button, deck, coarse_rank)
        self.state = t.state
        self.total = sum(stacks.values())
        self.events = list(t.events)

    @precondition(lambda self: self.state.finished and sum(1 for x in self.state.stacks if x > 0) >= 2)
    @rule(deck=st.permutations(range(52)))
    def next_hand(self, deck: list[int]) -> None:
        """MP-6.8: the next hand at the same table, stacks carried over, the button one seat on."""
        s = self.state
        stacks = {seat: stack for seat, stack in zip(s.seats, s.stacks, strict=True) if stack > 0}
        button = next_button(list(stacks), s.button)
        t = start_hand(s.config, stacks, button, deck, coarse_rank)
        assert t.state.button == button
        self.state = t.state
        self.events = list(t.events)

    @precondition(lambda self: not self.state.finished)
    @rule(data=st.data())
    def legal_action(self, data: st.DataObject) -> None:
        la = self.state.legal_actions()
        assert la is not None
        options = []
        if la.can_fold:
            options.append(Action.fold())
        if la.can_check:
            options.append(Action.check())
        if la.can_call:
            options.append(Action.call())
        if la.can_bet_or_raise:
            amount = data.draw(st.integers(la.min_to, la.max_to), label="to")
            options.append(Action(la.bet_kind, amount))
        action = data.draw(st.sampled_from(options), label="action")
        t = apply(self.state, la.seat, action)
        self.state = t.state
        self.events.extend(t.events)

    @precondition(lambda self: not self.state.finished)
    @rule(void=st.integers(0, 9))
    def void_hand(self, void: int) -> None:
        """Now and then the hand is voided: every seat gets back exactly what it started with."""
        if void:
            return
        self.state.void()
        assert tuple(self.state.stacks) == self.state.starting_stacks

    @rule(
        seat=st.integers(0, 11),
        kind=st.sampled_from(list(ActionKind)),
        amount=st.integers(-5, 7000),
        to_act=st.booleans(),
    )
    def any_action(self, seat: int, kind: ActionKind, amount: int, to_act: bool) -> None:
        s = self.state
        if to_act and s.seat_to_act is not None:
            seat = s.seat_to_act
        action = Action(kind, amount)
        expected = predicted_legal(s, seat, action)
        before = (s.version, s.stacks[:], s.bets[:], s.contrib[:], s.folded[:], s.actor, s.board[:])
        try:
            t = apply(s, seat, action)
        except IllegalAction as refusal:
            assert not expected, f"legal {action} refused: {refusal.reason}"
            assert refusal.reason.isupper()
            assert (s.version, s.stacks, s.bets, s.contrib, s.folded, s.actor, s.board) == before
            return
        assert expected, f"illegal {action} by {seat} accepted"
        # Copy-on-write: the state the command was applied to is unchanged, the new one is a step on.
        assert (s.version, s.stacks, s.bets, s.contrib, s.folded, s.actor, s.board) == before
        assert t.state.version == s.version + 1
        self.state = t.state
        self.events.extend(t.events)

    @invariant()
    def chips_conserved_and_never_negative(self) -> None:
        s = self.state
        assert sum(s.stacks) + sum(s.contrib) == self.total
        assert min(s.stacks) >= 0 and min(s.bets) >= 0
        assert all(b <= c for b, c in zip(s.bets, s.contrib, strict=True))

    @invariant()
    def legal_view_consistent(self) -> None:
        s = self.state
        la = s.legal_actions()
        if s.finished:
            assert la is None
            assert sum(s.contrib) == 0 and sum(s.stacks) == self.total
            awarded = sum(a.amount for a in self.events if isinstance(a, PotAwarded))
            ended = [ev for ev in self.events if isinstance(ev, HandEnded)]
            assert len(ended) <= 1 and all(sum(net for _, net in ev.nets) == 0 for ev in ended)
            assert awarded <= self.total
            return
        assert la is not None
        i = s.seats.index(la.seat)
        assert not s.folded[i] and s.stacks[i] > 0  # MP-A3: folded and all-in players never act
        to_call = s.current_bet - s.bets[i]
        assert la.can_check == (to_call == 0) and la.can_fold == (to_call > 0)
        assert la.call_amount == min(max(to_call, 0), s.stacks[i])
        assert la.all_in_to == s.bets[i] + s.stacks[i]
        acted = s.acted_at[i]
        if acted >= 0 and s.current_bet - acted < s.last_full_raise:
            assert not la.can_bet_or_raise  # NK-3.5: not reopened for a player who already acted
        if la.can_bet_or_raise:
            assert la.min_to <= la.max_to <= la.all_in_to
            assert la.min_to > s.current_bet
            full_min = s.current_bet + max(s.last_full_raise, s.config.big_blind)
            assert la.min_to == full_min or la.min_to == la.all_in_to  # NK-3.2, NK-3.3, NK-3.5
            if s.config.limit is Limit.NO_LIMIT:
                assert la.max_to == la.all_in_to  # NK-3.1
            else:
                cap = s.current_bet + s.pot + to_call  # NK-3.7
                assert la.max_to == min(la.all_in_to, max(cap, la.min_to))


EngineMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestEngineStateMachine = EngineMachine.TestCase
