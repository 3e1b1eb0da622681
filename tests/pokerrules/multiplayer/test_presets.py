"""Bet sizing presets: MP-4.11 to MP-4.13 with the chosen reading MP-A6, worked example MP-EX-4."""

from __future__ import annotations

from pokerrules.multiplayer import Action, ActionKind
from pokerrules.multiplayer.presets import raw_bet_preset, raw_raise_preset, sizing


def test_mp_ex_4_bet_presets_are_percentages_of_the_pot() -> None:
    """MP-EX-4: pot 300 at the start of the flop: 33 % → 99, 50 % → 150, 100 % → 300."""
    assert [raw_bet_preset(300, p) for p in (33, 50, 100)] == [99, 150, 300]


def test_mp_ex_4_raise_presets_are_multiples_of_the_current_bet() -> None:
    """MP-EX-4: facing 150, 2× → 300 and 3× → 450; pre-flop facing the BB of 100, 2× → 200, 3× → 300."""
    assert [raw_raise_preset(150, m) for m in (2, 3)] == [300, 450]
    assert [raw_raise_preset(100, m) for m in (2, 3)] == [200, 300]


def test_mp_ex_4_presets_in_a_hand(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-4 through the engine: flop pot 300 → 99/150/300 offered, each resolved to a legal amount."""
    h = hand({1: 10_000, 2: 10_000, 3: 10_000}, button=1)
    s = sizing(h.state.legal_actions(), multiples=(2, 3))
    assert s is not None and s.kind is ActionKind.RAISE
    assert [(p.label, p.amount) for p in s.presets] == [("2x", 200), ("3x", 300)]
    h.play((1, Action.call()), (2, Action.call()), (3, Action.check()))
    s = sizing(h.state.legal_actions(), percents=(33, 50, 100))
    assert s is not None and s.kind is ActionKind.BET and (s.min_to, s.max_to) == (100, 9900)
    # 99 is below the minimum opening bet (NK-3.2): resolved up to the big blind.
    assert [(p.label, p.amount) for p in s.presets] == [("33%", 100), ("50%", 150), ("100%", 300)]
    h.play((2, Action.bet(150)))
    s = sizing(h.state.legal_actions(), multiples=(2, 3))
    assert [(p.label, p.amount) for p in s.presets] == [("2x", 300), ("3x", 450)]


def test_presets_never_exceed_the_stack(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-A6 / NK-3.4: presets are moved into the legal range; a short stack's presets are its all-in."""
    h = hand({1: 250, 2: 10_000, 3: 10_000}, button=1)
    s = sizing(h.state.legal_actions(), multiples=(2, 3, 4))
    assert s is not None and (s.min_to, s.max_to) == (200, 250)
    assert [p.amount for p in s.presets] == [200, 250, 250]
    for p in s.presets:
        assert s.min_to <= p.amount <= s.max_to
