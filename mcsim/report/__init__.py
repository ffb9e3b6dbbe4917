# SPDX-License-Identifier: GPL-2.0-only
"""``mcsim report``: the figures that put mcsim beside the published record, as one self-contained
HTML page (the ``report`` extra: matplotlib, jinja2).

``figures``: each figure's sweeps (through mcsim.sweep and its store), its plot as SVG text, the
numbers plotted and how to re-run it. ``page``: the page (templates/report.html.j2) with the figures
and the compare table of mcsim.reference. ``commands``: the ``mcsim report`` command.
"""
