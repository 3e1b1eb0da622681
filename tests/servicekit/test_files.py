"""Private data files (issue 13, finding 12): servicekit.files tightens what an earlier version left open
to others, without following links."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from servicekit import files


@pytest.fixture
def usual_umask() -> Iterator[None]:
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_the_data_directory_and_everything_in_it_become_private(tmp_path: Path, usual_umask: None) -> None:
    data = tmp_path / "data"
    (data / "keys").mkdir(parents=True)
    for name in ("tables.sqlite3", "tables.sqlite3-wal", "keys/auth-ed25519.pem"):
        (data / name).write_text("x")
        (data / name).chmod(0o644)
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours to change")
    outside.chmod(0o644)
    (data / "link").symlink_to(outside)
    assert files.secure_data_dir(data) == []
    assert _mode(data) == _mode(data / "keys") == 0o700
    assert {_mode(data / n) for n in ("tables.sqlite3", "tables.sqlite3-wal", "keys/auth-ed25519.pem")} == {
        0o600
    }
    assert _mode(outside) == 0o644  # a link is not followed


def test_new_files_and_directories_are_private(tmp_path: Path, usual_umask: None) -> None:
    created = files.private_dir(tmp_path / "new" / "data")
    assert _mode(created) == 0o700
    files.private_files()
    (created / "db").write_text("x")
    (created / "sub").mkdir()
    assert _mode(created / "db") == 0o600 and _mode(created / "sub") == 0o700
