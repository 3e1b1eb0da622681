"""Files that hold decks and hole cards are for this service's user alone: 0600 files in a 0700 directory.

The SQLite databases (and their -wal and -shm files, which SQLite creates with the database's own
mode), the dealer's claim table and sockets, the development keys and the service logs all live in the
data directory. A service process creates every file with the umask 077, and at start tightens what an
earlier version left readable by others.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600


def private_files() -> None:
    """From now on this process (and the processes it starts) creates files 0600 and directories 0700."""
    os.umask(PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """`path` as a directory only its owner can enter (created if missing)."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    _tighten(path, DIR_MODE)
    return path


def secure_data_dir(path: Path) -> list[Path]:
    """Make `path` 0700 and every file and directory under it private; the paths it could not change
    (not this user's, e.g. a volume's root mounted with an fsGroup)."""
    stuck = [] if _tighten(path, DIR_MODE) else [path]
    for root, dirs, files in os.walk(path):
        for name in dirs:
            if not _tighten(Path(root, name), DIR_MODE):
                stuck.append(Path(root, name))
        for name in files:
            if not _tighten(Path(root, name), FILE_MODE):
                stuck.append(Path(root, name))
    return stuck


def _tighten(path: Path, mode: int) -> bool:
    """Drop the group's and others' bits of `path` (a regular file or directory, never a link)."""
    try:
        info = path.lstat()
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            return True  # sockets get the umask's mode when made; links are not followed
        if stat.S_IMODE(info.st_mode) & ~mode:
            path.chmod(stat.S_IMODE(info.st_mode) & mode)
    except FileNotFoundError:  # removed meanwhile (a worker's socket, a temporary file)
        return True
    except OSError:  # not ours, or a read-only file system
        return False
    return True
