"""Hypothesis state machine: random commands against the director, legal and illegal, with invariants.

Every legal command keeps the director's account valid (chips conserved, every player in play at exactly
one table or on the way to one, counts consistent, the tables' view matching the director's); every
refused command raises `TournamentError` with a reason and changes nothing.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from pokerrules.tournament import (
    Cancel,
    HandFinished,
    Pause,
    Phase,
    Register,
    Resume,
    Start,
    TimePassed,
    TournamentError,
    TournamentSpec,
    Unregister,
)
from pokerrules.tournament.seating import coming_roles

from .conftest import Driver, state_of

NAMES = [f"p{k}" for k in range(40)]
MINUTE = 60_000


class DirectorMachine(RuleBasedStateMachine):
    d: Driver

    @initialize(
        seats=st.integers(3, 7),
        seed=st.integers(0, 2**32),
        late=st.integers(0, 3),
        re_entries=st.integers(0, 2),
        field=st.integers(0, 30),
    )
    def create(self, seats: int, seed: int, late: int, re_entries: int, field: int) -> None:
        spec = TournamentSpec.scheduled(
            starts_at=30 * MINUTE,
            seats_per_table=seats,
            late_registration_levels=late,
            re_entries=re_entries if late else 0,
            min_entries=4,
        )
        self.d = Driver(spec, seed, bust_chance=0.15)
        self.d.register(NAMES[:field])  # most runs start with a field, some build it rule by rule

    def attempt(self, command: object) -> None:
        before = state_of(self.d.t)
        try:
            self.d.run(command)  # type: ignore[arg-type]
        except TournamentError as refusal:
            assert refusal.reason.isupper()
            assert state_of(self.d.t) == before, f"refused {command} changed the state"

    @rule(name=st.sampled_from(NAMES))
    def register(self, name: str) -> None:
        self.d.now += 1
        self.attempt(Register(self.d.now, name))

    @rule(name=st.sampled_from(NAMES))
    def unregister(self, name: str) -> None:
        self.d.now += 1
        self.attempt(Unregister(self.d.now, name))

    @rule(ms=st.sampled_from([1, 1_000, 5 * MINUTE, 20 * MINUTE]))
    def time_passes(self, ms: int) -> None:
        self.d.now += ms
        self.attempt(TimePassed(self.d.now))

    @rule()
    def start(self) -> None:
        self.attempt(Start(self.d.now))

    @precondition(lambda self: bool(self.d.playing()))
    @rule(data=st.data())
    def a_hand_ends(self, data: st.DataObject) -> None:
        table = data.draw(st.sampled_from(sorted(self.d.playing())))
        self.d.finish(table)

    @precondition(lambda self: bool(self.d.playing()))
    @rule(data=st.data(), flaw=st.sampled_from(["stack", "seat", "hand", "chips", "player"]))
    def a_wrong_result_is_refused(self, data: st.DataObject, flaw: str) -> None:
        from pokerrules.tournament import HandResult, SeatResult

        table_id = data.draw(st.sampled_from(sorted(self.d.playing())))
        model = self.d.tables[table_id]
        seats = sorted(model.seats)
        roles = coming_roles(seats, model.last_button)
        rows = [
            SeatResult(s, str(model.seats[s][0]), int(model.seats[s][1]), int(model.seats[s][1]))
            for s in seats
        ]  # type: ignore[call-overload]
        result = HandResult(table_id, model.playing, roles.button, roles.big_blind, tuple(rows))
        if flaw == "stack":
            rows[0] = replace(
                rows[0],
                starting_stack=rows[0].starting_stack + 1,
                finishing_stack=rows[0].finishing_stack + 1,
            )
        elif flaw == "seat":
            rows.pop()
        elif flaw == "chips":
            rows[0] = replace(rows[0], finishing_stack=rows[0].finishing_stack + 7)
        elif flaw == "player":
            rows[0] = replace(rows[0], player="intruder")
        result = replace(result, seats=tuple(rows))
        if flaw == "hand":
            result = replace(result, hand_number=model.playing + 1)
        before = state_of(self.d.t)
        try:
            self.d.t.apply(HandFinished(self.d.now, result), self.d.draw)
        except TournamentError as refusal:
            assert refusal.reason in ("RESULT_MISMATCH", "UNEXPECTED_HAND")
        else:
            raise AssertionError(f"a result with a wrong {flaw} was accepted")
        assert state_of(self.d.t) == before

    @rule(kind=st.sampled_from(["pause", "resume", "pause", "resume", "cancel"]), cancel=st.integers(0, 15))
    def operator(self, kind: str, cancel: int) -> None:
        self.d.now += 1
        if kind == "pause":
            self.attempt(Pause(self.d.now))
        elif kind == "resume":
            self.attempt(Resume(self.d.now))
        elif cancel == 0:
            self.attempt(Cancel(self.d.now))

    @invariant()
    def account_is_valid(self) -> None:
        t = self.d.t
        event(f"phase {t.phase.value}")
        if t.phase is not Phase.RUNNING:
            if t.phase in (Phase.FINISHED, Phase.CANCELLED):
                assert not t.tables and not self.d.tables
            return
        in_play = [x for x in t.entries.values() if not x.out]
        assert len(in_play) == t.alive == len(t.live)
        # Chips: every entry's stack, seated or on the way, adds up to what was bought.
        assert sum(x.stack for x in in_play) == t.spec.starting_stack * len(t.entries)
        assert min((x.stack for x in in_play), default=1) > 0
        hist = [0] * (t.spec.seats_per_table + 1)
        placed: dict[str, str] = {}
        for table in t.tables.values():
            hist[table.count] += 1
            assert table.count <= t.spec.seats_per_table
            for entry_id in [*table.seats.values(), *table.arrivals]:
                assert entry_id not in placed, "an entry in two places"
                placed[entry_id] = table.id
            assert (table.id in t.waiting) != table.playing
            if not table.playing:
                assert {s: self.d.tables[table.id].seats[s][0] for s in table.seats} == {
                    s: t.entries[e].player for s, e in table.seats.items()
                }
        assert hist == t.count_hist
        assert set(placed) == {x.id for x in in_play}
        for entry in in_play:
            assert entry.table == placed[entry.id]


DirectorMachine.TestCase.settings = settings(
    max_examples=80,
    stateful_step_count=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestDirectorStateMachine = DirectorMachine.TestCase
