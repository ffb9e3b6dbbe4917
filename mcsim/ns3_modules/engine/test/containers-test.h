// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/test.h"

namespace ns3
{
namespace mcsim
{

/** Fifo behaves as a std::deque (containers-test.cc); the caller owns it, as AddTestCase does. */
TestCase* MakeFifoTestCase();

/** PackedCounters behave as a vector of bounded counters (containers-test.cc). */
TestCase* MakePackedCountersTestCase();

/** FlaggedTrace's bit is set exactly while it has a sink (containers-test.cc). */
TestCase* MakeFlaggedTraceTestCase();

} // namespace mcsim
} // namespace ns3
