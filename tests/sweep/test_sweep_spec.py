# SPDX-License-Identifier: GPL-2.0-only
"""Sweep specs: the expansion of axes and zips (counts, order, labels), dotted axes into the configs,
a base Scenario, the dict round trip, TOML files, and one McsimError line for every bad spec (naming
the run for a combination Scenario rejects). No simulation: runs() only builds Scenarios."""

import itertools
import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import FabricConfig
from mcsim.config.rdma import RcConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.sweep import spec as spec_module
from mcsim.sweep.spec import MAX_RUNS, Run, SweepSpec
from mcsim.units import parse_rate, parse_size

RATES = ["56Gbps", "100Gbps", "200Gbps", "400Gbps", "800Gbps", "1.6Tbps"]
SIZES = ["4KiB", "1MiB"]
ALGORITHMS = ["ring", "mcast"]
BASE = {"topology": "fat-tree-k4", "processor": {"kind": "dpa", "threads": 16}}

LINK_SPEED_TOML = """
name = "link-speed"
[base]
topology = "fat-tree-k4"
processor = { kind = "dpa", threads = 16 }
[axes]
rate = ["56Gbps", "100Gbps", "200Gbps", "400Gbps", "800Gbps", "1.6Tbps"]
bytes_per_rank = ["4KiB", "1MiB"]
algorithm = ["ring", "mcast"]
[[zip]]
"processor.threads" = [4, 16]
endpoints = [4, 16]
"""


def link_speed() -> SweepSpec:
    zipped = {"processor.threads": [4, 16], "endpoints": [4, 16]}
    axes = {"rate": RATES, "bytes_per_rank": SIZES, "algorithm": ALGORITHMS}
    return SweepSpec(name="link-speed", base=BASE, axes=axes, zips=(zipped,))


