# SPDX-License-Identifier: GPL-2.0-only
"""The C ABI's two sides agree: every MCSIM_ABI prototype in the C++ sources has the argument types,
in order, and the return kind that mcsim.native.abi declares for ctypes, and every declared function has
a prototype. A prototype or a declaration changed on one side only fails here (ctypes would pass the
wrong bytes without a word)."""

import re
from pathlib import Path

import pytest

from mcsim.native import abi
from mcsim.util import package_data

PROTOTYPE = re.compile(r"MCSIM_ABI\s+(?P<ret>[\w\s\*]+?)\s*\n\s*(?P<name>mcsim_\w+)\s*\((?P<params>[^)]*)\)")
# C type of a parameter -> the name of its ctypes argument type in mcsim.native.abi
C_TYPES = {
    "int64_t": "I64",
    "uint32_t": "U32",
    "uint64_t": "U64",
    "double": "F64",
    "void*": "PTR",
    "const char*": "TEXT",
    "const uint32_t*": "U32S",
    "const uint64_t*": "U64S",
    "const int64_t*": "I64S",
    "const double*": "F64S",
    "const uint8_t*": "U8S",
    "uint64_t*": "U64_OUT",
    "uint8_t*": "U8_OUT",
    "int64_t*": "I64_OUT",
    "uint32_t*": "U32_OUT",
}
# return type -> the table of mcsim.native.abi that declares such functions (None: declared by native itself)
RETURNS = {"int64_t": "int64", "void*": "handle", "const char*": None, "void": None}


def _type(param: str) -> str:
    """'const uint32_t* switchPorts' -> 'const uint32_t*' (the type, its spacing normalised)."""
    text = re.sub(r"\s*\*\s*", "* ", " ".join(param.split())).strip()
    return text.rsplit(" ", 1)[0].strip() if " " in text else text


def prototypes(sources: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (return type, parameter types) of every MCSIM_ABI function under ``sources``."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for path in sorted(sources.rglob("*.cc")):
        for m in PROTOTYPE.finditer(path.read_text()):
            params = tuple(_type(p) for p in m["params"].split(",") if p.strip() and p.strip() != "void")
            assert m["name"] not in found, f"{m['name']} is defined twice"
            found[m["name"]] = (" ".join(m["ret"].replace("*", "* ").split()).replace(" *", "*"), params)
    return found


def declared() -> dict[str, tuple[str | None, tuple[object, ...] | None]]:
    """name -> (return kind, argument types) as mcsim.native.abi declares them."""
    tables = {"int64": abi.SIGNATURES | abi.TEST_SIGNATURES, "handle": abi.HANDLE_SIGNATURES}
    out: dict[str, tuple[str | None, tuple[object, ...] | None]] = {
        name: (kind, args) for kind, table in tables.items() for name, args in table.items()
    }
    out |= {"mcsim_last_text": (None, None), "mcsim_factory_free": (None, None)}  # typed by abi.declare
    return out


def _check(found: dict, want: dict) -> list[str]:
    """Every disagreement between the prototypes and the declarations, one line each."""
    problems = [f"{n}: declared in mcsim.native.abi, no MCSIM_ABI prototype" for n in sorted(set(want) - set(found))]
    problems += [f"{n}: MCSIM_ABI prototype, not declared in mcsim.native.abi" for n in sorted(set(found) - set(want))]
    for name in sorted(set(found) & set(want)):
        ret, params = found[name]
        kind, args = want[name]
        if ret not in RETURNS or RETURNS[ret] != kind:
            problems.append(f"{name}: returns {ret}, declared as {kind}")
        if args is None:
            continue
        unknown = [p for p in params if p not in C_TYPES]
        if unknown:
            problems.append(f"{name}: parameter types {unknown} have no ctypes type in this test's table")
            continue
        expected = tuple(getattr(abi, C_TYPES[p]) for p in params)
        if len(expected) != len(args) or any(a is not e for a, e in zip(args, expected, strict=False)):
            problems.append(
                f"{name}: C++ takes ({', '.join(params)}), mcsim.native.abi declares {len(args)} other types"
            )
    return problems


def test_every_prototype_matches_its_declaration():
    found = prototypes(package_data.source_dir())
    assert len(found) >= 58  # the whole ABI was read (57 functions and the test library's one)
    assert _check(found, declared()) == []


@pytest.mark.parametrize(
    ("edit", "problem"),
    [  # a prototype changed on the C++ side only, or a declaration on the Python side only
        (lambda f, w: f.update(mcsim_team_start=("int64_t", ("void*", "uint64_t"))), r"mcsim_team_start: C\+\+ takes"),
        (lambda f, w: w.update(mcsim_run_for=("int64", (abi.I64,))), r"mcsim_run_for: C\+\+ takes \(double\)"),
        (lambda f, w: f.update(mcsim_create=("int64_t", ("const char*",))), r"mcsim_create: returns int64_t"),
        (lambda f, w: w.pop("mcsim_now_ps"), r"mcsim_now_ps: MCSIM_ABI prototype, not declared"),
        (lambda f, w: f.pop("mcsim_destroy"), r"mcsim_destroy: declared in mcsim.native.abi, no MCSIM_ABI prototype"),
        (
            lambda f, w: f.update(mcsim_fabric_set_factories=("int64_t", ("void*", "void*", "void*", "uint32_t"))),
            r"mcsim_fabric_set_factories: C\+\+ takes \(void\*, void\*, void\*, uint32_t\)",
        ),
    ],
)
def test_a_change_on_one_side_only_is_found(edit, problem):
    found, want = prototypes(package_data.source_dir()), declared()
    edit(found, want)
    assert any(re.match(problem, line) for line in _check(found, want)), _check(found, want)
