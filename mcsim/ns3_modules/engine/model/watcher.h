// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Reads the model's state at chosen time stamps without an event of its own
 * (EventLoop::Watch; engine/doc/engine.md, "Watchers"): a trace that samples adds no event, so
 * it can change neither the order of the run's events nor when the run ends.
 */
class Watcher
{
  public:
    /** Look returns it when it wants no further look. */
    static constexpr uint64_t NO_LOOK = UINT64_MAX;

    virtual ~Watcher() = default;

    /**
     * Every event at or before time stamp ts has run, and none after it: the model's state is
     * the one it has at the end of ts. Look must only read (it posts no event, changes nothing).
     * @return the next time stamp to look at (> ts), or NO_LOOK
     */
    virtual uint64_t Look(uint64_t ts) = 0;
};

} // namespace mcsim
} // namespace ns3
