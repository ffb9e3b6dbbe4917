# SPDX-License-Identifier: GPL-2.0-only
"""Sphinx extension: the commands page from the ``mcsim`` parser itself, so that it never drifts.

```{mcsim-command} allgather
```

renders one subcommand (``topo show`` for a nested one): its usage, what it does and every option with its
help and default, as ``mcsim allgather --help`` says them. At the end of a build, a subcommand that no
directive rendered is a warning (an error with ``sphinx-build -W``): a new command cannot go undocumented.

The functions above the Sphinx part (:func:`commands`, :func:`describe`) are plain Python over argparse, so
that a test can check what the page shows without Sphinx.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

WIDTH = 100  # the usage lines' width, whatever the terminal of the build


@dataclass(frozen=True)
class OptionDoc:
    """One argument of a command: how it is written (``--rate RATE``, ``file``) and its help with its default."""

    names: tuple[str, ...]  # option strings, or the positional's name
    metavar: str  # what follows the option ("" for a flag)
    help: str

    def written(self) -> str:
        """``--signalling-rate, --rate RATE``: the names, then what follows them."""
        return ", ".join(self.names) + (f" {self.metavar}" if self.metavar else "")


@dataclass(frozen=True)
class CommandDoc:
    """One subcommand as ``mcsim NAME --help`` shows it."""

    name: str  # "allgather", "topo show"
    summary: str  # the line ``mcsim --help`` gives it
    description: str
    usage: str
    options: tuple[OptionDoc, ...]  # in the parser's order; options hidden from --help left out
    subcommands: tuple[str, ...]  # a group's (``topo``: show, import, draw)


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def commands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """Every subcommand, nested ones as ``"topo show"``, in the parser's order: (its parser, its summary)."""
    found: dict[str, tuple[argparse.ArgumentParser, str]] = {}

    def walk(p: argparse.ArgumentParser, prefix: str) -> None:
        sub = _subparsers(p)
        if sub is None:
            return
        summaries = {a.dest: a.help or "" for a in sub._choices_actions}
        for name, child in sub.choices.items():
            full = f"{prefix}{name}"
            found[full] = (child, summaries.get(name, ""))
            walk(child, f"{full} ")

    walk(parser, "")
    return found


def _metavar(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if action.nargs == 0:
        return ""
    if not action.option_strings:
        return ""
    return formatter._format_args(action, formatter._get_default_metavar_for_optional(action))


def describe(parser: argparse.ArgumentParser, name: str) -> CommandDoc:
    """What the page shows of subcommand ``name`` (KeyError for one the parser does not have)."""
    p, summary = commands(parser)[name]
    formatter = p.formatter_class(prog=p.prog, width=WIDTH)
    usage_formatter = p.formatter_class(prog=p.prog, width=WIDTH)
    usage_formatter.add_usage(p.usage, p._actions, p._mutually_exclusive_groups, prefix="")
    options = []
    for action in p._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        names = tuple(action.option_strings) or (str(action.metavar or action.dest),)
        text = formatter._expand_help(action) if action.help else ""
        options.append(OptionDoc(names, _metavar(action, formatter), " ".join(text.split())))
    sub = _subparsers(p)
    return CommandDoc(
        name=name,
        summary=summary,
        description=p.description or "",
        usage=usage_formatter.format_help().strip(),
        options=tuple(options),
        subcommands=tuple(sub.choices) if sub is not None else (),
    )


def mcsim_parser() -> argparse.ArgumentParser:
    from mcsim.cli import build_parser

    return build_parser()


# ---- Sphinx: the directive and the check that every command is on the page ----


def setup(app: Any) -> dict[str, Any]:
    from docutils import nodes
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective

    logger = logging.getLogger(__name__)

    class CommandDirective(SphinxDirective):
        """``{mcsim-command} NAME``: the usage, summary and options of ``mcsim NAME``."""

        required_arguments = 1
        final_argument_whitespace = True

        def run(self) -> list[Any]:
            name = " ".join(self.arguments[0].split())
            try:
                doc = describe(mcsim_parser(), name)
            except KeyError:
                raise self.error(f"mcsim has no subcommand {name!r}") from None
            rendered = getattr(self.env, "mcsim_commands", {})
            rendered[name] = self.env.docname
            self.env.mcsim_commands = rendered
            out: list[Any] = [nodes.literal_block(text=doc.usage, language="text")]
            for text in (doc.summary, doc.description):
                if text:
                    out.append(nodes.paragraph(text=text))
            if doc.subcommands:
                out.append(nodes.paragraph(text="Subcommands: " + ", ".join(doc.subcommands) + "."))
            if doc.options:
                items = nodes.definition_list()
                for option in doc.options:
                    term = nodes.term()
                    term += nodes.literal(text=option.written())
                    definition = nodes.definition()
                    definition += nodes.paragraph(text=option.help)
                    items += nodes.definition_list_item("", term, definition)
                out.append(items)
            return out

    def purge(app: Any, env: Any, docname: str) -> None:
        rendered = getattr(env, "mcsim_commands", {})
        env.mcsim_commands = {k: v for k, v in rendered.items() if v != docname}

    def merge(app: Any, env: Any, docnames: Any, other: Any) -> None:
        env.mcsim_commands = {**getattr(env, "mcsim_commands", {}), **getattr(other, "mcsim_commands", {})}

    def check(app: Any, env: Any) -> None:
        rendered = getattr(env, "mcsim_commands", {})
        for name in commands(mcsim_parser()):
            if name not in rendered:
                logger.warning(f"mcsim {name}: no {{mcsim-command}} directive renders this subcommand")

    app.add_directive("mcsim-command", CommandDirective)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("env-check-consistency", check)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
