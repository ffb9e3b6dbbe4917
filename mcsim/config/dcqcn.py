# SPDX-License-Identifier: GPL-2.0-only
"""DCQCN parameter presets: RdmaConfig's ``dcqcn_*`` fields as the DCQCN paper sets them ("paper": RdmaConfig's
defaults) or as NVIDIA's ConnectX firmware does ("nvidia")::

    RdmaConfig(congestion_control="dcqcn", **dcqcn_preset("nvidia"))

Each firmware value with its source (the survey: rdma.md, "DCQCN"). What the model leaves out of the firmware's
reaction point: rpg_min_dec_fac 50 % is the model's largest cut already (alpha <= 1 halves the rate at most),
INITIAL_ALPHA_VALUE 1023/1024 is taken as 1, rate_to_set_on_first_cnp (0: none) and clamp_tgt_rate 0 (the
firmware keeps Rt at a cut that follows no increase; the model sets Rt = Rc at every cut) are not modelled, and
the firmware raises alpha at the end of an alpha period in which a CNP came, the model at the cut itself.
"""

from __future__ import annotations

import dataclasses

from mcsim.config.rdma import RdmaConfig
from mcsim.errors import pick

# NVIDIA's firmware defaults (ConnectX-4 and later). Sources: NVIDIA DOCA 3.4 "DCQCN CC Parameters" (DOCA);
# Mellanox community DOC-2790 "DCQCN Parameters" v13 and v19; `mlxconfig q` of a ConnectX-5 Ex, firmware
# 16.27.2008 (xdp-newbies list, 2020-06-22: "the CX-5 dump"); Peng et al., USENIX ATC'25, Table 2 (ATC'25).
NVIDIA: dict[str, int | float] = {
    # dce_tcp_g 1019, a 10-bit fraction: a CNP's alpha <- (G/1024) alpha + (1 - G/1024) (DOC-2790 v13), so g =
    # 1 - 1019/1024 = 5/1024 (derived; DOC-2790 v19 writes the formula otherwise and DOCA's text leaves it out)
    "dcqcn_g": 5 / 1024,
    "dcqcn_alpha_timer_ps": 1_000_000,  # dce_tcp_rtt 1 us, alpha's update period K (DOCA)
    "dcqcn_rate_timer_ps": 300_000_000,  # rpg_time_reset 300 us, T (the CX-5 dump; ATC'25)
    # rpg_byte_reset 32767 (the CX-5 dump) is in a unit no source gives: B stays the paper's
    "dcqcn_f": 1,  # rpg_threshold 1, steps of fast recovery F (the CX-5 dump)
    "dcqcn_rai_bps": 5_000_000,  # rpg_ai_rate 5 Mbit/s (the CX-5 dump; ATC'25)
    "dcqcn_rhai_bps": 50_000_000,  # rpg_hai_rate 50 Mbit/s (the CX-5 dump)
    "dcqcn_min_rate_bps": 1_000_000,  # rpg_min_rate 1 Mbit/s (DOCA)
    # min_time_between_cnps, N: the sources disagree: 0 (Parav Pandit's mlx5 patch adding
    # np_min_time_between_cnps, 2020-03-03), 2 us (the CX-5 dump), 4 us (ATC'25); 4 us taken, as ATC'25
    "dcqcn_cnp_interval_ps": 4_000_000,
    # rate_reduce_monitor_period 4 us, "the time period between rate reductions" (DOCA; ATC'25)
    "dcqcn_rate_reduce_period_ps": 4_000_000,
}


def _paper() -> dict[str, int | float]:
    """RdmaConfig's defaults of its dcqcn_* fields: the paper's (Zhu et al., SIGCOMM 2015; rdma.md, "DCQCN")."""
    default = RdmaConfig()
    return {f.name: getattr(default, f.name) for f in dataclasses.fields(default) if f.name.startswith("dcqcn_")}


DCQCN_PRESETS: dict[str, dict[str, int | float]] = {"paper": _paper(), "nvidia": _paper() | NVIDIA}


def dcqcn_preset(name: str) -> dict[str, int | float]:
    """Every ``dcqcn_*`` field of RdmaConfig in preset ``name``, "paper" or "nvidia" (a new dict).

    Raises
    ------
    McsimError
        An unknown preset: ``"unknown DCQCN preset 'x'; choose one of nvidia, paper"``.
    """
    return dict(pick("DCQCN preset", name, DCQCN_PRESETS))
