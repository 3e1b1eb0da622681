"""`python -m services.evaluator [--port N] [--metrics-port M]`: the same as `felt serve evaluator`."""

import sys

from felt.cli import main

sys.exit(main(["serve", "evaluator", *sys.argv[1:]]))
