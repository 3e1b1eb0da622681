"""`felt play` keeps a valid player token for as long as the session lasts (issue 13, finding 2): signed
with the development key it is renewed before it expires; one given with --token cannot be, and the
player is warned before it expires. Virtual clock, tokens checked as a service checks them."""

from __future__ import annotations

from pathlib import Path

from felt.commands.play import player_token
from servicekit import auth


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_dev_key_token_is_renewed_across_lifetimes(tmp_path: Path) -> None:
    keys, clock, warnings = auth.load_keys(tmp_path), Clock(), []
    source = player_token(None, keys, "ana", warnings.append, clock=clock)
    for _ in range(3 * 12):  # three 12 h lifetimes, hour by hour
        clock.now += 3600
        assert auth.verify_token(keys, source(), now=clock.now) == auth.Caller("ana", auth.Role.PLAYER)
    assert warnings == []


def test_a_given_token_warns_before_it_expires(tmp_path: Path) -> None:
    keys, clock, warnings = auth.load_keys(tmp_path), Clock(), []
    given = auth.issue_token(keys, "ana", auth.Role.PLAYER, 3600, now=clock.now)
    source = player_token(given, None, "ana", warnings.append, clock=clock)
    clock.now += 2900
    assert source() == given and warnings == []
    clock.now += 200  # 500 s left
    assert source() == given
    source()
    assert warnings == ["your token expires in about 8 min and cannot be renewed here"]
    clock.now += 600
    source()
    assert len(warnings) == 2 and "expired" in warnings[1]
