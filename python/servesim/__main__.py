"""``python -m servesim ARGS``: the servesim command, as the installed console script runs it."""

import sys

from ._cli import main

sys.exit(main())
