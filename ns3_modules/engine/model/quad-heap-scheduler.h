// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/scheduler.h"

#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief An event scheduler on a 4-ary min-heap in one vector: the default of every mcsim run.
 *
 * Same order as every ns-3 scheduler (time stamp, then uid), so a run gives the same results as
 * with ns3::PriorityQueueScheduler, only faster: a 4-ary heap is half as deep as a binary one, the
 * four children of a node are adjacent in memory, a removal moves the hole to the bottom along the
 * smallest children and sifts the last event up from there (it rarely climbs far), and there is no
 * logging on the hot path. Remove() of a pending event that is not the next is a linear search
 * (ns-3 calls it only for Simulator::Remove; a cancelled event stays queued until its time).
 */
class QuadHeapScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();
    QuadHeapScheduler();
    ~QuadHeapScheduler() override;

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    /** @throws std::invalid_argument if ev is not queued */
    void Remove(const Event& ev) override;

  private:
    static constexpr std::size_t ARITY = 4;

    /** (time stamp, uid) as one 96-bit number: one comparison, no data-dependent branch. */
    static unsigned __int128 Order(const EventKey& k)
    {
        return (static_cast<unsigned __int128>(k.m_ts) << 32) | k.m_uid;
    }

    static bool Before(const EventKey& a, const EventKey& b)
    {
        return Order(a) < Order(b);
    }

    /** Put ev at the hole i or above it. */
    void SiftUp(std::size_t i, const Event& ev);
    /** Fill the hole i from below with ev (moves the hole down, then sifts ev up). */
    void FillHole(std::size_t i, const Event& ev);

    std::vector<Event> m_heap;
};

} // namespace mcsim
} // namespace ns3
