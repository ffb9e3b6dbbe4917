// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/test.h"

namespace ns3
{
namespace mcsim
{

/** Deferred work runs where its events would have (deferred-work-test.cc); the caller owns it. */
TestCase* MakeDeferredWorkTestCase();

} // namespace mcsim
} // namespace ns3
