# SPDX-License-Identifier: GPL-2.0-only
"""The NICs' congestion control as frozen data: ``RdmaConfig.congestion``, a tagged union like ``processor``.

``None`` (every QP at the line rate), :class:`DcqcnConfig` or :class:`HpccConfig`; each names the C++ class it
configures (``TYPE_ID``, a ``ns3::mcsim::CongestionControl``: rdma.md, "Congestion control") and each field the
attribute it sets. mcsim.native.congestion makes its ObjectFactory; the NIC makes one object of it per QP.
A congestion control written outside mcsim is a C++ class deriving from CongestionControl and a config class
with its TYPE_ID (fields named as its attributes through mcsim.config.ns3_attributes.sets): nothing here
changes. Optional class attributes say what the fabric must do for it: ``ECN`` (the switches mark CE: DCQCN),
``INT`` (they add INT records: HPCC).

The text interfaces (the CLI's ``--congestion-control``, a sweep spec's or workload's ``congestion_control =
"dcqcn"`` and an ``rdma`` table's ``dcqcn_*``/``hpcc_*`` keys, the canonical dicts of stored runs) keep their
words: :func:`from_text` and :func:`to_text` translate them, the one place that does. The DCQCN presets
("paper", "nvidia") are here too (:func:`dcqcn_preset`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from mcsim.config.ns3_attributes import sets
from mcsim.errors import McsimError, pick, require_int
from mcsim.units import PS_PER_S, format_rate, format_time, require_rate_bps, require_time_ps

DCQCN, HPCC = "ns3::mcsim::Dcqcn", "ns3::mcsim::Hpcc"  # the C++ classes DcqcnConfig and HpccConfig configure


class CongestionConfig(Protocol):
    """The settings of a congestion control: what RdmaConfig.congestion holds (None: none).

    Frozen data naming the ns-3 type it configures (a ``ns3::mcsim::CongestionControl``); its fields set that
    type's attributes (mcsim.config.ns3_attributes.sets). Optional: ``ECN: ClassVar[bool]`` (it reacts to the
    switches' CE marks: they mark), ``INT: ClassVar[bool]`` (it reads INT records: the switches add them), and
    ``check_line_rate(where, rate_bps, prefix)`` (its settings against the slowest host's line rate)."""

    TYPE_ID: ClassVar[str]


def is_congestion_config(value: object) -> bool:
    """Whether ``value`` is a congestion control's config: an instance of a class with a TYPE_ID."""
    return not isinstance(value, type) and isinstance(getattr(type(value), "TYPE_ID", None), str)


def uses_ecn(cc: object) -> bool:
    """The switches must mark CE for it (DCQCN's notification point answers the marks)."""
    return bool(getattr(type(cc), "ECN", False))


def uses_int(cc: object) -> bool:
    """The switches must add INT records to its QPs' packets (HPCC)."""
    return bool(getattr(type(cc), "INT", False))


def _fraction(where: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise McsimError(f"{where}: {name}={value!r} must be a number in (0, 1]")


@dataclass(frozen=True, slots=True, kw_only=True)
class DcqcnConfig:
    """DCQCN (Zhu et al., SIGCOMM 2015; rdma.md, "DCQCN"): a CNP per CE-marked packet (at most one per QP per
    N), a rate per RC QP cut by CNPs and raised back. It turns the fabric's ECN marking on. Its parameters as the
    paper names them, its defaults (second-hand where the paper's text was not at hand: rdma.md, "DCQCN");
    NVIDIA's firmware values: ``dcqcn_preset("nvidia")``."""

    TYPE_ID: ClassVar[str] = DCQCN
    ECN: ClassVar[bool] = True
    g: float = field(default=1 / 256, metadata=sets(DCQCN, "DcqcnG"))  # alpha's gain
    alpha_timer_ps: int = field(default=55_000_000, metadata=sets(DCQCN, "DcqcnAlphaTimer"))  # K
    rate_timer_ps: int = field(default=55_000_000, metadata=sets(DCQCN, "DcqcnRateTimer"))  # T
    byte_counter_b: int = field(default=10_000_000, metadata=sets(DCQCN, "DcqcnByteCounter"))  # B
    f: int = field(default=5, metadata=sets(DCQCN, "DcqcnF"))  # fast recovery steps
    rai_bps: int = field(default=40_000_000, metadata=sets(DCQCN, "DcqcnRai"))
    rhai_bps: int = field(default=200_000_000, metadata=sets(DCQCN, "DcqcnRhai"))
    min_rate_bps: int = field(default=100_000_000, metadata=sets(DCQCN, "DcqcnMinRate"))
    cnp_interval_ps: int = field(default=50_000_000, metadata=sets(DCQCN, "DcqcnCnpInterval"))  # N
    # at most one rate cut per QP per period, a CNP within it cutting at its end (firmware
    # rate_reduce_monitor_period); 0: every CNP cuts at once (the paper)
    rate_reduce_period_ps: int = field(default=0, metadata=sets(DCQCN, "DcqcnRateReducePeriod"))

    def __post_init__(self) -> None:
        where = "DcqcnConfig"
        _fraction(where, "g", self.g)
        require_int(where, "byte_counter_b", self.byte_counter_b, lo=1)
        require_int(where, "f", self.f, lo=0)
        # its timers run (0 would fire for ever at one instant), its intervals may be 0 (none); every time
        # within the simulated clock, every rate within mcsim's largest
        for name in ("alpha_timer_ps", "rate_timer_ps"):
            require_time_ps(where, name, getattr(self, name), lo=1)
        for name in ("cnp_interval_ps", "rate_reduce_period_ps"):
            require_time_ps(where, name, getattr(self, name))
        require_rate_bps(where, "min_rate_bps", self.min_rate_bps, lo=1)
        for name in ("rai_bps", "rhai_bps"):
            require_rate_bps(where, name, getattr(self, name), lo=0)

    def check_line_rate(self, where: str, rate_bps: int, prefix: str = "") -> None:
        """Its floor (``min_rate_bps``) above the slowest host's line rate would make a cut raise a QP's rate past
        its link (Dcqcn in rdma/model/dcqcn.cc: Rc = max(min rate, the cut rate)): one McsimError line."""
        if self.min_rate_bps > rate_bps:
            raise McsimError(
                f"{where}: {prefix}min_rate_bps={self.min_rate_bps} is above the hosts' line rate "
                f"{format_rate(rate_bps)}: DCQCN's rate cut would raise a QP past its link (Rc = max(min rate, cut); "
                f'rdma.md, "DCQCN"); give <= {rate_bps}'
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class HpccConfig:
    """HPCC (Li et al., SIGCOMM 2019; rdma.md, "HPCC"): a window and rate per RC QP from the INT records its ACKs
    bring back. Its parameters as the paper names them: eta and maxStage the paper's; R_AI 0: the line rate /
    2500 (the HPCC authors' simulator's runs: 10 Mbit/s per 25 Gbit/s); T 0: the fabric's base RTT
    (mcsim.config.rdma.hpcc_base_rtt_ps: its longest path, there and back)."""

    TYPE_ID: ClassVar[str] = HPCC
    INT: ClassVar[bool] = True
    eta: float = field(default=0.95, metadata=sets(HPCC, "HpccEta"))
    max_stage: int = field(default=5, metadata=sets(HPCC, "HpccMaxStage"))
    rai_bps: int = field(default=0, metadata=sets(HPCC, "HpccRai"))
    base_rtt_ps: int = field(default=0, metadata=sets(HPCC, "HpccBaseRtt"))

    def __post_init__(self) -> None:
        where = "HpccConfig"
        _fraction(where, "eta", self.eta)
        require_int(where, "max_stage", self.max_stage, lo=0, hi=2**32 - 1)
        require_rate_bps(where, "rai_bps", self.rai_bps, lo=0)
        require_time_ps(where, "base_rtt_ps", self.base_rtt_ps)

    def check_line_rate(self, where: str, rate_bps: int, prefix: str = "") -> None:
        """HPCC parameters its sender cannot work with (Hpcc in rdma/model/hpcc.cc; rdma.md, "HPCC") at the slowest
        host's line rate B: a window W_init = B x T (``base_rtt_ps``) under one byte (an RC QP sends while its
        bytes in flight are below the window, rc-qp.cc: it would send nothing, its transfers would never complete,
        and with retry_cnt=None the run would never end; a window under one packet still lets one packet fly per
        round trip), or an additive increase R_AI (``rai_bps``) above B (W_AI = R_AI x T would pass W_init, the
        window's ceiling). T 0 is computed from the fabric; R_AI 0 is B / 2500. One McsimError line."""
        if self.rai_bps > rate_bps:
            raise McsimError(
                f"{where}: {prefix}rai_bps={self.rai_bps} is above the hosts' line rate {format_rate(rate_bps)}: "
                "HPCC's additive increase W_AI = R_AI x T would pass its largest window W_init = line rate x T (HPCC, "
                f'SIGCOMM 2019; rdma.md, "HPCC"); give <= {rate_bps}, or 0 (the line rate / 2500)'
            )
        t_ps = self.base_rtt_ps
        if 0 < t_ps and rate_bps * t_ps < 8 * PS_PER_S:
            least_ps = -(-8 * PS_PER_S // rate_bps)
            raise McsimError(
                f"{where}: {prefix}base_rtt_ps={t_ps} gives HPCC a window of less than 1 B at {format_rate(rate_bps)} "
                f'(W_init = line rate x T: HPCC, SIGCOMM 2019; rdma.md, "HPCC"): its QPs would send nothing and no RC '
                f"transfer would complete; give >= {least_ps} ({format_time(least_ps)}), or 0 (the fabric's base RTT)"
            )


# --- the text interfaces' words: one place ---------------------------------------------------------------------

# the text name of each congestion control mcsim has ("none": every QP at the line rate) and the prefix of its
# fields' text keys (an rdma table's dcqcn_g is DcqcnConfig.g)
KINDS: dict[str, type | None] = {"none": None, "dcqcn": DcqcnConfig, "hpcc": HpccConfig}
PREFIXES: dict[type, str] = {DcqcnConfig: "dcqcn_", HpccConfig: "hpcc_"}
KIND_KEY = "congestion_control"  # the text key naming the kind


def kind_of(cc: object) -> str:
    """The text name of a congestion control config ("none", "dcqcn", "hpcc"; another's class name)."""
    if cc is None:
        return "none"
    return next((name for name, cls in KINDS.items() if type(cc) is cls), type(cc).__name__)


@functools.cache
def text_keys() -> tuple[str, ...]:
    """Every text key of the congestion control in an rdma table, in order: the kind, then each field's."""
    return (KIND_KEY, *(p + f.name for cls, p in PREFIXES.items() for f in dataclasses.fields(cls)))


def from_text(kind: object, keys: Mapping[str, Any], where: str = "rdma") -> DcqcnConfig | HpccConfig | None:
    """The config of a text kind ("none", "dcqcn", "hpcc") and its ``dcqcn_*``/``hpcc_*`` keys (those of another
    kind than ``kind`` set nothing, as they did when they were RdmaConfig's fields).

    Raises
    ------
    McsimError
        An unknown kind (``"unknown congestion control 'x'; choose one of dcqcn, hpcc, none"``) or key, or a field
        value its config refuses.
    """
    if not isinstance(kind, str):
        raise McsimError(f"{where}: {KIND_KEY}={kind!r} must be a string")
    cls = pick("congestion control", kind, KINDS)
    for key in keys:
        if key not in text_keys():
            raise McsimError(f"{where}: {key!r} is not a congestion control key (one of {', '.join(text_keys())})")
    if cls is None:
        return None
    prefix = PREFIXES[cls]
    fields = {key[len(prefix) :]: value for key, value in keys.items() if key.startswith(prefix)}
    made: DcqcnConfig | HpccConfig = cls(**fields)
    return made


def split_text(fields: Mapping[str, Any], where: str = "rdma") -> dict[str, Any]:
    """An rdma table's keys with the congestion control's text keys (``congestion_control``, ``dcqcn_*``,
    ``hpcc_*``) made into its ``congestion`` (unchanged if it has none of them). Parameters of one kind without
    ``congestion_control`` choose that kind (``dcqcn_g = 0.01``: DCQCN), so that a Scenario's short name
    ``congestion_control = "dcqcn"`` beside an rdma table of DCQCN's parameters keeps them."""
    for key in fields:
        if key.startswith(tuple(PREFIXES.values())) and key not in text_keys():  # dcqcn_gg
            raise McsimError(f"{where}: {key!r} is not a congestion control key (one of {', '.join(text_keys())})")
    keys = {k: v for k, v in fields.items() if k in text_keys()}
    if not keys:
        return dict(fields)
    if "congestion" in fields:
        raise McsimError(f"{where}: give congestion or {', '.join(keys)}, not both")
    out = {k: v for k, v in fields.items() if k not in keys}
    out["congestion"] = from_text(keys[KIND_KEY] if KIND_KEY in keys else _kind_of_keys(keys, where), keys, where)
    return out


def _kind_of_keys(keys: Mapping[str, Any], where: str) -> str:
    """The kind whose parameters ``keys`` set, when they do not name it (dcqcn_g alone: DCQCN)."""
    kinds = [name for name, cls in KINDS.items() if cls is not None and any(k.startswith(PREFIXES[cls]) for k in keys)]
    if len(kinds) > 1:
        raise McsimError(f"{where}: {', '.join(keys)} set parameters of {' and '.join(kinds)}; give {KIND_KEY}")
    return kinds[0]


def field_path(key: str) -> list[str] | None:
    """The path in RdmaConfig of the field a text key sets (``dcqcn_g``: congestion.g), None if none does."""
    for prefix in PREFIXES.values():
        if key.startswith(prefix) and key in text_keys():
            return ["congestion", key[len(prefix) :]]
    return None


def spelling(cc: object) -> str:
    """A congestion control config as Python spells it, its fields at their defaults left out: "None",
    "DcqcnConfig()", "HpccConfig(eta=0.5)"."""
    if not isinstance(cc, DcqcnConfig | HpccConfig):
        return repr(cc)
    default = type(cc)()
    given = [
        f"{f.name}={getattr(cc, f.name)!r}"
        for f in dataclasses.fields(cc)
        if getattr(cc, f.name) != getattr(default, f.name)
    ]
    return f"{type(cc).__name__}({', '.join(given)})"


def to_text(cc: object) -> dict[str, Any]:
    """The text keys of a congestion control config, every one (the canonical form of stored runs: the other
    kinds' keys at their defaults). A config mcsim does not know has no text form (McsimError)."""
    if cc is not None and type(cc) not in PREFIXES:
        raise McsimError(
            f"congestion control {type(cc).__name__} has no canonical form (not one of {', '.join(KINDS)})"
        )
    out: dict[str, Any] = {KIND_KEY: kind_of(cc)}
    for cls, prefix in PREFIXES.items():
        values = cc if type(cc) is cls else cls()
        out |= {prefix + f.name: getattr(values, f.name) for f in dataclasses.fields(cls)}
    return out


# --- DCQCN presets ---------------------------------------------------------------------------------------------
# DCQCN's parameters as the DCQCN paper sets them ("paper": DcqcnConfig's defaults) or as NVIDIA's ConnectX
# firmware does ("nvidia"): RdmaConfig(congestion=dcqcn_preset("nvidia")).
#
# Each firmware value with its source (the survey: rdma.md, "DCQCN"). What the model leaves out of the firmware's
# reaction point: rpg_min_dec_fac 50 % is the model's largest cut already (alpha <= 1 halves the rate at most),
# INITIAL_ALPHA_VALUE 1023/1024 is taken as 1, rate_to_set_on_first_cnp (0: none) and clamp_tgt_rate 0 (the
# firmware keeps Rt at a cut that follows no increase; the model sets Rt = Rc at every cut) are not modelled, and
# the firmware raises alpha at the end of an alpha period in which a CNP came, the model at the cut itself.

# NVIDIA's firmware defaults (ConnectX-4 and later). Sources: NVIDIA DOCA 3.4 "DCQCN CC Parameters" (DOCA);
# Mellanox community DOC-2790 "DCQCN Parameters" v13 and v19; `mlxconfig q` of a ConnectX-5 Ex, firmware
# 16.27.2008 (xdp-newbies list, 2020-06-22: "the CX-5 dump"); Peng et al., USENIX ATC'25, Table 2 (ATC'25).
NVIDIA = DcqcnConfig(
    # dce_tcp_g 1019, a 10-bit fraction: a CNP's alpha <- (G/1024) alpha + (1 - G/1024) (DOC-2790 v13), so g =
    # 1 - 1019/1024 = 5/1024 (derived; DOC-2790 v19 writes the formula otherwise and DOCA's text leaves it out)
    g=5 / 1024,
    alpha_timer_ps=1_000_000,  # dce_tcp_rtt 1 us, alpha's update period K (DOCA)
    rate_timer_ps=300_000_000,  # rpg_time_reset 300 us, T (the CX-5 dump; ATC'25)
    # rpg_byte_reset 32767 (the CX-5 dump) is in a unit no source gives: B stays the paper's
    f=1,  # rpg_threshold 1, steps of fast recovery F (the CX-5 dump)
    rai_bps=5_000_000,  # rpg_ai_rate 5 Mbit/s (the CX-5 dump; ATC'25)
    rhai_bps=50_000_000,  # rpg_hai_rate 50 Mbit/s (the CX-5 dump)
    min_rate_bps=1_000_000,  # rpg_min_rate 1 Mbit/s (DOCA)
    # min_time_between_cnps, N: the sources disagree: 0 (Parav Pandit's mlx5 patch adding
    # np_min_time_between_cnps, 2020-03-03), 2 us (the CX-5 dump), 4 us (ATC'25); 4 us taken, as ATC'25
    cnp_interval_ps=4_000_000,
    # rate_reduce_monitor_period 4 us, "the time period between rate reductions" (DOCA; ATC'25)
    rate_reduce_period_ps=4_000_000,
)
DCQCN_PRESETS: dict[str, DcqcnConfig] = {"paper": DcqcnConfig(), "nvidia": NVIDIA}


def dcqcn_preset(name: str) -> DcqcnConfig:
    """DCQCN's parameters in preset ``name``, "paper" (DcqcnConfig's defaults) or "nvidia".

    Raises
    ------
    McsimError
        An unknown preset: ``"unknown DCQCN preset 'x'; choose one of nvidia, paper"``.
    """
    preset: DcqcnConfig = pick("DCQCN preset", name, DCQCN_PRESETS)
    return preset
