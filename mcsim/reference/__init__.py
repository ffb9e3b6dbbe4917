# SPDX-License-Identifier: GPL-2.0-only
"""Published claims as data, the authors' traffic model, and mcsim's comparison with them."""
