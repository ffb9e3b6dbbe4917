// SPDX-License-Identifier: GPL-2.0-only
#include "run-control.h"

#include "wheel-scheduler.h"

#include "ns3/simulator.h"

#include <chrono>

namespace ns3
{
namespace mcsim
{

bool
RunControl::RunFor(double seconds)
{
    const auto budget = std::chrono::duration<double>(seconds);
    WheelScheduler::StopAt(std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(budget));
    Simulator::Run();
    const bool sliced = WheelScheduler::Stopped();
    WheelScheduler::StopAt(std::nullopt);
    return !sliced;
}

uint64_t
RunControl::EventsRun()
{
    return Simulator::GetEventCount();
}

} // namespace mcsim
} // namespace ns3
