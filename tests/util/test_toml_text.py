# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.util.toml_text: what it writes, tomllib reads back to the same data."""

from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcsim.errors import McsimError
from mcsim.sweep import SweepSpec
from mcsim.util import toml_text

keys = st.text(min_size=1, max_size=8)
scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=8)
tables = st.recursive(
    st.dictionaries(keys, values, max_size=4),
    lambda inner: st.dictionaries(keys, values | inner | st.lists(inner, min_size=1, max_size=2), max_size=4),
    max_leaves=6,
)


@settings(max_examples=300, derandomize=True)
@given(tables)
def test_document_reads_back_to_the_same_data(data):
    assert tomllib.loads(toml_text.document(data)) == data


def test_none_is_left_out_of_a_table_and_refused_in_an_array():
    assert tomllib.loads(toml_text.document({"a": 1, "b": None, "t": {"c": None}})) == {"a": 1, "t": {}}
    with pytest.raises(McsimError, match="no form for None"):
        toml_text.document({"a": [1, None]})
    with pytest.raises(McsimError, match="no form for b'x'"):
        toml_text.value(b"x")


def test_special_floats_and_quoted_keys():
    doc = tomllib.loads(toml_text.document({"processor.threads": [4, 8], "x y": math.inf, "n": -math.inf}))
    assert doc == {"processor.threads": [4, 8], "x y": math.inf, "n": -math.inf}
    assert math.isnan(tomllib.loads(toml_text.document({"v": math.nan}))["v"])


def test_sweep_spec_to_toml_gives_the_same_runs(tmp_path):
    spec = SweepSpec(
        name="s",
        base={"topology": "fat-tree-k4", "ranks": None, "processor": {"kind": "dpa", "threads": 8}, "rate": "56Gbps"},
        axes={"algorithm": ["ring", "mcast"], "processor.threads": [4, 8]},
        zips=({"bytes_per_rank": ["4KiB", "8KiB"], "seed": [1, 2]},),
    )
    path = tmp_path / "s.toml"
    path.write_text(spec.to_toml())
    again = SweepSpec.from_toml(path)
    assert [r.scenario.key() for r in again.runs()] == [r.scenario.key() for r in spec.runs()]
    assert [r.label for r in again.runs()] == [r.label for r in spec.runs()]


def test_a_key_with_a_newline_is_quoted():
    assert toml_text.key("0\n") == '"0\\n"'
    assert tomllib.loads(toml_text.document({"0\n": [], "a\nb": {"c": 1}})) == {"0\n": [], "a\nb": {"c": 1}}
