"""`felt token --player alice | --service table | --operator`: print a development token."""

from __future__ import annotations

import argparse
import os
import sys

from servicekit import auth
from servicekit.config import ConfigError, data_dir


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("token", help="print a signed bearer token for development")
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--player", metavar="ID", help="a player's token")
    who.add_argument("--service", metavar="NAME", help="a service's token (table, tournament, ...)")
    who.add_argument("--operator", nargs="?", const="operator", metavar="NAME", help="an operator's token")
    parser.add_argument("--ttl", type=int, default=auth.DEFAULT_TTL_SECONDS, help="lifetime in seconds")
    parser.add_argument("--data-dir", help="local state directory (FELT_DATA_DIR)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.data_dir:
        os.environ["FELT_DATA_DIR"] = args.data_dir
    if args.player:
        subject, role = args.player, auth.Role.PLAYER
    elif args.service:
        subject, role = args.service, auth.Role.SERVICE
    else:
        subject, role = args.operator, auth.Role.OPERATOR
    try:
        keys = auth.load_keys(data_dir())
        print(auth.issue_token(keys, subject, role, args.ttl))
    except ConfigError as exc:
        print(f"felt: {exc}", file=sys.stderr)
        return 2
    return 0
