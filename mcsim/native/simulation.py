# SPDX-License-Identifier: GPL-2.0-only
"""One run's lifecycle: build -> run -> collect -> dispose, with every C++ object owned in one place.

::

    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout, groups=groups, config=config))
        stack = sim.own_stack(rdma.build_stack(fab, rdma_config))
        team = sim.own_app(collectives.start_team(stack, spec))
        sim.run()
        result = ...  # read every counter here, inside the block
    # here the applications, the stack and the fabric are disposed and the simulator is reset

Leaving the block, however it is left (a result, an error, Ctrl-C during the run), disposes what
the Simulation owns in the one safe order (:func:`mcsim.native.runtime.dispose`): the pending events are
dropped first, then the applications in the order they were added, the RDMA stack, the fabric.
So the next run in the process starts afresh.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from mcsim.native import run_control, runtime


class OwnedFabric(Protocol):
    """What a Simulation needs of a built fabric (mcsim.native.fabric.BuiltFabric)."""

    cxx: Any  # ns3::mcsim::Fabric

    def delivered_packets(self) -> int:
        """Packets the hosts have received so far (for the progress line)."""
        ...


F = TypeVar("F", bound=OwnedFabric)


class Simulation:
    """The C++ objects of one run (a fabric, an RDMA stack, applications) and their disposal."""

    def __init__(self) -> None:
        self.fabric: OwnedFabric | None = None
        self.stack: Any = None
        self.apps: list[Any] = []

    def __enter__(self) -> Simulation:
        return self

    @property
    def lib(self) -> Any:
        """mcsim's library, its C ABI declared (mcsim.native.abi); loaded on first use, so that bad
        input found while building (fabric.build checks faults and routes first) never loads C++."""
        return runtime.load()

    def __exit__(self, *exc: object) -> None:
        stack = [] if self.stack is None else [self.stack]
        fabric = [] if self.fabric is None else [self.fabric.cxx]
        runtime.dispose(*self.apps, *stack, *fabric)

    def own_fabric(self, fab: F) -> F:
        """Take the run's fabric (disposed last); return it."""
        if self.fabric is not None:
            raise AssertionError("a Simulation runs one fabric")
        self.fabric = fab
        return fab

    def own_stack(self, stack: Any) -> Any:
        """Take the run's ns3::mcsim::RdmaStack (disposed after the applications); return it."""
        if self.stack is not None:
            raise AssertionError("a Simulation runs one RDMA stack")
        self.stack = stack
        return stack

    def own_app(self, app: Any) -> Any:
        """Take an application (a workload, a collective team, a completion source), disposed
        first; return it."""
        self.apps.append(app)
        return app

    def run(self) -> None:
        """Run until no event is left (progress on stderr for long runs; Ctrl-C raises
        mcsim.errors.Interrupted saying how far it got, and leaving the block still disposes)."""
        run_control.run_to_end(self.lib, None if self.fabric is None else self.fabric.delivered_packets)
