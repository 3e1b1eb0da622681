import sys

from felt.cli import main

sys.exit(main())
