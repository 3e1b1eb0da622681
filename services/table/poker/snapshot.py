"""A table between hands as JSON (the store's snapshot), and back. The hand in progress is not in it: it is
rebuilt from the hand log (the core is deterministic given the cards). Nor are the invitations: they are
rows of their own (`TableStore.invitations`), so inviting never rewrites the snapshot. A Naiko table's
snapshot holds every seated player's Destellos (they are kept between hands, NK-5.3); the powers' state
of a hand is rebuilt with the hand. The next hand's committed shoe with the seeds given for it, and the
last hand still to reveal, are kept too (`pokerrules.table.fairness`)."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from pokerrules.table import Blinds, Seat, TableConfig, TableState, fairness


def to_snapshot(state: TableState) -> dict[str, Any]:
    assert not state.hand_in_progress
    return {
        "seats": {str(n): asdict(s) for n, s in state.seats.items()},
        "button": state.button,
        "hand_number": state.hand_number,
        "chips_bought_in": state.chips_bought_in,
        "chips_returned": state.chips_returned,
        "level": asdict(state.level) if state.level is not None else None,
        "released_through": state.released_through,
        "closed": state.closed,
        **({"destellos": {str(n): d for n, d in state.naiko.destellos.items()}} if state.naiko else {}),
        "fairness": fairness.to_json(state.commitment, state.unrevealed, state.dealt_shoe),
    }


def from_snapshot(
    config: TableConfig, body: dict[str, Any] | None, invited: frozenset[str] = frozenset()
) -> TableState:
    state = replace(TableState.create(config), invited=invited)
    if body is None:
        return state
    seats = {int(n): Seat(**s) for n, s in body["seats"].items()}
    naiko = state.naiko
    if naiko is not None:  # a seat the snapshot has no balance for (one written before Naiko): 0
        held = body.get("destellos") or {}
        naiko = naiko.replace(destellos={n: int(held.get(str(n), 0)) for n in seats})
    commitment, unrevealed, dealt_shoe = fairness.from_json(body.get("fairness") or {})
    return replace(
        state,
        commitment=commitment,
        unrevealed=unrevealed,
        dealt_shoe=dealt_shoe,
        naiko=naiko,
        seats=seats,
        button=body["button"],
        hand_number=int(body["hand_number"]),
        chips_bought_in=int(body["chips_bought_in"]),
        chips_returned=int(body["chips_returned"]),
        level=Blinds(**body["level"]) if body.get("level") else None,
        released_through=int(body.get("released_through", 0)),
        closed=bool(body.get("closed", False)),
    )
