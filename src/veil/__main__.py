"""``python -m veil`` runs the command line."""

import sys

from veil.cli import main

if __name__ == "__main__":
    sys.exit(main())
