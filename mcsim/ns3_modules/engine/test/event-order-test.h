// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/test.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** Where two logs of a test program first differ: got.size() if got is expected or its start. */
inline std::size_t
FirstDifference(const std::vector<uint64_t>& got, const std::vector<uint64_t>& expected)
{
    return static_cast<std::size_t>(
        std::mismatch(got.begin(), got.end(), expected.begin(), expected.end()).first -
        got.begin());
}

/** The EventLoop runs events with sources in the canonical order (event-order-test.cc); the
 * caller owns it, as AddTestCase does. */
TestCase* MakeCanonicalOrderTestCase();

/** A Watcher's looks come between the events at their time stamps, and add no event
 * (event-order-test.cc). */
TestCase* MakeWatchTestCase();

/** ProtocolTimer does what an EventId's Schedule, Cancel and IsPending do (event-order-test.cc). */
TestCase* MakeProtocolTimerTestCase();

} // namespace mcsim
} // namespace ns3
