# SPDX-License-Identifier: GPL-2.0-only
"""The documentation cannot drift from the code: every subcommand and option is on the commands page
(generated from the parser), every public module is found for the API pages, every model's page is
included, and the README stays short with links that lead somewhere. No Sphinx needed: the local
extensions' logic is plain Python (docs/_ext/)."""

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from mcsim.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def _extension(name: str):
    spec = importlib.util.spec_from_file_location(name, DOCS / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


cli_doc = _extension("mcsim_cli")
api_doc = _extension("mcsim_api")
models_doc = _extension("mcsim_models")


def _shown_options(p: argparse.ArgumentParser) -> set[str]:
    """Every option string (or positional) that ``--help`` shows, read from the parser's actions."""
    shown = set()
    for action in p._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        shown |= set(action.option_strings) or {str(action.metavar or action.dest)}
    return shown


def test_every_subcommand_and_option_is_in_the_generated_page():
    parser = build_parser()
    names = cli_doc.commands(parser)
    # the walk reaches the top level and the nested ones (mcsim topo show)
    assert {"build", "allgather", "stream", "topo", "topo show", "topo import", "topo draw", "workload"} <= set(names)
    for name, (p, _) in names.items():
        doc = cli_doc.describe(parser, name)
        written = " ".join(option.written() for option in doc.options)
        for option in _shown_options(p):
            assert option in written, f"mcsim {name}: {option} is not on the page"
        assert doc.usage.startswith(f"mcsim {name}")
        assert all(option.help for option in doc.options if option.names[0].startswith("--")), name
    assert cli_doc.describe(parser, "topo").subcommands == ("show", "import", "draw")


def test_the_page_shows_an_options_default_and_aliases_as_help_does():
    doc = cli_doc.describe(build_parser(), "stream")
    rate = next(o for o in doc.options if "--rate" in o.names)
    assert rate.written() == "--signalling-rate, --rate RATE"
    assert rate.help.endswith("(default: 56.25Gbps)")
    with pytest.raises(KeyError):
        cli_doc.describe(build_parser(), "no-such-command")


def test_every_subcommand_has_its_section_on_the_commands_page():
    directives = re.findall(r"^```\{mcsim-command\} (.+)$", (DOCS / "commands.md").read_text(), re.M)
    assert len(directives) == len(set(directives)), "a command rendered twice"
    assert set(directives) == set(cli_doc.commands(build_parser()))


def test_every_public_module_is_found_for_the_api_pages():
    modules = api_doc.public_modules()
    by_file = set()
    for path in (REPO / "mcsim").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not any(p.startswith("_") for p in parts) and not {"ns3_modules", "topologies"} & set(parts):
            by_file.add(".".join(parts))
    assert set(modules) == by_file
    assert {"mcsim", "mcsim.cli", "mcsim.runs.scenario", "mcsim.routing.commands", "mcsim.native.abi"} <= set(modules)
    assert "mcsim.__main__" not in modules and not any(".ns3_modules" in m for m in modules)
    assert ".. automodule:: mcsim.runs.scenario" in api_doc.page("mcsim.runs.scenario")


def test_a_module_that_appears_is_found_without_a_list_to_edit(tmp_path):
    package = tmp_path / "mcsim"
    (package / "runs").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "_private.py", "runs/__init__.py", "runs/jobs.py"):
        (package / name).write_text("")
    (package / "ns3_modules" / "x").mkdir(parents=True)
    (package / "ns3_modules" / "x" / "helper.py").write_text("")
    assert api_doc.public_modules(package) == ["mcsim", "mcsim.runs", "mcsim.runs.jobs"]


def test_every_model_page_is_included_and_its_links_lead_to_files():
    pages = sorted((REPO / "mcsim" / "ns3_modules").glob("*/doc/*.md"))
    assert pages
    for page in pages:
        module = page.parent.parent.name
        including = DOCS / "models" / f"{module}.md"
        assert f"../../mcsim/ns3_modules/{module}/doc/{page.name}" in including.read_text(), including
        relinked = models_doc.relink(page.read_text(), page, including.parent, DOCS / "models")
        for target in re.findall(r"\]\(([^)\s#]+)", relinked):
            if "://" not in target:
                assert (including.parent / target).exists(), f"{page.name}: {target}"


def test_a_link_between_model_pages_goes_to_the_page_on_the_site():
    rdma = REPO / "mcsim" / "ns3_modules" / "rdma" / "doc" / "rdma.md"
    text = "see [fabric](../../fabric/doc/fabric.md#pfc) and [the NIC](../model/nic.h)"
    out = models_doc.relink(text, rdma, DOCS / "models", DOCS / "models")
    assert out == "see [fabric](fabric.md#pfc) and [the NIC](../../mcsim/ns3_modules/rdma/model/nic.h)"


def test_the_readme_is_short_and_its_links_into_docs_exist():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    links = re.findall(r"\]\((docs/[^)#\s]+)", text)
    assert len(links) >= 10, "the README links into the documentation"
    for link in links:
        assert (REPO / link).is_file(), link


def test_the_readme_names_the_test_command_ci_runs():
    ci = (REPO / ".ci" / "run").read_text()
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^make test$", ci, re.M) and re.search(r"^make docs$", ci, re.M)
    assert re.search(r"^test:", makefile, re.M) and re.search(r"^docs:", makefile, re.M)
    assert "make test" in (REPO / "README.md").read_text()
