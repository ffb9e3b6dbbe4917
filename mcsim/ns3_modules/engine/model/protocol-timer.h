// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "event-loop.h"
#include "event-order.h"

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A protocol timer that runs in the canonical same-time order: obj->*Method() at its
 * expiry, posted as the events of an EventSource of its owner (class TIMER). Schedule, Cancel and
 * IsPending do what an EventId's do; a cancelled or rescheduled expiry stays queued and does
 * nothing when its time comes (as ns-3's cancelled events). The owner may go before its expiries.
 */
template <typename T, void (T::*Method)()>
class ProtocolTimer
{
  public:
    /** source: the owner's, which outlives this timer */
    ProtocolTimer(T* obj, EventSource* source)
        : m_cell(Create<Cell>(obj)),
          m_source(source)
    {
    }

    ~ProtocolTimer()
    {
        m_cell->obj = nullptr;
    }

    ProtocolTimer(const ProtocolTimer&) = delete;
    ProtocolTimer& operator=(const ProtocolTimer&) = delete;

    /** Expire after delay (an earlier expiry still pending is cancelled). */
    void Schedule(const Time& delay)
    {
        m_cell->armed = ++m_cell->generation;
        mcsim::Post(delay,
                    Ptr<EventImpl>(new Expiry(m_cell, m_cell->generation), false),
                    *m_source);
    }

    void Cancel()
    {
        m_cell->armed = 0;
    }

    bool IsPending() const
    {
        return m_cell->armed != 0;
    }

  private:
    /** What a queued expiry shares with its timer. */
    struct Cell : SimpleRefCount<Cell>
    {
        explicit Cell(T* o)
            : obj(o)
        {
        }

        T* obj;                  //!< null once the timer is gone
        uint64_t generation = 0; //!< of the last Schedule
        uint64_t armed = 0;      //!< the generation that will fire, 0: none
    };

    class Expiry : public EventImpl
    {
      public:
        Expiry(Ptr<Cell> cell, uint64_t generation)
            : m_cell(cell),
              m_generation(generation)
        {
        }

      private:
        void Notify() override
        {
            if (m_cell->obj != nullptr && m_cell->armed == m_generation)
            {
                m_cell->armed = 0;
                (m_cell->obj->*Method)();
            }
        }

        Ptr<Cell> m_cell;
        uint64_t m_generation;
    };

    Ptr<Cell> m_cell;
    EventSource* m_source; //!< not owned
};

} // namespace mcsim
} // namespace ns3
