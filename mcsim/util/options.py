# SPDX-License-Identifier: GPL-2.0-only
"""The argparse pieces every ``mcsim`` command shares: a parser whose errors are one line (exit 2) and
whose every option remembers how it was given, so that a field given twice is refused and an error
names an option as the user typed it (an alias or the API field's name)."""

from __future__ import annotations

import argparse
import re
from typing import Any, NoReturn

from mcsim.errors import McsimError

HOST_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")  # a host or a range of hosts, ends included
# argparse's error for an option whose value starts with '-' (--delay -1ns: it takes -1ns for an option)
NO_VALUE = re.compile(r"^argument (-[^/ :]+)(?:/\S+)?: expected one argument$")


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit code 2, and which takes no abbreviated options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # a typo such as --rat must not silently mean --rate
        super().__init__(*args, **kwargs)
        # every option of every command remembers how it was given, so that main() refuses a field
        # given twice (:func:`refuse_repeats`) whichever command it belongs to
        self.register("action", None, Given)
        self.register("action", "store", Given)
        self.register("action", "store_true", GivenFlag)

    def error(self, message: str) -> NoReturn:
        m = NO_VALUE.match(message)
        if m is not None:  # the value may be there, read as an option: say how to give it
            message += f"; give its value, after '=' if it starts with '-' ({m[1]}=VALUE)"
        self.exit(2, f"mcsim: error: {message} (see {self.prog} --help)\n")


class Given(argparse.Action):
    """Store the value, and remember each option string the user typed for the field (an alias or
    the API field's name) in ``args.given[dest]``: an error names the option as typed
    (:func:`typed_option`), and a field given twice is refused (:func:`refuse_repeats`)."""

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, values: Any, opt: Any = None) -> None:
        setattr(ns, self.dest, values)
        if getattr(ns, "given", None) is None:
            ns.given = {}
        ns.given.setdefault(self.dest, []).append((opt, values))


class GivenFlag(Given):
    """A flag (store_true) remembered as :class:`Given` remembers a value."""

    def __init__(
        self,
        option_strings: list[str],
        dest: str,
        default: bool = False,
        required: bool = False,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, required=required, help=help)

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, values: Any, opt: Any = None) -> None:
        super().__call__(parser, ns, True, opt)


def given(args: argparse.Namespace) -> dict[str, list[tuple[str, Any]]]:
    """dest -> the (option as typed, value) pairs the user gave, in order (only :class:`Given` options)."""
    return getattr(args, "given", None) or {}


def typed(option: str, value: Any) -> str:
    """An option as the user gave it, for a message: ``--verify`` or ``--size='4KiB'``."""
    return option if value is True else f"{option}={value!r}"


def typed_option(args: argparse.Namespace, dest: str) -> str:
    """The option string of ``dest`` as typed (the last one), or its canonical name if it was not given."""
    uses = given(args).get(dest)
    return uses[-1][0] if uses else f"--{dest.replace('_', '-')}"


def refuse_repeats(args: argparse.Namespace) -> None:
    """A field given twice (two aliases, or one option twice) is refused: the last would win silently."""
    for dest, uses in given(args).items():
        if len(uses) < 2:
            continue
        (first, v1), (second, v2) = uses[:2]
        if first != second:
            raise McsimError(
                f"{args.command}: {typed(first, v1)} and {typed(second, v2)} set one field ({dest}); give one of them"
            )
        values = "" if v1 is True else f" ({v1!r}, then {v2!r})"
        hint = f"; several sizes go in one list, e.g. {first} 4KiB,1MiB" if dest == "bytes_per_rank" else ""
        raise McsimError(f"{args.command}: {first} given twice{values}; give it once{hint}")


class DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default in its help, except a default of None or False: the option was not
    given, and its help says what that means (e.g. "default: every host")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def parse_ports(text: str, graph: Any, where: str = "--pcap-ports") -> tuple[tuple[int, int], ...]:
    """Ports as ``NODE:PORT,...``, a node by its number or its name in ``graph`` (e.g. ``edge0:2``): (node, port)
    pairs in the order given, each once. Whether the port exists is the caller's check."""
    names = {str(d["name"]): n for n, d in graph.nodes(data=True) if "name" in d}
    ports: list[tuple[int, int]] = []
    for part in text.split(","):
        node_text, sep, port_text = part.strip().rpartition(":")
        if not sep or not port_text.isdigit() or not node_text:
            raise McsimError(f"{where}={text!r}: give ports as NODE:PORT, e.g. 16:0 or edge0:2")
        node = int(node_text) if node_text.isdigit() else names.get(node_text)
        if node is None or node not in graph:
            raise McsimError(f"{where}={text!r}: {node_text!r} is not a node of the topology (a number or a name)")
        if (node, int(port_text)) in ports:
            raise McsimError(f"{where}={text!r}: names port {node}:{port_text} twice")
        ports.append((node, int(port_text)))
    return tuple(ports)


def parse_hosts(text: str, hosts: int, where: str = "--group") -> tuple[int, ...]:
    """Hosts ``0,3,5``, ranges ``0-15`` (ends included) or ``all``: ascending, each once, each a host."""
    if text.strip() == "all":
        return tuple(range(hosts))
    chosen: set[int] = set()
    for part in text.split(","):
        m = HOST_RANGE.match(part.strip())
        if m is None:
            raise McsimError(f"{where}={text!r}: give hosts as 0,3,5 or ranges as 0-15, or all")
        lo, hi = int(m[1]), int(m[2] or m[1])
        if lo > hi or hi >= hosts:
            raise McsimError(f"{where}={text!r}: {part.strip()} is not a range of hosts 0..{hosts - 1}")
        chosen.update(range(lo, hi + 1))
    return tuple(sorted(chosen))
