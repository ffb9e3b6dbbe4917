# SPDX-License-Identifier: GPL-2.0-only
"""``python -m mcsim``: the mcsim command."""

import sys

from mcsim.cli import main

sys.exit(main())
