# SPDX-License-Identifier: GPL-2.0-only
"""libmcsim-ns3's C ABI through ctypes: every call a run makes from Python to C++.

A process that runs a Scenario loads ns-3's libraries and mcsim's with ctypes
(:func:`mcsim.native.runtime.load`) and calls the ``mcsim_*`` functions declared here (C++:
ns3_modules/capi/: abi.h and each module's ``<module>-abi.cc``). It never imports cppyy, whose
import alone costs about half a second, and cling never compiles a call wrapper (about 0.8 s on a
process's first run). cppyy stays available for looking inside C++ objects (tests, traces):
:func:`mcsim.native.runtime.cppyy_ns` and :func:`mcsim.native.runtime.cppyy_object`.

Conventions (abi.h): integers, doubles, strings, numpy arrays (pointer + count) and opaque
handles cross; each function returns an int64 that is its value (>= 0) or -1 after a C++
exception, whose message this module raises as one :class:`McsimError` line.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from mcsim.errors import McsimError


def _array(dtype: type[np.generic], *, out: bool = False) -> Any:
    """An argument type that takes only C-contiguous arrays of ``dtype`` (and writeable, for out)."""
    return np.ctypeslib.ndpointer(dtype=dtype, flags=["C_CONTIGUOUS", "WRITEABLE"] if out else ["C_CONTIGUOUS"])


I64, U32, U64, F64, PTR, TEXT = (
    ctypes.c_int64,
    ctypes.c_uint32,
    ctypes.c_uint64,
    ctypes.c_double,
    ctypes.c_void_p,
    ctypes.c_char_p,
)
U32S, U64S, I64S, F64S, U8S = (_array(t) for t in (np.uint32, np.uint64, np.int64, np.float64, np.uint8))
U64_OUT, U8_OUT, I64_OUT, U32_OUT = (_array(t, out=True) for t in (np.uint64, np.uint8, np.int64, np.uint32))

# name -> argument types; every function returns int64 (>= 0, or -1 with mcsim_last_text)
SIGNATURES: dict[str, tuple[Any, ...]] = {
    # capi/abi.cc
    "mcsim_init": (TEXT, TEXT),
    "mcsim_bind_globals": (TEXT, TEXT),
    "mcsim_counter_names": (TEXT,),
    "mcsim_counters": (PTR, TEXT, U64_OUT, U64),
    "mcsim_constants": (),
    "mcsim_dispose": (PTR,),
    "mcsim_unref": (PTR,),
    "mcsim_set_attributes": (PTR, TEXT),
    "mcsim_factory_set": (PTR, TEXT),
    "mcsim_run_for": (F64,),
    "mcsim_events_run": (),
    "mcsim_now_ps": (),
    "mcsim_is_finished": (),
    "mcsim_destroy": (),
    # capi/fabric-abi.cc
    "mcsim_fabric_set_factories": (PTR, PTR, PTR),
    "mcsim_fabric_build": (PTR, U32, U32S, U64, U32S, U64S, U32S, I64S, U64),
    "mcsim_fabric_set_unicast_table": (PTR, U32, U32S, U64, U32S, U64),
    "mcsim_fabric_schedule_unicast_table": (PTR, I64, U32, U32S, U64, U32S, U64),
    "mcsim_fabric_set_multicast_ports": (PTR, U32, U32, U32S, U64),
    "mcsim_fabric_schedule_multicast_ports": (PTR, I64, U32, U32, U32S, U64),
    "mcsim_fabric_set_aggregation_trees": (PTR, U32S, U64, U32),
    "mcsim_fabric_set_loss_probabilities": (PTR, F64S, U64),
    "mcsim_fabric_set_lossy_hosts": (PTR, U32S, U64),
    "mcsim_fabric_set_switch_attributes": (PTR, U64S, U64S, U64),
    "mcsim_fabric_set_chosen_drops": (PTR, U32, U32, U64S, U64),
    "mcsim_fabric_set_link_down": (PTR, U32, U32, I64S, U64),
    "mcsim_fabric_add_sources": (PTR, U32S, U32S, U64S, U32S, U32S, I64S, U64),
    "mcsim_fabric_n_ports": (PTR,),
    "mcsim_fabric_unroutable_packets": (PTR,),
    "mcsim_fabric_pfc_deadlock_length": (PTR,),
    "mcsim_fabric_pfc_deadlock": (PTR, U32_OUT, U64),
    # capi/rdma-abi.cc
    "mcsim_stack_setup": (PTR, PTR, PTR, PTR, PTR, PTR),
    "mcsim_stack_enable_memory": (PTR, U32, U64),
    "mcsim_stack_write_memory": (PTR, U32, U64, U8S, U64),
    "mcsim_stack_read_memory": (PTR, U32, U64, U8_OUT, U64),
    "mcsim_verbs_setup": (PTR, PTR),
    "mcsim_verbs_add_ud_group": (PTR, U32, U32S, U64),
    "mcsim_verbs_add_rc_ops": (PTR, U32S, U32S, U32S, U64S, I64S, U64),
    "mcsim_verbs_add_ud_streams": (PTR, U32S, U32S, U32S, U32S, I64S, U64),
    "mcsim_verbs_n_ud_qps": (PTR,),
    "mcsim_verbs_rc_op_times": (PTR, U64_OUT, U64),
    # capi/collectives-abi.cc
    "mcsim_team_setup": (PTR, PTR, PTR, U32S, U64),
    "mcsim_team_start": (PTR, I64),
    "mcsim_team_start_after": (PTR, PTR),
    "mcsim_team_n_ranks": (PTR,),
    "mcsim_pcap_open": (PTR, PTR, TEXT),
    "mcsim_pcap_attach": (PTR, PTR, U32),
    "mcsim_pcap_attach_port": (PTR, PTR, U32, U32),
    "mcsim_pcap_close": (PTR, U64_OUT, U64),
    # capi/queue-sampler-abi.cc
    "mcsim_queue_sampler_attach": (PTR, PTR, U32, U32),
    "mcsim_queue_sampler_start": (PTR,),
    "mcsim_queue_sampler_finish": (PTR, U64_OUT, U64),
    "mcsim_queue_sampler_samples": (PTR, U64_OUT, U64),
    "mcsim_queue_sampler_ecn_thresholds": (PTR, U64_OUT, U64),
    "mcsim_team_record_events": (PTR,),
    "mcsim_team_event_count": (PTR,),
    "mcsim_team_events": (PTR, I64_OUT, U64),
    "mcsim_job_setup": (PTR, U32S, U64, U32),
    "mcsim_job_compute": (PTR, U32, I64S, U64),
    "mcsim_job_collective": (PTR, U32, PTR),
    "mcsim_job_depend": (PTR, U32, U32, U32),
    "mcsim_job_transfer": (PTR, U32),
    "mcsim_job_messages": (PTR, PTR, U32S, U32S, U64S, U64),
    "mcsim_job_start": (PTR, I64),
    "mcsim_job_timeline": (PTR, I64_OUT, U64),
    "mcsim_job_message_states": (PTR, U8_OUT, U64),
    # capi/dpa-abi.cc
    "mcsim_source_setup": (PTR, PTR),
    "mcsim_source_start": (PTR, U32, U32, U32, U32, I64),
    "mcsim_source_processed": (PTR,),
    "mcsim_source_processed_ps": (PTR, U64_OUT, U64),
    "mcsim_source_busy_ps": (PTR,),
    # capi/rdma-abi.cc: the stack's congestion control (before mcsim_stack_setup)
    "mcsim_stack_set_congestion": (PTR, PTR),
}
# functions that return a new handle (nullptr on failure) rather than an int64
HANDLE_SIGNATURES: dict[str, tuple[Any, ...]] = {"mcsim_create": (TEXT,), "mcsim_factory_new": (TEXT,)}
TEST_SIGNATURES: dict[str, tuple[Any, ...]] = {"mcsim_run_test_suite": (TEXT,)}  # the test library


def declare(lib: ctypes.CDLL, signatures: dict[str, tuple[Any, ...]] = SIGNATURES) -> ctypes.CDLL:
    """Give each function of ``signatures`` in ``lib`` its argument types and a check that raises
    McsimError with the C++ message when it returns -1; return ``lib``."""
    lib.mcsim_last_text.argtypes, lib.mcsim_last_text.restype = [], TEXT
    handles = HANDLE_SIGNATURES if signatures is SIGNATURES else {}
    for table, restype, failed in ((signatures, I64, _negative), (handles, PTR, _null)):
        for name, argtypes in table.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = list(argtypes), restype
            fn.errcheck = _raise_if(lib, failed)
    if handles:
        lib.mcsim_factory_free.argtypes, lib.mcsim_factory_free.restype = [PTR], None
    return lib


def _negative(result: int) -> bool:
    return result < 0


def _null(result: int | None) -> bool:
    return not result


def _raise_if(lib: ctypes.CDLL, failed: Callable[[Any], bool]) -> Callable[..., Any]:
    """A ctypes errcheck: McsimError with the C++ message when ``failed(result)``, else the result."""

    def check(result: Any, fn: Any, args: tuple[Any, ...]) -> Any:
        if failed(result):
            raise McsimError(_explained(last_text(lib), getattr(fn, "__name__", "mcsim")))
        return result

    return check


def _explained(text: str, function: str) -> str:
    """A C++ exception's message as one line for the user: std::bad_alloc's bare name says what failed."""
    if text == "std::bad_alloc":
        return (
            f"out of memory: a C++ allocation failed in {function} (std::bad_alloc): the run needs more memory "
            "than this process may take (its estimate, Scenario.estimate(), counts no packets or events in flight); "
            "use fewer ranks or a smaller size, or raise the limit (ulimit -v, the cgroup's memory.max)"
        )
    return " ".join(text.split()) if "\n" in text else text


def last_text(lib: ctypes.CDLL) -> str:
    """The text a function left in mcsim_last_text() (a refusal, counter names)."""
    return bytes(lib.mcsim_last_text() or b"").decode(errors="replace")


class _Owned:
    """A C++ object Python owns, passed to ``mcsim_*`` functions as its address (``_as_parameter_``).
    Once let go (:meth:`_let_go`), it refuses to be passed again, so a dangling pointer never
    reaches C++."""

    __slots__ = ("_address", "_lib", "type_name")
    kind = "object"

    def __init__(self, lib: ctypes.CDLL, type_name: str, address: int) -> None:
        self._lib = lib
        self.type_name = type_name
        self._address: int | None = address

    @property
    def _as_parameter_(self) -> int:
        if self._address is None:
            raise AssertionError(f"a released {self.type_name} {self.kind} was used")
        return self._address

    @property
    def address(self) -> int:
        """The C++ object's address (mcsim.native.runtime.cppyy_object binds it)."""
        return self._as_parameter_

    def _let_go(self) -> int | None:
        """The address, once: None after the first call."""
        address, self._address = getattr(self, "_address", None), None
        return address

    def __repr__(self) -> str:
        where = "released" if self._address is None else hex(self._address)
        return f"<{self.type_name} {self.kind} {where}>"


