"""Subcommands of `felt`; each module defines `register(subparsers)`."""
