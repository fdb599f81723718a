"""``python -m assay.cli``."""

import sys

from assay.cli._main import main

sys.exit(main())
