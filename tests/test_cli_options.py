# SPDX-License-Identifier: GPL-2.0-only
"""The options of the mcsim command: named as the API fields (the old names are aliases), each bad one a
single exact line on stderr with exit code 2 before any run, the ones a combination reads accepted, and the
help naming the defaults of options that default to not given."""

import re

import pytest

from mcsim.cli import build_parser, main
from mcsim.config.dpa import DpaConfig
from mcsim.runs.commands import _collective_scenarios
from mcsim.runs.scenario import Scenario, scenario_of


def test_options_are_named_as_the_api_fields_and_the_old_names_are_aliases():
    parser = build_parser()
    new = parser.parse_args(["allgather", "--algorithm", "ring", "--bytes-per-rank", "4KiB"])
    old = parser.parse_args(["allgather", "--algo", "ring", "--size", "4KiB"])
    assert (new.algorithm, new.bytes_per_rank) == (old.algorithm, old.bytes_per_rank) == ("ring", "4KiB")
    assert parser.parse_args(["stream", "--signalling-rate", "1G"]).signalling_rate == "1G"
    assert parser.parse_args(["stream", "--rate", "1G"]).signalling_rate == "1G"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["allgather", "--bytes-per-rank", ","], "mcsim: error: --bytes-per-rank=',' has an empty size"),
        (["allgather", "--size", ","], "mcsim: error: --size=',' has an empty size"),
        (["stream", "--signalling-rate", "0Gbps"], "mcsim: error: --signalling-rate='0Gbps' must be > 0 bit/s"),
    ],
)
def test_an_error_names_the_option_as_typed(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


CLOCK = r"past 2\^62 ps = 53\.4 days, the simulated clock's limit"

# issue 30: every bad input of allgather, broadcast and stream is one exact line, exit 2, before any run
BAD_INPUT = [
    (
        ["stream", "--rate", "1bps"],
        rf"stream: --rate='1bps' takes 557162496s for --size='64MiB' \(--delay='100ns'\), {CLOCK}; give a higher "
        "rate, a smaller size or a shorter delay",
    ),
    (
        ["stream", "--size", "65536TiB"],
        rf"stream: --signalling-rate='56.25Gbps' takes \d+\.\d+s for --size='65536TiB' .*{CLOCK}; .*",
    ),
    (["stream", "--mtu", "0"], r"stream: mtu_b=0 must be > 0"),
    # a field given two ways, or one option twice: the last would win silently
    (
        ["allgather", "--size", "4KiB", "--bytes-per-rank", "1MiB"],
        r"allgather: --size='4KiB' and --bytes-per-rank='1MiB' set one field \(bytes_per_rank\); give one of them",
    ),
    (
        ["allgather", "--algo", "ring", "--algorithm", "mcast"],
        r"allgather: --algo='ring' and --algorithm='mcast' set one field \(algorithm\); give one of them",
    ),
    (
        ["broadcast", "--algorithm", "mcast", "--algo", "mcast"],
        r"broadcast: --algorithm='mcast' and --algo='mcast' set one field \(algorithm\); give one of them",
    ),
    (
        ["stream", "--rate", "1Gbps", "--signalling-rate", "2Gbps"],
        r"stream: --rate='1Gbps' and --signalling-rate='2Gbps' set one field \(signalling_rate\); give one of them",
    ),
    (
        ["allgather", "--size", "4KiB", "--size", "1MiB"],
        r"allgather: --size given twice \('4KiB', then '1MiB'\); give it once; several sizes go in one list, "
        r"e\.g\. --size 4KiB,1MiB",
    ),
    (
        ["stream", "--size", "1MiB", "--size", "2MiB"],
        r"stream: --size given twice \('1MiB', then '2MiB'\); give it once",
    ),
    (["broadcast", "--root", "1", "--root", "2"], r"broadcast: --root given twice \(1, then 2\); give it once"),
    (["allgather", "--verify", "--verify"], r"allgather: --verify given twice; give it once"),
    # ... whichever command the option belongs to (every parser's options remember how they were given)
    (["compare", "--quick", "--quick"], r"compare: --quick given twice; give it once"),
    (["compare", "--workers", "1", "--workers", "2"], r"compare: --workers given twice \(1, then 2\); give it once"),
    (["report", "--figures", "a", "--figures", "b"], r"report: --figures given twice \('a', then 'b'\); give it once"),
    (
        ["sweep", "s.toml", "--workers", "1", "--workers", "2"],
        r"sweep: --workers given twice \(1, then 2\); give it once",
    ),
    (
        ["sweep", "show", "s.sqlite", "--format", "csv", "--format", "json"],
        r"sweep: --format given twice \('csv', then 'json'\); give it once",
    ),
    (["build", "--force", "--force"], r"build: --force given twice; give it once"),
    # options that would do nothing in the combination
    (
        ["allgather", "--algorithm", "ring", "--roots", "4"],
        r"--roots=4 is the multicast protocol's; not for --algorithm ring",
    ),
    (
        ["allgather", "--algo", "ring", "--timeout-scale", "2"],
        r"--timeout-scale=2\.0 is the multicast protocol's; not for --algo ring",
    ),
    (
        ["allgather", "--algorithm", "ring", "--artifact-protocol"],
        r"--artifact-protocol is the multicast protocol's; not for --algorithm ring",
    ),
    (
        ["allgather", "--root", "1"],
        r"allgather: --root is for broadcast and reduce \(the rank that sends or gets the buffer\)",
    ),
    (
        ["broadcast", "--roots", "2"],
        r"broadcast: --roots is for allgather and allreduce \(the multicast Allgather: K roots at a time\)",
    ),
    (["reduce", "--roots", "2"], r"reduce: --roots is for allgather and allreduce \(the multicast Allgather: .*\)"),
    # an Allreduce's multicast Allgather (ring_mcast, innet_mcast) reads it; the ring does not
    (["allreduce", "--roots", "2"], r"--roots=2 is the multicast protocol's; not for --algorithm ring$"),
    (
        ["allreduce", "--algo", "tree", "--endpoints", "2"],
        r"--endpoints=2 is the multicast protocol's; not for --algo .*",
    ),
    (
        ["allreduce", "--algorithm", "innet_mcast", "--reduce-ps-per-byte", "3"],
        r"--reduce-ps-per-byte is the hosts' reduction's; not for --algorithm innet_mcast$",
    ),
    (
        ["allreduce", "--algorithm", "innet_mcast", "--ring-chunk", "8KiB"],
        r"--ring-chunk='8KiB' sizes the RDMA WRITEs of the RC algorithms; not for --algorithm innet_mcast, which "
        "sends datagrams of one MTU",
    ),
    (
        ["reduce-scatter", "--root", "1"],
        r"reduce-scatter: --root is for broadcast and reduce \(the rank that sends or gets the buffer\)",
    ),
    (
        ["allgather", "--reduce-ps-per-byte", "9"],
        r"allgather: --reduce-ps-per-byte is for reduce-scatter, allreduce, reduce \(the hosts' sums\)",
    ),
    (
        ["allreduce", "--algorithm", "innet", "--reduce-ps-per-byte", "9"],
        r"--reduce-ps-per-byte is the hosts' reduction's; not for --algorithm innet",
    ),
    (
        ["reduce-scatter", "--timeout-scale", "2"],
        r"--timeout-scale=2\.0 is the multicast protocol's; not for --algorithm ring",
    ),
    (
        ["allreduce", "--algorithm", "mcast"],
        r"unknown algorithm for allreduce 'mcast'; choose one of double_tree, halving_doubling, hier_ring, hier_tree, "
        r"innet, innet_mcast, nvls_ring, nvls_tree, ring, ring_mcast, tree; did you mean 'ring_mcast'\?",
    ),
    (["allgather", "--threads", "4"], r"--threads=4 is the DPA's; give --processor dpa"),
    (["allgather", "--threads", "4", "--processor", "gpu"], r"--threads=4 is the DPA's; give --processor dpa"),
    (
        ["allgather", "--topology", "rail-4x4", "--algorithm", "nvls_ring", "--processor", "gpu", "--roots", "2"],
        r"--roots=2 sets the multicast's roots; nvls_ring's NVLS multicast has every GPU of a node a root at once",
    ),
    (
        ["allgather", "--topology", "rail-4x4", "--algorithm", "nvls_ring"],
        r"Scenario: algorithm='nvls_ring' runs its node phases in the NVSwitch .* the commands' --processor gpu\)",
    ),
    (
        ["allreduce", "--receive-path", "zero_copy"],
        r"--receive-path is for datagrams \(mcast, ring_mcast, innet_mcast, hier_mcast, nvls_ring, nvls_tree, innet\); "
        r"ring receives RDMA "
        r"WRITEs "
        "in place",
    ),
    (["allreduce", "--overlap", "reduce_scatter"], r"allreduce: --overlap is for allgather \(FSDP's .*\)"),
    (["allgather", "--overlap-algorithm", "innet"], r"--overlap-algorithm goes with --overlap reduce_scatter"),
    (
        ["allgather", "--algo", "ring", "--endpoints", "2"],
        r"--endpoints=2 is the multicast protocol's; not for --algo ring",
    ),
    (["allgather", "--processor", "dpa", "--threads", "999"], r"DpaConfig: threads=999 is more than the DPA has .*"),
    (
        ["broadcast", "--ring-chunk", "8KiB"],
        r"--ring-chunk='8KiB' sizes the RDMA WRITEs of the RC algorithms; not for --algorithm mcast, which sends "
        r"datagrams of one MTU",
    ),
    (
        ["allreduce", "--algo", "innet", "--ring-chunk", "8KiB"],
        r"--ring-chunk='8KiB' sizes the RDMA WRITEs of the RC algorithms; not for --algo innet, which sends "
        r"datagrams of one MTU",
    ),
    (
        ["broadcast", "--algorithm", "chain", "--ring-chunk", "0"],
        r"Scenario: ring_chunk='0' must be 1\.\.2147483648 B .*",
    ),
    (["allreduce", "--reduce-ps-per-byte", "-1"], r"Scenario: reduce_ps_per_byte=-1 must be >= 0"),
    (
        ["allgather", "--algorithm", "rign", "--roots", "2"],
        r"unknown algorithm for allgather 'rign'; choose one of bruck, hier_mcast, hier_ring, mcast, nvls_ring, "
        r"recursive_doubling, ring; "
        r"did you mean 'ring'\?",
    ),
    # outputs and inputs checked before any run
    (["allgather", "--out", "/proc/x.csv"], r"--out='/proc/x.csv' cannot be written \(.*\)"),
    (["broadcast", "--out", "/no/such/x.json"], r"--out='/no/such/x.json': folder '/no/such' does not exist"),
    (["allgather", "--out", "/tmp"], r"--out='/tmp' must end in .csv, .json, .jsonl \(the file's format\)"),
    (["allgather", "--faults", "/no/such.toml"], r"faults file '/no/such.toml' does not exist"),
    # issue 49: two outputs naming one file, however spelt; an int option at 0; a folder to run; stream's limits
    (
        ["allgather", "--out", "/tmp/mcsim-d.csv", "--events", "/tmp/./mcsim-d.csv"],
        r"allgather: --out='/tmp/mcsim-d\.csv' and --events='/tmp/\./mcsim-d\.csv' name one file "
        r"\(/tmp/mcsim-d\.csv\); give each output a file of its own",
    ),
    (
        ["broadcast", "--pcap", "/tmp/mcsim-d.csv", "--queue-trace", "/tmp/mcsim-d.csv", "--queue-ports", "16:0"],
        r"broadcast: --queue-trace='/tmp/mcsim-d\.csv' and --pcap='/tmp/mcsim-d\.csv' name one file "
        r"\(/tmp/mcsim-d\.csv\); give each output a file of its own",
    ),
    (["allgather", "--processor", "dpa", "--threads", "0"], r"DpaConfig: threads=0 must be >= 1; the DPA has .*"),
    (
        ["run", "/tmp"],
        r"run: '/tmp' is a folder; run takes a Python script \(or a folder with a __main__\.py\), e\.g\. "
        r"mcsim run scenarios/link_stream\.py",
    ),
    (
        ["stream", "--mtu", "1MiB"],
        r"stream: --mtu='1MiB' is 1048576 B, past the largest MTU, 4096 B \(InfiniBand's largest: IB_MTUS in "
        r"mcsim\.config\.rdma\); give at most 4KiB",
    ),
    (
        ["stream", "--header-bytes", "1MiB"],
        r"stream: --header-bytes='1MiB' is 1048576 B, past the most a packet carries beyond its payload and the "
        r"16-byte fabric header, 106 B \(MAX_WIRE_HEADER_B 86 in mcsim\.config\.rdma, and RoCE's 20 bytes of "
        r"preamble and gap\)",
    ),
    (
        ["report", "-o", "/tmp/mcsim-r.pdf"],
        r"report: -o='/tmp/mcsim-r\.pdf' must end in \.html \(the report is one HTML page; a browser prints it "
        r"as a PDF\)",
    ),
]


@pytest.mark.parametrize(("argv", "message"), BAD_INPUT)
def test_bad_collective_and_stream_input_is_one_exact_line_before_any_run(argv, message, monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("a run started")

    monkeypatch.setattr(Scenario, "run", never)
    monkeypatch.setattr("mcsim.runs.commands.stream", never)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.fullmatch(f"mcsim: error: {message}\n", err), err


def test_an_option_that_the_combination_reads_is_accepted():
    parse = build_parser().parse_args
    (ring,) = _collective_scenarios(parse(["allgather", "--algorithm", "ring", "--size", "4KiB", "--ranks", "4"]))
    assert ring == Scenario(algorithm="ring", bytes_per_rank="4KiB", ranks=4)
    argv = ["allgather", "--roots", "3", "--timeout-scale", "2", "--artifact-protocol"]
    (mcast,) = _collective_scenarios(parse(argv))
    assert (mcast.roots, mcast.timeout_scale, mcast.barriers) == (3, 2.0, 2)
    (bcast,) = _collective_scenarios(parse(["broadcast", "--root", "5", "--timeout-scale", "3"]))
    assert (bcast.root, bcast.timeout_scale) == (5, 3.0)
    (ar,) = _collective_scenarios(parse(["allreduce", "--size", "4KiB", "--reduce-ps-per-byte", "9"]))
    assert ar == Scenario(collective="allreduce", algorithm="ring", bytes_per_rank="4KiB", reduce_ps_per_byte=9)
    argv = ["broadcast", "--algorithm", "binomial", "--ring-chunk", "8KiB", "--root", "3", "--size", "4KiB"]
    (tree,) = _collective_scenarios(parse(argv))
    assert tree == Scenario(
        collective="broadcast", algorithm="binomial", ring_chunk="8KiB", root=3, bytes_per_rank="4KiB"
    )
    argv = ["reduce", "--algorithm", "chain", "--root", "2", "--reduce-ps-per-byte", "0", "--size", "4KiB"]
    (red,) = _collective_scenarios(parse(argv))
    assert red == Scenario(collective="reduce", algorithm="chain", root=2, reduce_ps_per_byte=0, bytes_per_rank="4KiB")
    argv = ["allgather", "--processor", "dpa", "--threads", "4", "--endpoints", "4", "--receive-path", "zero_copy"]
    (dpa,) = _collective_scenarios(parse([*argv, "--overlap", "reduce_scatter", "--overlap-algorithm", "innet"]))
    assert dpa == scenario_of(
        processor=DpaConfig(threads=4), endpoints=4, staging=False, overlap="reduce_scatter", overlap_algorithm="innet"
    )
    (rs,) = _collective_scenarios(parse(["reduce-scatter", "--algo", "innet", "--size", "4KiB"]))
    assert rs == Scenario(collective="reduce_scatter", algorithm="innet", bytes_per_rank="4KiB")
    # a two-phase Allreduce takes its ring's and its multicast Allgather's options
    argv = ["allreduce", "--algo", "ring_mcast", "--roots", "3", "--endpoints", "2", "--ring-chunk", "8KiB"]
    (two,) = _collective_scenarios(parse([*argv, "--receive-path", "zero_copy", "--reduce-ps-per-byte", "7"]))
    assert two == scenario_of(
        collective="allreduce",
        algorithm="ring_mcast",
        roots=3,
        endpoints=2,
        ring_chunk="8KiB",
        staging=False,
        reduce_ps_per_byte=7,
    )


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (
            "allgather",
            [
                "--roots K mcast, ring_mcast, innet_mcast, hier_mcast: roots multicasting at once (default: 2)",
                "(default: 5)",
            ],
        ),
        ("broadcast", ["the root rank (default: 0)", "(default: 1MiB)", "binomial or chain or mcast"]),
        (
            "allreduce",
            [
                "double_tree or halving_doubling or hier_ring or hier_tree or innet or innet_mcast or nvls_ring or "
                "nvls_tree or ring or ring_mcast or tree "
                "(--algo: the same) "
                "(default: ring)",
                "(default: 68; 0: free)",
            ],
        ),
        ("reduce-scatter", ["innet or nvls_ring or ring (--algo: the same) (default: ring)"]),
        ("stream", ["(default: 56.25Gbps)", "(default: 64MiB)"]),
    ],
)
def test_help_names_the_defaults_of_options_that_default_to_not_given(command, shown, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines where it likes
    for words in shown:
        assert " ".join(words.split()) in text
    assert "default: None" not in text and "default: False" not in text
