"""``python -m ioukit`` runs the command line."""

import sys

from ioukit.cli import main

sys.exit(main())