def one_line_error(spec: SweepSpec | None = None, **kwargs) -> str:
    """The McsimError of making ``SweepSpec(**kwargs)`` (or of ``spec.runs()``): exactly one line."""
    with pytest.raises(McsimError) as info:
        (spec or SweepSpec(**kwargs)).runs()
    text = str(info.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# ---------------------------------------------------------------------------------------------
# expansion


def test_product_times_zip_in_order_last_dimension_fastest():
    runs = link_speed().runs()
    assert len(runs) == 6 * 2 * 2 * 2 == 48
    expected = itertools.product(RATES, SIZES, ALGORITHMS, [(4, 4), (16, 16)])
    for i, (run, (rate, size, algorithm, (threads, endpoints))) in enumerate(zip(runs, expected, strict=True)):
        assert run.index == i
        assert run.params == {
            "rate": rate,
            "bytes_per_rank": size,
            "algorithm": algorithm,
            "processor.threads": threads,
            "endpoints": endpoints,
        }
        sc = run.scenario
        assert sc.to_dict()["nominal_rate_bps"] == parse_rate(rate)
        assert (sc.bytes_per_rank_b, sc.algorithm) == (parse_size(size), algorithm)
        assert (sc.rdma.processor.threads, sc.endpoints) == (threads, endpoints)
        assert isinstance(sc.rdma.processor, DpaConfig)
    # the mixed radix: run 37 = ((rate 4 * 2 + size 1) * 2 + algorithm 0) * 2 + zip row 1
    assert runs[37].label == "rate=800Gbps bytes_per_rank=1MiB algorithm=ring processor.threads=16 endpoints=16"
    assert len({r.scenario.key() for r in runs}) == 48


def test_two_zips_are_two_dimensions_after_the_axes():
    spec = SweepSpec(
        name="z",
        base=BASE,
        axes={"algorithm": ALGORITHMS},
        zips=({"roots": [1, 2, 4], "batch": [8, 16, 32]}, {"seed": [1, 2], "loss": [0.0, 0.001]}),
    )
    runs = spec.runs()
    assert len(runs) == 2 * 3 * 2
    assert [r.label for r in runs[:3]] == [
        "algorithm=ring roots=1 batch=8 seed=1 loss=0.0",
        "algorithm=ring roots=1 batch=8 seed=2 loss=0.001",
        "algorithm=ring roots=2 batch=16 seed=1 loss=0.0",
    ]
    for r in runs:
        sc = r.scenario
        assert (sc.roots, sc.batch) in [(1, 8), (2, 16), (4, 32)]
        assert (sc.fabric.seed, sc.fabric.loss) in [(1, 0.0), (2, 0.001)]


def test_labels_write_values_as_the_spec_does():
    spec = SweepSpec(name="l", base=BASE, axes={"verify": [False, True], "mtu": ["2KiB", 4096], "loss": [1e-3]})
    assert [r.label for r in spec.runs()] == [
        "verify=false mtu=2KiB loss=0.001",
        "verify=false mtu=4096 loss=0.001",
        "verify=true mtu=2KiB loss=0.001",
        "verify=true mtu=4096 loss=0.001",
    ]


def test_no_axes_is_one_run_of_the_base():
    (run,) = SweepSpec(name="one", base={"topology": "fat-tree-k4", "bytes_per_rank": "4KiB"}).runs()
    assert run == Run(index=0, label="", params={}, scenario=Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB"))


def test_an_axis_overrides_the_base():
    spec = SweepSpec(name="o", base={"topology": "fat-tree-k4", "algorithm": "mcast"}, axes={"algorithm": ["ring"]})
    assert spec.runs()[0].scenario.algorithm == "ring"


def test_dotted_axes_reach_the_nested_configs():
    spec = SweepSpec(
        name="dotted",
        base={"topology": "fat-tree-k4", "processor": {"kind": "dpa", "threads": 16, "cores": 8}},
        axes={
            "processor.threads": [2],
            "rc.retry_cnt": [3],
            "fabric.switch_buffer_b": [65536],
            "rdma.rq_depth": [64],
            "rdma.rc.ack_interval": [4],
        },
    )
    sc = spec.runs()[0].scenario
    assert sc.rdma.processor == DpaConfig(threads=2, cores=8)  # the base's processor, one field changed
    assert sc.rdma.rc == RcConfig(retry_cnt=3, ack_interval=4)
    assert sc.fabric.switch_buffer_b == 65536 and sc.rdma.rq_depth == 64


def test_tables_in_the_base_and_in_axes_become_configs():
    spec = SweepSpec(
        name="tables",
        base={"topology": "fat-tree-k4", "fabric": {"switch_latency_ps": 5000}, "rc": {"retry_cnt": 2}},
        axes={"processor": [{"kind": "host_cpu"}, {"kind": "dpa", "threads": 8}]},
    )
    a, b = (r.scenario for r in spec.runs())
    assert a.fabric.switch_latency_ps == b.fabric.switch_latency_ps == 5000
    assert a.rdma.rc.retry_cnt == 2
    assert isinstance(b.rdma.processor, DpaConfig) and b.rdma.processor.threads == 8


def test_a_base_scenario_is_where_runs_start():
    base = scenario_of(
        topology="fat-tree-k4",
        rate="100Gbps",
        algorithm="ring",
        bytes_per_rank="4KiB",
        roots=2,
        processor=DpaConfig(threads=8),
        fabric=FabricConfig(switch_latency_ps=7000),
    )
    spec = SweepSpec(
        name="from-scenario", base=base, axes={"bytes_per_rank": ["4KiB", "8KiB"], "processor.threads": [4]}
    )
    runs = spec.runs()
    assert runs[0].scenario == scenario_of(
        topology="fat-tree-k4",
        rate="100Gbps",
        algorithm="ring",
        bytes_per_rank="4KiB",
        roots=2,
        processor=DpaConfig(threads=4),
        fabric=FabricConfig(switch_latency_ps=7000),
    )
    assert runs[1].scenario.bytes_per_rank_b == 8192 and runs[1].scenario.roots == 2
    assert spec.to_dict()["base"] == {"base_scenario": base.to_dict()}
    assert SweepSpec.from_dict(spec.to_dict()) == spec


def test_to_dict_is_json_and_reads_back_equal():
    spec = SweepSpec(
        name="python",
        base={"topology": "fat-tree-k4", "processor": DpaConfig(threads=8), "rc": RcConfig(retry_cnt=1)},
        axes={"rate": ("56Gbps", "100Gbps")},
        zips=[{"roots": (1, 2), "batch": [4, 8]}],
    )
    data = json.loads(json.dumps(spec.to_dict()))
    assert data["base"]["processor"]["kind"] == "dpa" and data["zip"] == [{"roots": [1, 2], "batch": [4, 8]}]
    again = SweepSpec.from_dict(data)
    assert again == spec
    assert [(r.label, r.scenario.key()) for r in again.runs()] == [(r.label, r.scenario.key()) for r in spec.runs()]


def test_toml_spec_expands_like_the_python_one(tmp_path):
    path = tmp_path / "link-speed.toml"
    path.write_text(LINK_SPEED_TOML)
    spec = SweepSpec.from_toml(path)
    assert spec == link_speed()
    assert SweepSpec.from_dict(spec.to_dict()) == spec


def test_relative_topology_paths_resolve_against_the_spec_folder(tmp_path, monkeypatch, star):
    specs = tmp_path / "specs"
    (specs / "topo").mkdir(parents=True)
    for hosts in (4, 6):
        (specs / "topo" / f"star-{hosts}.toml").write_text(open(star(hosts)).read())
    (specs / "s.toml").write_text(
        'name = "rel"\n[base]\ntopology = "topo/star-4.toml"\n[axes]\nbytes_per_rank = ["4KiB"]\n'
        '[[zip]]\ntopology = ["topo/star-6.toml", "fat-tree-k4"]\nranks = [6, 16]\n'
    )
    monkeypatch.chdir(tmp_path)  # not the spec's folder
    spec = SweepSpec.from_toml("specs/s.toml")
    assert spec.base["topology"] == str(specs / "topo" / "star-4.toml")
    assert [(r.scenario.topology, r.scenario.n_ranks) for r in spec.runs()] == [
        (str(specs / "topo" / "star-6.toml"), 6),
        ("fat-tree-k4", 16),  # a name stays a name
    ]


# ---------------------------------------------------------------------------------------------
# bad specs: one line each, naming what is wrong


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": ""}, r"^sweep: name='' must be a non-empty string"),
        (
            {"name": "x", "axes": {"rat": ["56Gbps"]}},
            r"axis 'rat': unknown Scenario keyword 'rat'; .*did you mean 'rate'",
        ),
        ({"name": "x", "base": {"topo": "fat-tree-k4"}}, r"\[base\]: unknown Scenario keyword 'topo'"),
        ({"name": "x", "axes": {"rate": "56Gbps"}}, r"\[axes\]: rate='56Gbps' must be a list"),
        ({"name": "x", "axes": {"rate": []}}, r"\[axes\]: axis 'rate' is empty"),
        ({"name": "x", "axes": {"rate": ["56Gbps", "56Gbps"]}}, r"axis 'rate' lists \"56Gbps\" twice"),
        (
            {"name": "x", "zips": [{"roots": [1, 2], "batch": [4]}]},
            r"\[\[zip\]\] 0: the axes of a zip must have equal lengths \(roots has 2, batch has 1\)",
        ),
        ({"name": "x", "zips": [{}]}, r"\[\[zip\]\] 0: is empty"),
        ({"name": "x", "axes": {"seed": [1]}, "zips": [{"seed": [2]}]}, r"axis 'seed' appears twice"),
        (
            {"name": "x", "axes": {"processor.threads": [4]}},
            r"needs a processor in the base: a \[base\] processor table",
        ),
        ({"name": "x", "base": BASE, "axes": {"processor.thread": [4]}}, r"unknown DpaConfig field 'thread'"),
        ({"name": "x", "axes": {"rc.retries": [1]}}, r"axis 'rc.retries': unknown RcConfig field 'retries'"),
        ({"name": "x", "axes": {"nic.mtu": [1]}}, r"axis 'nic.mtu': not a Scenario keyword or a config field"),
        ({"name": "x", "base": {"processor": {"threads": 4}}}, r"\[base\]: processor needs a kind"),
        ({"name": "x", "base": {"processor": {"kind": "gpu"}}}, r"\[base\]: unknown processor kind 'gpu'"),
        ({"name": "x", "base": {"fabric": {"buffer": 1}}}, r"unknown FabricConfig field 'buffer'"),
    ],
)
def test_a_bad_spec_is_one_line(kwargs, match):
    text = one_line_error(**kwargs)
    assert text.startswith("sweep")
    assert re.search(match, text), text


