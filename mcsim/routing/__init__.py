# SPDX-License-Identifier: GPL-2.0-only
"""Routing over a topology, pure networkx + numpy (no C++): the layout of its ports and links
(:mod:`~mcsim.routing.layout`), unicast ECMP tables and multicast and aggregation trees
(:mod:`~mcsim.routing.routes`), and the subnet manager's re-routes after link changes
(:mod:`~mcsim.routing.subnet_manager`).

Each is a module of its own (``from mcsim.routing import routes``); this package imports none of them.
"""
