"""``python -m bench.testing.testserver``."""

import sys

from ._cli import main

sys.exit(main())
