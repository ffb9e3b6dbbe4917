# SPDX-License-Identifier: GPL-2.0-only
"""``python -m mcsim``: the mcsim command."""

import sys

try:  # Ctrl-C while mcsim.cli loads is one line (mcsim.cli says so for the rest of its imports)
    from mcsim.cli import main
except KeyboardInterrupt:
    sys.stderr.write("mcsim: interrupted\n")
    sys.exit(130)

sys.exit(main())