@pytest.mark.parametrize(
    ("axes", "index", "label"),
    [
        ({"rate": ["56Gbps", "100Gbs"]}, 1, "rate=100Gbs"),  # a bad unit
        ({"ranks": [4, 16], "roots": [1, 8]}, 1, "ranks=4 roots=8"),  # fine alone, not together
        # a host reduction sums whole 32-bit integers in verify mode; an Allgather has no such need
        (
            {
                "algorithm": ["ring"],
                "collective": ["allgather", "reduce_scatter"],
                "verify": [True],
                "ring_chunk": ["1023B"],
            },
            1,
            None,
        ),
        ({"rc.retry_cnt": [7, 8]}, 1, "rc.retry_cnt=8"),
        ({"processor": [{"kind": "dpa", "threads": 300}]}, 0, 'processor={"kind":"dpa","threads":300}'),
    ],
)
def test_a_combination_scenario_rejects_names_the_run(axes, index, label):
    spec = SweepSpec(name="bad-run", base={"topology": "fat-tree-k4", "bytes_per_rank": "4KiB"}, axes=axes)
    text = one_line_error(spec)
    params = dict(zip(axes, list(itertools.product(*axes.values()))[index], strict=True))
    label = label or " ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in params.items())
    prefix = f"sweep 'bad-run' run {index} ({label}): "
    assert text.startswith(prefix), text
    if not any("." in k or k == "processor" for k in params):  # Scenario's own message, word for word
        with pytest.raises(McsimError) as direct:
            Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB", **params)
        assert text == prefix + str(direct.value)


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n[axes]\nrate = ["56Gbps" "100Gbps"]\nseed = [1]\n')
    with pytest.raises(McsimError, match=r"broken\.toml.*not valid TOML.*line 3") as info:
        SweepSpec.from_toml(path)
    assert "\n" not in str(info.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(McsimError, match=r"^sweep spec '.*nothing\.toml' does not exist$"):
        SweepSpec.from_toml(tmp_path / "nothing.toml")
    with pytest.raises(McsimError, match=r"^sweep spec '.*' is a folder, not a file$"):
        SweepSpec.from_toml(tmp_path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('name = "x"\ncolour = 1\n', r"unknown key 'colour'; choose one of axes, base, name, workload, zip"),
        ("[axes]\nrate = [1]\n", r"name is missing"),
        ('name = "x"\nzip = 3\n', r"zip=3 must be a list of tables"),
        (
            'name = "x"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n'
            '[axes]\nrate = ["56Gbps", "5Gbpz"]\n',
            "run 1",
        ),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", r"not valid TOML for mcsim \(arrays or tables nested too deep\)$"),
        (b"\x00\xff\xfe binary", r"not valid TOML \(not UTF-8 text: byte 0xff at 1\)$"),
    ],
)
def test_bad_toml_specs_are_one_line(tmp_path, text, match):
    path = tmp_path / "spec.toml"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    with pytest.raises(McsimError, match=match) as info:
        SweepSpec.from_toml(path).runs()
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# property: the number of runs is the product of the dimensions, and every label differs

