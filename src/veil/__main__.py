"""``python -m veil`` runs the command line."""

import sys

from veil.cli import main

sys.exit(main())
