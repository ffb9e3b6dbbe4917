// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "event-order.h"

#include "ns3/scheduler.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A queued event: ns-3's event and key, plus the order key of its source (EventOrderKey;
 * SCHEDULED_ORDER_KEY for an event without one). It runs at (ts, order, uid): uid is ns-3's uid
 * for an event without a source, the source's sequence number otherwise.
 */
struct QueuedEvent
{
    EventImpl* impl;
    uint64_t ts;
    uint64_t order;
    uint32_t uid;
    uint32_t context;

    /** An event an ns-3 Scheduler was given (no source). */
    static QueuedEvent Of(const Scheduler::Event& ev)
    {
        return {ev.impl, ev.key.m_ts, SCHEDULED_ORDER_KEY, ev.key.m_uid, ev.key.m_context};
    }

    /** As ns-3's Scheduler::Event (its uid: see above). */
    Scheduler::Event ToEvent() const
    {
        Scheduler::Event ev;
        ev.impl = impl;
        ev.key.m_ts = ts;
        ev.key.m_uid = uid;
        ev.key.m_context = context;
        return ev;
    }

    /** Scheduled without a source (an ns-3 Schedule: it has an EventId, found by its uid). */
    bool Unsourced() const
    {
        return order == SCHEDULED_ORDER_KEY;
    }

    /** (time stamp, order key) as one 128-bit number. */
    unsigned __int128 Major() const
    {
        return (static_cast<unsigned __int128>(ts) << 64) | order;
    }
};

/** a runs before b: mcsim's canonical order (engine/doc/engine.md, "Canonical order") */
inline bool
EventBefore(const QueuedEvent& a, const QueuedEvent& b)
{
    const unsigned __int128 x = a.Major();
    const unsigned __int128 y = b.Major();
    return x < y || (x == y && a.uid < b.uid);
}

/**
 * @brief A 4-ary min-heap of events in one vector, in EventBefore's order.
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

    const QueuedEvent& Top() const
    {
        return m_heap.front();
    }

    void Push(const QueuedEvent& ev);
    QueuedEvent Pop();
    /** Remove the event without a source with this uid; false if there is none. */
    bool Remove(uint32_t uid);

  private:
    static constexpr std::size_t ARITY = 4;

    /** Put ev at the hole i or above it. */
    void SiftUp(std::size_t i, const QueuedEvent& ev);
    /** Fill the hole i from below with ev (moves the hole down, then sifts ev up). */
    void FillHole(std::size_t i, const QueuedEvent& ev);

    std::vector<QueuedEvent> m_heap;
};

} // namespace mcsim
} // namespace ns3
