"""Issue 13, finding 12: the files that hold decks, hole cards and keys were created world-readable
(0644 under the usual umask 022). Started here under that umask, every service creates its files 0600 in
a 0700 data directory, and tightens those an earlier version left open."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A short path (the dealer's worker sockets live in it), made as people make it: 0755, umask 022."""
    before = os.umask(0o022)
    path = Path(tempfile.mkdtemp(prefix="felt-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        os.umask(before)
        for root, dirs, names in os.walk(path, topdown=False):
            for name in names:
                Path(root, name).unlink()
            for name in dirs:
                Path(root, name).rmdir()
        path.rmdir()


def _loose(root: Path) -> list[str]:
    """Everything under `root` (itself included) that the group or others may read, write or enter."""
    found = []
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        regular = stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)
        if regular and stat.S_IMODE(info.st_mode) & 0o077:
            found.append(f"{path.relative_to(root)} {stat.S_IMODE(info.st_mode):o}")
    return found


def test_every_service_creates_its_data_files_for_its_own_user_only(data_dir: Path) -> None:
    old_database = data_dir / "casino.sqlite3"  # left by an earlier version, readable by all
    old_database.touch()
    old_database.chmod(0o644)
    dealer_worker = config_for_tests("dealer", data_dir, workers=2, worker_index=0)
    with (
        running(dealer_spec, dealer_worker) as dealer,
        running(wallet_spec, config_for_tests("wallet", data_dir)) as wallet,
        running(
            table_spec,
            config_for_tests(
                "table",
                data_dir,
                dealer_address=dealer.address,
                wallet_address=wallet.address,
                poker_tables=parse_tables("hu:NLHE:50/100:2000-10000:6"),
            ),
        ),
    ):
        ops = wpb_grpc.WalletServiceStub(wallet.channel("ops", Role.OPERATOR))
        ops.CreateAccount(
            wpb.CreateAccountRequest(request_id="r1", kind=wpb.ACCOUNT_KIND_PLAYER, owner="ana")
        )
        names = {str(p.relative_to(data_dir)) for p in data_dir.rglob("*")}
        for expected in (
            "tables.sqlite3",
            "tables.sqlite3-wal",
            "casino.sqlite3-wal",
            "keys/keyset.json",  # the development key set (and a keys/<kid>.pem per key)
        ):
            assert expected in names, sorted(names)
        assert any(n.startswith("wallet") and n.endswith("-wal") for n in names), sorted(names)
        assert any(n.startswith("dealer-workers/") for n in names), sorted(names)
        assert _loose(data_dir) == []
