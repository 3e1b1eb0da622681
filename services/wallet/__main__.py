"""`python -m services.wallet [--port N] [--metrics-port M] [--data-dir D]`: as `felt serve wallet`."""

import sys

from felt.cli import main

sys.exit(main(["serve", "wallet", *sys.argv[1:]]))
