"""`python -m services.table [--port N] [--metrics-port M]`: the same as `felt serve table`."""

import sys

from felt.cli import main

sys.exit(main(["serve", "table", *sys.argv[1:]]))
