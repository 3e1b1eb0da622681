"""The director's indexes (issue 25: fields of 250,000) change nothing it decides: on random fields the
director and a straightforward reference, which builds the set of tables to break and scans it on every
change as the director did before the indexes, emit the same events and instructions, command by command.
A snapshot pickled before the indexes existed loads and goes on the same way."""

from __future__ import annotations

import pickle
from itertools import islice

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pokerrules.tournament import Outcome, Phase, Register, Tournament, TournamentSpec
from pokerrules.tournament.commands import Command
from pokerrules.tournament.director import _NONE, Table
from pokerrules.tournament.indexes import Doomed


class ReferenceTournament(Tournament):
    """The tables to break as a set of the last tables opened, rebuilt and scanned on every change; every
    table between hands looked at for balancing and arrivals."""

    def _doomed(self) -> set[str]:  # type: ignore[override]
        needed = max(1, -(-self.alive // self.spec.seats_per_table))
        extra = len(self.tables) - needed
        return set(islice(reversed(self.tables), extra)) if extra > 0 else set()

    def _break_tables(self) -> None:
        doomed = self._doomed()
        for table_id in sorted(doomed, key=lambda t: -self.tables[t].number):
            table: Table = self.tables[table_id]
            if not table.playing:
                self._break(table, doomed)

    def _balance(self) -> None:
        doomed = self._doomed()
        for table_id in sorted(self.waiting, key=lambda t: -self.tables[t].count):
            if table_id in self.tables and table_id not in doomed:
                self._balance_from(self.tables[table_id], doomed)

    def _waiting_in_order(self, tables):  # type: ignore[no-untyped-def]
        return [t for t in self.waiting if t in tables]

    def _extreme_counts(self, exclude=_NONE) -> tuple[int, int]:  # type: ignore[no-untyped-def]
        counts = [t.count for tid, t in self.tables.items() if tid not in exclude]
        return min(counts), max(counts)


def _recording(driver_cls, t: Tournament):  # type: ignore[no-untyped-def]
    """A driver of `t` that keeps every outcome."""

    class Recording(driver_cls):  # type: ignore[misc, valid-type]
        outcomes: list[Outcome]

        def run(self, command: Command) -> Outcome:
            out = super().run(command)
            self.outcomes.append(out)
            return out

    return Recording


def _play(
    driver, tournament_cls: type[Tournament], spec: TournamentSpec, players: int, seed: int, snapshot_at: int
):  # type: ignore[no-untyped-def]
    cls = _recording(driver, Tournament)
    d = cls(spec, seed, bust_chance=0.06)
    d.outcomes = []
    d.t = tournament_cls(spec, now=0)
    d.register(f"p{k}" for k in range(players))
    d.tick(spec.starts_at)
    hands = 0

    def step(d) -> None:  # type: ignore[no-untyped-def]
        nonlocal hands
        hands += 1
        if hands % 40 == 0:
            d.tick(7 * 60_000)  # levels and breaks go by
        if hands % 25 == 0 and d.t.phase is Phase.RUNNING:
            try:  # late entries and re-entries open tables at the end while others wait to break
                d.run(_register(d, f"late{hands}"))
            except Exception as refusal:
                if type(refusal).__name__ != "TournamentError":
                    raise
        if hands == snapshot_at:  # a snapshot from before the indexes: rebuilt on load
            for name in (
                "open_numbers",
                "min_numbers",
                "waiting_seq",
                "waiting_next",
                "waiting_by_count",
                "arriving",
            ):
                del d.t.__dict__[name]
            d.t = pickle.loads(pickle.dumps(d.t))

    d.play_out(step)
    return d


def _register(d, player: str) -> Register:  # type: ignore[no-untyped-def]
    d.now += 1
    return Register(d.now, player)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(players=st.integers(2, 700), seats=st.integers(3, 10), seed=st.integers(0, 2**32))
@example(players=700, seats=9, seed=1)
@example(players=477, seats=5, seed=477)
def test_the_indexed_director_decides_as_the_reference(driver, players: int, seats: int, seed: int) -> None:  # type: ignore[no-untyped-def]
    spec = TournamentSpec.scheduled(
        starts_at=10_000,
        seats_per_table=seats,
        max_entries=100_000,
        late_registration_levels=4,
        re_entries=1,
    )
    snapshot_at = 1 + seed % 200
    fast = _play(driver, Tournament, spec, players, seed, snapshot_at)
    slow = _play(driver, ReferenceTournament, spec, players, seed, snapshot_at)
    assert fast.t.phase is Phase.FINISHED
    assert len(fast.outcomes) == len(slow.outcomes)
    for k, (a, b) in enumerate(zip(fast.outcomes, slow.outcomes, strict=True)):
        assert a == b, f"command {k} differs"


def test_doomed_is_the_last_tables_opened() -> None:
    numbers = [1, 2, 4, 7, 9]
    assert list(Doomed(numbers, 3)) == ["t9", "t7"]
    assert "t7" in Doomed(numbers, 3) and "t4" not in Doomed(numbers, 3) and "t10" not in Doomed(numbers, 3)
    assert not Doomed(numbers, 5) and list(Doomed(numbers, 5)) == [] and "t9" not in Doomed(numbers, 5)
    assert len(Doomed(numbers, 1)) == 4 and "x9" not in Doomed(numbers, 1)