class Handle(_Owned):
    """One reference to a new C++ ns3::Object of ``type_name`` (default attributes).

    :meth:`dispose` calls the object's Dispose; :meth:`release` drops Python's reference
    (mcsim.native.runtime.dispose does both, in order).
    """

    __slots__ = ()
    kind = "handle"

    def __init__(self, lib: ctypes.CDLL, type_name: str) -> None:
        super().__init__(lib, type_name, lib.mcsim_create(type_name.encode()))

    @property
    def cxx_type(self) -> str:
        """The C++ type at :attr:`address`."""
        return self.type_name

    def dispose(self) -> None:
        """ns3::Object::Dispose (mcsim.native.runtime.dispose calls it in the one safe order)."""
        self._lib.mcsim_dispose(self)

    def release(self) -> None:
        """Drop Python's reference; the object is freed when C++ holds none."""
        if (address := self._let_go()) is not None:
            self._lib.mcsim_unref(address)


class Factory(_Owned):
    """An ns-3 ObjectFactory of ``type_name``, owned by Python (freed with this object)."""

    __slots__ = ()
    kind = "factory"

    def __init__(self, lib: ctypes.CDLL, type_name: str) -> None:
        super().__init__(lib, type_name, lib.mcsim_factory_new(type_name.encode()))

    @property
    def cxx_type(self) -> str:
        """The C++ type at :attr:`address`."""
        return "ns3::ObjectFactory"

    def __del__(self) -> None:
        if (address := self._let_go()) is not None:
            self._lib.mcsim_factory_free(address)