POOLS = {
    "rate": RATES,
    "bytes_per_rank": ["4KiB", "8KiB", "64KiB", 1000, 12345],
    "algorithm": ALGORITHMS,
    "roots": [1, 2, 3, 4],
    "batch": [1, 8, 64],
    "seed": [0, 1, 2, 99],
    "endpoints": [1, 2, 4],
    "loss": [0.0, 1e-4, 0.5],
    "processor.threads": [1, 4, 16, 256],
    "rc.retry_cnt": [0, 3, 7],
}


@st.composite
def specs(draw):
    names = draw(st.permutations(list(POOLS)))
    n_axes = draw(st.integers(0, 4))
    axes = {n: draw(st.lists(st.sampled_from(POOLS[n]), min_size=1, max_size=3, unique=True)) for n in names[:n_axes]}
    zips, rest = [], names[n_axes:]
    for _ in range(draw(st.integers(0, 2))):
        members, rest = rest[:2], rest[2:]
        length = draw(st.integers(1, 3))
        columns = [draw(st.lists(st.sampled_from(POOLS[n]), min_size=length, max_size=length)) for n in members]
        if len(set(zip(*columns, strict=True))) == length:  # no row twice
            zips.append(dict(zip(members, columns, strict=True)))
    return SweepSpec(name="prop", base=BASE, axes=axes, zips=tuple(zips))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_runs_are_the_product_and_labels_differ(spec):
    runs = spec.runs()
    dims = [len(v) for v in spec.axes.values()] + [len(next(iter(z.values()))) for z in spec.zips]
    assert len(runs) == math.prod(dims)
    assert len({r.label for r in runs}) == len(runs)
    assert [r.index for r in runs] == list(range(len(runs)))
    names = [*spec.axes, *(n for z in spec.zips for n in z)]
    assert all(list(r.params) == names for r in runs)


