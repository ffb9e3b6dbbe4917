# SPDX-License-Identifier: GPL-2.0-only
"""Small tools that know nothing of fabrics: output tables and files (:mod:`~mcsim.util.output`),
TOML text (:mod:`~mcsim.util.toml_text`), the machine's memory and cores
(:mod:`~mcsim.util.machine`), the package's files and the build cache
(:mod:`~mcsim.util.package_data`) and a folder lock (:mod:`~mcsim.util.folder_lock`).

Each is a module of its own (``from mcsim.util import output``); this package imports none of them.
"""
