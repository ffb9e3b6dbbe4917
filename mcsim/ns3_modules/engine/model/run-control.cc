// SPDX-License-Identifier: GPL-2.0-only
#include "run-control.h"

#include "event-loop.h"
#include "wheel-scheduler.h"

#include "ns3/simulator.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

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
    CheckClock();
    return !sliced;
}

void
RunControl::CheckClock()
{
    const EventLoop* loop = EventLoop::Current();
    if (loop == nullptr || loop->ClockLimitEvent() == 0)
    {
        return;
    }
    char text[400];
    std::snprintf(
        text,
        sizeof text,
        "the simulated clock reached its limit, 2^62 ps = 53.4 days (%llu ps): at %.4g ps "
        "simulated an event was due at %.4g ps, so the run stops; a run this long retries "
        "for ever (RcConfig.retry_cnt=None) or has very slow links",
        static_cast<unsigned long long>(EventLoop::CLOCK_LIMIT_STEPS),
        static_cast<double>(loop->NowSteps()),
        static_cast<double>(loop->ClockLimitEvent()));
    throw std::overflow_error(text);
}

uint64_t
RunControl::EventsRun()
{
    return Simulator::GetEventCount();
}

} // namespace mcsim
} // namespace ns3