# ---------------------------------------------------------------------------------------------
# the size of a product: from the axis lengths, before anything is expanded


def _seeds(n: int) -> list[int]:
    return list(range(n))


HUGE = {"seed": _seeds(1000), "bytes_per_rank": _seeds(650), "ranks": _seeds(1000)}  # 6.5e8 runs


@pytest.mark.parametrize(
    ("axes", "zips", "match"),
    [
        (HUGE, (), r"^sweep 'x' has 650,000,000 runs \(1000 seed x 650 bytes_per_rank x 1000 ranks\); "),
        (
            {**HUGE, "mtu": _seeds(1000)},
            (),
            r"^sweep 'x' has 6.5e11 runs \(1000 seed x 650 bytes_per_rank x 1000 ranks x 1000 mtu\); ",
        ),
        (
            {"seed": _seeds(400)},
            ({"ranks": _seeds(251), "roots": _seeds(251)},),
            r"^sweep 'x' has 100,400 runs \(400 seed x 251 \[\[zip\]\] 0\); ",
        ),
    ],
)
def test_a_product_above_the_limit_is_one_line_before_any_run_is_built(monkeypatch, axes, zips, match):
    built = []
    monkeypatch.setattr(spec_module, "_scenario", lambda *a: built.append(a))  # counts the runs built
    spec = SweepSpec(name="x", base={"topology": "fat-tree-k4"}, axes=axes, zips=zips)
    assert spec.size() == math.prod(len(v) for v in axes.values()) * (251 if zips else 1)
    text = one_line_error(spec)
    assert re.search(match + rf"at most {MAX_RUNS:,} \(every run is planned in memory", text), text
    assert text.endswith("split it into several sweeps (they may share one --store) or shorten an axis")
    with pytest.raises(McsimError, match="at most"):
        next(spec.iter_runs())
    assert built == []  # nothing was expanded


def test_a_product_at_the_limit_is_expanded_one_run_at_a_time(monkeypatch):
    built = []
    real = spec_module._scenario
    monkeypatch.setattr(spec_module, "_scenario", lambda *a: built.append(1) or real(*a))
    spec = SweepSpec(name="x", base={"topology": "fat-tree-k4"}, axes={"seed": _seeds(MAX_RUNS)})
    assert spec.check_size() == MAX_RUNS
    first = list(itertools.islice(spec.iter_runs(), 3))
    assert [r.label for r in first] == ["seed=0", "seed=1", "seed=2"] and len(built) == 3


def test_a_scenario_sweeps_faults_files_are_read_from_the_specs_folder(tmp_path, monkeypatch):
    """faults = "f.toml" (in the base or an axis) is what --faults f.toml gives a collective command, read from the
    sweep file's folder: its content enters the run's key (it was refused: "faults='f.toml' must be a
    mcsim.config.fabric.Faults")."""
    from mcsim.config.faults_file import load_faults
    from mcsim.sweep import runner

    monkeypatch.chdir(tmp_path)
    vers = runner.versions()
    keys = []
    for folder, links in (
        ("a", "link_loss = [{u = 0, v = 16, p = 1e-3}]"),
        ("b", "link_loss = [{u = 0, v = 16, p = 2e-3}]"),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "f.toml").write_text(f"{links}\n")
        spec = tmp_path / folder / "s.toml"
        spec.write_text(
            'name = "f"\n[base]\ntopology = "fat-tree-k4"\nfaults = "f.toml"\n[axes]\nfaults = ["f.toml"]\n'
        )
        (run,) = SweepSpec.from_toml(spec).runs()
        assert run.scenario is not None and run.scenario.faults == load_faults(tmp_path / folder / "f.toml")
        keys.append(runner.key_of(run, vers))
    assert keys[0] != keys[1]
    (tmp_path / "a" / "s.toml").write_text('name = "f"\n[base]\ntopology = "fat-tree-k4"\nfaults = "gone.toml"\n')
    with pytest.raises(
        McsimError, match=r"^sweep spec '\S*s\.toml': \[base\] faults: faults file '/\S+/gone\.toml' does not"
    ):
        SweepSpec.from_toml(tmp_path / "a" / "s.toml")
