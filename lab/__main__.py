"""``python -m lab``: the virtual lab's command line (see doc/lab.md)."""

import sys

from lab.cli import main

sys.exit(main())
