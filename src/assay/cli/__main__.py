"""``python -m assay.cli``."""

import sys

from assay.cli._main import main

if __name__ == "__main__":
    sys.exit(main())
