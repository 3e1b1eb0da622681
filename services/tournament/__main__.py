"""`python -m services.tournament [--port N] [--metrics-port M]`: the same as `felt serve tournament`."""

import sys

from felt.cli import main

sys.exit(main(["serve", "tournament", *sys.argv[1:]]))
