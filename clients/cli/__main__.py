"""``python -m clients.cli`` is the same as ``arena``."""

import sys

from clients.cli import main

sys.exit(main())
