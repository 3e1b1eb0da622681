"""`python -m services.dealer [--port N] [--metrics-port M]`: the same as `felt serve dealer`."""

import sys

from felt.cli import main

sys.exit(main(["serve", "dealer", *sys.argv[1:]]))
