# SPDX-License-Identifier: GPL-2.0-only
"""arrays.py: the numpy <-> C++ bulk conversions (no C++ needed)."""

import numpy as np
import pytest

from mcsim.native.arrays import columns, i64, read_columns, read_u64, u32, u64


@pytest.mark.parametrize(("make", "dtype"), [(u32, np.uint32), (u64, np.uint64), (i64, np.int64)])
def test_arrays_are_contiguous_typed_and_never_empty(make, dtype):
    arr = make([3, 1, 2])
    assert arr.dtype == dtype and arr.flags.c_contiguous
    np.testing.assert_array_equal(arr, [3, 1, 2])
    empty = make([])
    assert empty.dtype == dtype and empty.size == 1  # cppyy cannot pass an empty buffer


def test_read_u64_passes_the_count_and_trims_the_spare_element():
    seen = []

    def fill(out, n):
        seen.append((out.size, n))
        out[:n] = np.arange(n) + 7

    np.testing.assert_array_equal(read_u64(3, fill), [7, 8, 9])
    assert read_u64(0, fill).size == 0
    assert seen == [(3, 3), (1, 0)]


def test_columns_split_rows_into_independent_copies():
    raw = np.arange(6, dtype=np.uint64)
    cols = columns(raw, ("a", "b"))
    np.testing.assert_array_equal(cols["a"], [0, 2, 4])
    np.testing.assert_array_equal(cols["b"], [1, 3, 5])
    raw[:] = 0
    assert cols["b"][2] == 5  # a copy: outlives the buffer C++ filled

    def fill(out, n):
        out[:n] = np.arange(n)

    assert read_columns(2, ("x", "y", "z"), fill)["z"].tolist() == [2, 5]
