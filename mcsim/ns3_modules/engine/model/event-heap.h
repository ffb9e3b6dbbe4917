// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/scheduler.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** (time stamp, uid) of an event as one 96-bit number: the order of every ns-3 scheduler. */
inline unsigned __int128
EventOrder(const Scheduler::EventKey& k)
{
    return (static_cast<unsigned __int128>(k.m_ts) << 32) | k.m_uid;
}

/** a runs before b */
inline bool
EventBefore(const Scheduler::Event& a, const Scheduler::Event& b)
{
    return EventOrder(a.key) < EventOrder(b.key);
}

/**
 * @brief A 4-ary min-heap of events in one vector, in EventOrder.
 *
 * Half as deep as a binary heap; a removal moves the hole to the bottom along the smallest
 * children (chosen with selects, not branches: which child is smallest is a coin toss a branch
 * predictor loses) and sifts the last event up from there.
 */
class EventHeap
{
  public:
    bool Empty() const
    {
        return m_heap.empty();
    }

    std::size_t Size() const
    {
        return m_heap.size();
    }

    const Scheduler::Event& Top() const
    {
        return m_heap.front();
    }

    void Push(const Scheduler::Event& ev);
    Scheduler::Event Pop();
    /** Remove the event with this uid; false if there is none. */
    bool Remove(uint32_t uid);

  private:
    static constexpr std::size_t ARITY = 4;

    /** Put ev at the hole i or above it. */
    void SiftUp(std::size_t i, const Scheduler::Event& ev);
    /** Fill the hole i from below with ev (moves the hole down, then sifts ev up). */
    void FillHole(std::size_t i, const Scheduler::Event& ev);

    std::vector<Scheduler::Event> m_heap;
};

} // namespace mcsim
} // namespace ns3
