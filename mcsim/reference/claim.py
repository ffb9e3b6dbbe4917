# SPDX-License-Identifier: GPL-2.0-only
"""A published claim as data (Claim: its value, unit, source, kind, tolerance, the runs that reproduce it), the kinds
a claim may be (KINDS) and the sweep of its runs (spec_of); mcsim.reference.claims and .node_claims hold the claims."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcsim.errors import McsimError

if TYPE_CHECKING:
    from mcsim.sweep.spec import SweepSpec

KINDS = ("outcome", "calibrated input", "structure", "conditional", "not published", "not modelled")
INPUT_KINDS = ("calibrated input", "structure")  # agreement proves nothing: the verdict "input"
# "equal": the simulated value should be the published one; "at_most": the published value is an
# upper bound the simulated one must not exceed (e.g. "16 threads are enough")
RELATIONS = ("equal", "at_most")


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """One published claim, named by its id in PUBLISHED.md."""

    id: str
    statement: str
    value: float | None  # the published number, None where the claim has none
    unit: str | None
    source: str
    kind: str  # one of KINDS
    tolerance: float  # relative: |simulated / published - 1| <= tolerance counts as reproduced
    # `mcsim compare` exits 1 if this claim's verdict is "differs": an outcome off its tolerance, an
    # input that no longer matches the published number, a conditional claim false under holds_under
    must_reproduce: bool
    quick: bool  # part of `mcsim compare --quick`
    relation: str = "equal"  # one of RELATIONS
    runs: SweepSpec | None = None  # the reproducing runs (full mode), None: closed form / structure
    quick_runs: SweepSpec | None = None  # the same, smaller (--quick)
    note: str = ""  # why the kind / must_reproduce is what it is
    holds_under: str | None = None  # "conditional": the DPA profile under which it is an outcome

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise McsimError(f"claim {self.id!r}: kind={self.kind!r} must be one of {', '.join(KINDS)}")
        if self.relation not in RELATIONS:
            raise McsimError(f"claim {self.id!r}: relation={self.relation!r} must be one of {', '.join(RELATIONS)}")
        if (self.value is None) != (self.kind == "not published"):
            raise McsimError(f"claim {self.id!r}: a value goes with every kind but 'not published'")
        if (self.holds_under is None) == (self.kind == "conditional"):
            raise McsimError(f"claim {self.id!r}: holds_under (a DPA profile) goes with kind 'conditional' only")

    def published(self) -> str:
        """The published value with its unit, e.g. "1.6 Tbit/s"; "-" where none was published."""
        if self.value is None:
            return "-"
        return f"{self.value:g} {self.unit}" if self.unit else f"{self.value:g}"

    def spec(self, quick: bool) -> SweepSpec | None:
        """The sweep this claim runs in quick or full mode."""
        return self.quick_runs if quick else self.runs


def spec_of(name: str, base: dict[str, Any], axes: dict[str, list[Any]]) -> SweepSpec:
    """The sweep of a claim's runs, named compare-<name>."""
    from mcsim.sweep.spec import SweepSpec  # (here: the claims' data need no sweep machinery to be read)

    return SweepSpec(name=f"compare-{name}", base=base, axes=axes)
