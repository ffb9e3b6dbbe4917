// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/test.h"

namespace ns3
{
namespace mcsim
{

/** A PfcPort's thresholds and headroom in force are their closed forms, without a fabric
 * (pfc-port-test.cc); the caller owns it, as AddTestCase does. */
TestCase* MakePfcThresholdsTestCase();

/** Two PfcPorts driven by hand: XOFF exactly when the ingress passes XOFF, XON at the release that
 * brings it to XON, drops past the headroom, and the pause they put on the peer (pfc-port-test.cc).
 */
TestCase* MakePfcXoffXonTestCase();

/** An XOFF in force is sent again every half pause time, at the closed form's times
 * (pfc-port-test.cc). */
TestCase* MakePfcRefreshTestCase();

} // namespace mcsim
} // namespace ns3
