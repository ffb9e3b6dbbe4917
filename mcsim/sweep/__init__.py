# SPDX-License-Identifier: GPL-2.0-only
"""Sweeps: one spec (a base Scenario plus axes) -> many runs on local worker processes or a Dask
cluster, each stored in a SQLite result store as it finishes, resumable, with progress."""
