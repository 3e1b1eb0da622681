"""The director's state is changed in place (a copy per change cost O(field): ~100 ms at 10,000 entries),
so a change that does not commit must leave the state as the log has it: `Running.restore` rebuilds it
from the last snapshot and the commands after it. Against a real store (SQLite); no table or wallet is
called (a scheduled tournament without buy-in that never starts)."""

from __future__ import annotations

import pickle
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from pokerrules.tournament.director import Tournament
from pokerrules.tournament.errors import TournamentError
from pokerrules.tournament.spec import TournamentSpec

from services.tournament.runtime import Deps, Hub, Running
from services.tournament.store import TournamentStore


@pytest.fixture
def hub(store: TournamentStore) -> Iterator[Hub]:
    made = Hub(Deps(tables=None, wallet=None, dealer=None, store=store, clock=lambda: 1_000))  # type: ignore[arg-type]
    yield made
    made.stop()


def free_tournament(hub: Hub) -> Running:
    spec = TournamentSpec.scheduled(starts_at=10**12, buy_in=0, fee=0, max_entries=50)
    tid = f"tn_{secrets.token_hex(4)}"
    data: dict[str, Any] = {
        "name": "in place",
        "spec": pickle.dumps(spec).hex(),
        "tables": {},
        "watch": {},
        "entries": {},
        "last_seq": 0,
        "commands": 0,
        "steps": 0,
        "intents": 0,
        "bots": 0,
    }
    hub.deps.store.create(tid, 0, "scheduled", "registering", data, None)
    running = Running(hub, tid, 0, Tournament(spec, now=0), data)
    hub.running[tid] = running
    return running


def entrants(running: Running) -> list[str]:
    return sorted(running.t.live)


def test_a_change_whose_commit_fails_leaves_the_state_as_the_log_has_it(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = free_tournament(hub)
    for k in range(3):
        hub.register(running, f"p{k}")
    assert entrants(running) == ["p0", "p1", "p2"]

    def down(change: Any) -> None:
        raise OSError("the store went away")

    monkeypatch.setattr(hub.deps.store, "commit", down)
    with pytest.raises(OSError):
        hub.register(running, "p3")
    assert entrants(running) == ["p0", "p1", "p2"]  # not ahead of the log
    monkeypatch.undo()
    hub.register(running, "p3")  # the same player registers once the store is back: nothing stale in the way
    assert entrants(running) == ["p0", "p1", "p2", "p3"]
    assert hub._rebuild(running.id) is not None
    assert entrants(hub._rebuild(running.id)) == entrants(running)  # type: ignore[arg-type]


def test_a_refused_change_changes_nothing_and_needs_no_restore(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = free_tournament(hub)
    hub.register(running, "p0")
    restores: list[int] = []
    monkeypatch.setattr(running, "restore", lambda: restores.append(1))
    with pytest.raises(TournamentError):
        hub.register(running, "p0")  # already registered: the core refuses it before changing anything
    assert entrants(running) == ["p0"] and restores == []


def test_a_state_that_cannot_be_restored_at_once_is_restored_before_its_next_use(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store away for the commit and for the read of the log after it: the state is marked ahead of
    the log, and nothing uses it before it is restored (the next change, a read)."""
    running = free_tournament(hub)
    hub.register(running, "p0")

    def down(*_args: Any) -> None:
        raise OSError("the store went away")

    monkeypatch.setattr(hub.deps.store, "commit", down)
    monkeypatch.setattr(hub.deps.store, "commands", down)
    with pytest.raises(OSError):
        hub.register(running, "p1")
    assert running.ahead
    with pytest.raises(OSError):
        hub.register(running, "p2")  # not applied to a state ahead of the log
    monkeypatch.undo()
    hub.refresh(running)  # a read restores it first
    assert not running.ahead and entrants(running) == ["p0"]
    hub.register(running, "p1")
    assert entrants(running) == ["p0", "p1"]
