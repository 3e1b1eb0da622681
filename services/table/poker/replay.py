"""The table's commands as log entries, and back: `run(state, op, body, deck, rank)` applies one logged
command to the pure core exactly as it ran live (same inputs, same `now`), so a restarted service rebuilds
the hand in progress from the snapshot taken before it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pokerrules.multiplayer import Action, ActionKind, Ranker
from pokerrules.table import (
    TableState,
    Transition,
    act,
    apply_due,
    disconnect,
    invite,
    leave,
    reconnect,
    sit,
    sit_in,
    sit_out,
    start_next_hand,
    top_up,
    void_hand,
)


def action_body(action: Action) -> dict[str, Any]:
    return {"kind": action.kind.value, "amount": action.amount}


def run(
    state: TableState, op: str, body: dict[str, Any], deck: Sequence[int] | None, rank: Ranker
) -> Transition:
    """Apply one logged command. `deck` is needed for `start` only."""
    player = str(body.get("player", ""))
    now = int(body.get("now", 0))
    if op == "sit":
        code = body.get("code")
        return sit(
            state, player, int(body["seat"]), int(body["buy_in"]), is_bot=bool(body["is_bot"]), code=code
        )
    if op == "top_up":
        return top_up(state, player, int(body["amount"]))
    if op == "sit_out":
        return sit_out(state, player)
    if op == "sit_in":
        return sit_in(state, player)
    if op == "leave":
        return leave(state, player, now, str(body.get("reason", "LEFT")))
    if op == "invite":
        return invite(state, str(body["by"]), player)
    if op == "start":
        assert deck is not None
        return start_next_hand(state, deck, rank, now)
    if op == "act":
        return act(state, player, Action(ActionKind(body["kind"]), int(body["amount"])), now)
    if op == "due":
        return apply_due(state, now)
    if op == "disconnect":
        return disconnect(state, player, now)
    if op == "reconnect":
        return reconnect(state, player, now)
    if op == "void":
        return void_hand(state)
    raise ValueError(f"unknown logged command {op!r}")
