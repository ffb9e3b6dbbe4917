# SPDX-License-Identifier: GPL-2.0-only
"""The text interfaces' table of Scenario keywords names every field of Scenario, in its order, and no other."""

import dataclasses

from mcsim.runs.keyword_tables import KEYWORDS, SCENARIO_FIELDS, SHORT_NAMES
from mcsim.runs.scenario import Scenario


def test_the_keyword_table_names_every_scenario_field_and_no_other():
    assert SCENARIO_FIELDS == tuple(f.name for f in dataclasses.fields(Scenario))


def test_a_short_name_is_no_scenario_field_and_every_keyword_is_one_or_the_other():
    assert not set(SHORT_NAMES) & set(SCENARIO_FIELDS)
    assert KEYWORDS == (*SCENARIO_FIELDS, *SHORT_NAMES)
