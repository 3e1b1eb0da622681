"""A platform, as real processes, for each suite module (the auth matrix, the fuzz): what one suite's calls
change never meets the other's. The fault proxy starts its own, behind its proxies."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.suites.identity import Identity
from tests.suites.stack import Rpc, Stack, reflect
from tests.suites.world import QUIET_ENV, World, build_world


@pytest.fixture(scope="module")
def identity() -> Iterator[Identity]:
    """The players' identity provider every service of the platform trusts."""
    with Identity() as provider:
        yield provider


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory, identity: Identity) -> Iterator[World]:
    stack = Stack(tmp_path_factory.mktemp("suites"), env={**QUIET_ENV, **identity.env()}).start()
    try:
        yield build_world(stack)
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def rpcs(platform: World) -> list[Rpc]:
    found = list(reflect(platform.stack))
    assert len(found) > 40, [r.name for r in found]
    return found
