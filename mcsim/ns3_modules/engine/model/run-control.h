// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Run the simulation in slices of wall-clock time, so that the caller (Python) regains
 * control regularly: to show progress and to notice Ctrl-C, without any per-event callback.
 *
 * The WheelScheduler (every mcsim run's scheduler) looks at the wall clock every CHECK_EVERY
 * events while a slice runs and calls Simulator::Stop() once the slice's time is up; the events
 * run in exactly the same order as in one Simulator::Run() (no event is added), so the results are
 * the same bit for bit, however the run is sliced.
 */
class RunControl
{
  public:
    /**
     * Run until no event is left or, roughly, `seconds` of wall-clock time have passed.
     * @return true if no event is left (the run is over), false if the slice's time ran out
     * @throws std::overflow_error if the run stopped at the simulated clock's limit
     *         (EventLoop::CLOCK_LIMIT_STEPS): it cannot go on
     */
    static bool RunFor(double seconds);
    /** Events run since the process started (all slices and runs). */
    static uint64_t EventsRun();

  private:
    /** Throw std::overflow_error if the EventLoop stopped at the clock's limit. */
    static void CheckClock();

  public:
    static constexpr uint32_t CHECK_EVERY = 4096; //!< events between two looks at the wall clock
};

} // namespace mcsim
} // namespace ns3
