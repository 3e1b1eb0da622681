"""`felt keys list | rotate [--grace S | --activate] | activate KID | retire KID [--force]`: Felt's key set.

Rotation without downtime: `rotate` adds a key and publishes it at once (keyset.json, jwks.json, every
service's /.well-known/jwks.json); it signs from a grace period later (every process has reloaded the set
by then), or at once with --activate (one host: processes reload a set they see a new kid of at once).
The key it replaces keeps verifying; `retire` removes it once the last token it signed has expired.
Services pick up every change without a restart.

The key set is FELT_AUTH_KEYSET_DIR's, or (development) the data directory's `keys/`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from servicekit import auth, keyset
from servicekit.config import ConfigError, data_dir, setting


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("keys", help="list, rotate and retire Felt's signing keys")
    parser.add_argument(
        "--dir", help="the key set directory (FELT_AUTH_KEYSET_DIR; default: <data dir>/keys)"
    )
    parser.add_argument("--data-dir", help="local state directory (FELT_DATA_DIR)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="the keys, which one signs, and when each may be retired")
    rotate = actions.add_parser("rotate", help="add a new signing key (published now, signing later)")
    when = rotate.add_mutually_exclusive_group()
    when.add_argument(
        "--grace",
        type=float,
        default=keyset.DEFAULT_GRACE_SECONDS,
        help=f"seconds before the new key signs (default {keyset.DEFAULT_GRACE_SECONDS})",
    )
    when.add_argument("--activate", action="store_true", help="sign with the new key at once")
    activate = actions.add_parser("activate", help="make a published key the signing key now")
    activate.add_argument("kid")
    retire = actions.add_parser("retire", help="remove a key once its last token has expired")
    retire.add_argument("kid")
    retire.add_argument("--force", action="store_true", help="even if its tokens may still be valid")
    parser.set_defaults(func=run)


def keyset_dir(args: argparse.Namespace) -> Path:
    if args.dir:
        return Path(args.dir).expanduser().resolve()
    if args.data_dir:
        os.environ["FELT_DATA_DIR"] = args.data_dir
    configured = setting("FELT_AUTH_KEYSET_DIR", "")
    return Path(configured) if configured else data_dir() / auth.DEV_KEYSET_DIR


def run(args: argparse.Namespace) -> int:
    directory = keyset_dir(args)
    try:
        keyset.ensure(directory)  # a development data directory's set, or a new production one
        if args.action == "rotate":
            key = keyset.rotate(directory, 0 if args.activate else args.grace)
            print(f"added {key.kid}: signs from {_when(key.signs_from)}")
        elif args.action == "activate":
            key = keyset.activate(directory, args.kid)
            print(f"{key.kid} signs from now")
        elif args.action == "retire":
            key = keyset.retire(directory, args.kid, force=args.force)
            print(f"retired {key.kid}: its tokens are refused from now")
        for line in keyset.describe(keyset.read(directory), time.time()):
            print(line)
    except ConfigError as exc:
        print(f"felt: {exc}", file=sys.stderr)
        return 2
    return 0


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))
