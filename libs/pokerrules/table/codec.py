"""Table commands as log entries and back: `(op, body)` with `op` the command's type name and `body` its
fields as JSON values. `decode(*encode(command)) == command` for every command; the service stores
entries as they are and a restarted service replays them through `handle`.

Entries written before commands were typed (`sit`, `act`, `due`, ... with the fields of the old bodies)
are still read, so a hand in progress across an upgrade resumes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pokerrules.multiplayer.actions import Action, ActionKind
from pokerrules.naiko import Power
from pokerrules.table import commands as c

_BY_NAME: dict[str, type[c.Command]] = {cls.__name__: cls for cls in c.COMMANDS}


def encode(command: c.Command) -> tuple[str, dict[str, Any]]:
    body: dict[str, Any] = {}
    for f in dataclasses.fields(command):
        value = getattr(command, f.name)
        if isinstance(value, Action):
            value = {"kind": value.kind.value, "amount": value.amount}
        elif isinstance(value, Power):
            value = value.value
        elif isinstance(value, tuple):
            value = _lists(value)
        body[f.name] = value
    return type(command).__name__, body


def decode(op: str, body: dict[str, Any]) -> c.Command:
    """The command of a log entry (extra keys such as `now` are ignored)."""
    cls = _BY_NAME.get(op)
    if cls is None:
        return _legacy(op, body)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in body:
            continue  # a field added later keeps its default
        value = body[f.name]
        if f.name == "action":
            value = Action(ActionKind(value["kind"]), int(value["amount"]))
        elif f.name == "power":
            value = Power(value)
        elif isinstance(value, list):
            value = _tuples(value)
        values[f.name] = value
    return cls(**values)


def _lists(value: Any) -> Any:
    return [_lists(v) for v in value] if isinstance(value, tuple) else value


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _legacy(op: str, body: dict[str, Any]) -> c.Command:
    player = str(body.get("player", ""))
    if op == "sit":
        return c.Sit(player, int(body["seat"]), int(body["buy_in"]), bool(body["is_bot"]), body.get("code"))
    if op == "top_up":
        return c.TopUp(player, int(body["amount"]))
    if op == "sit_out":
        return c.SitOut(player)
    if op == "sit_in":
        return c.SitIn(player)
    if op == "leave":
        return c.Leave(player, str(body.get("reason", "LEFT")))
    if op == "invite":
        return c.Invite(str(body["by"]), (player,))
    if op == "start":
        return c.StartHand(str(body["shoe_id"]), int(body["count"]))
    if op == "act":
        return c.Act(player, Action(ActionKind(body["kind"]), int(body["amount"])))
    if op == "due":
        return c.ApplyDue()
    if op == "disconnect":
        return c.Disconnect(player)
    if op == "reconnect":
        return c.Reconnect(player)
    if op == "void":
        return c.VoidHand()
    raise ValueError(f"unknown logged command {op!r}")
