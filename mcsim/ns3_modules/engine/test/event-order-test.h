// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/test.h"

namespace ns3
{
namespace mcsim
{

/** The EventLoop runs events with sources in the canonical order (event-order-test.cc); the
 * caller owns it, as AddTestCase does. */
TestCase* MakeCanonicalOrderTestCase();

/** ProtocolTimer does what an EventId's Schedule, Cancel and IsPending do (event-order-test.cc). */
TestCase* MakeProtocolTimerTestCase();

} // namespace mcsim
} // namespace ns3
