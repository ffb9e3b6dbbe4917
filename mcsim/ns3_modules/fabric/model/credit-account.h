// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/fifo.h"
#include "ns3/nstime.h"

#include <cstddef>
#include <cstdint>

namespace ns3
{
namespace mcsim
{

class Port;

/**
 * @brief A replicated (multicast) packet's ingress credit: returned once, after its last copy
 * leaves the switch. Owned by itself: deleted when the last copy has been accounted for.
 */
struct SharedCredit
{
    Port* to;            //!< the upstream port to credit
    uint32_t wireBytes;  //!< bytes the packet took on the upstream link
    uint32_t copiesLeft; //!< copies not yet departed
    Time latest;         //!< latest departure so far
    Port* latestPort;    //!< the port of that copy
    Time latestStart;    //!< latest start so far (PFC: the packet leaves its ingress queue then)
};

/** @brief Where a packet's ingress buffer credit goes when it leaves; nothing by default. */
struct CreditReturn
{
    Port* to = nullptr;             //!< upstream port (unicast), or null
    SharedCredit* shared = nullptr; //!< or a shared credit (multicast copies)
};

/** @brief How a port blocked on credits gets told that its head packet's credits are there. */
struct CreditWakeup
{
    enum Kind
    {
        NONE,     //!< nothing to do: an earlier event or a later return will tell it
        ATTACH,   //!< via's packet arriving at `at` tells it (Port::AttachCreditDue)
        SCHEDULE, //!< schedule a credit event at `at` (recorded as scheduled)
    };

    Kind kind;
    Time at;
    Port* via;
};

/**
 * @brief The credits of a LOSSLESS port for its peer's ingress buffer (link-level flow control).
 *
 * Bytes held now, plus returned credits not yet due (sorted by due time), plus the times of the
 * credit events the port has scheduled. Every return is registered at least one link delay
 * before it is due (the peer's buffer frees no earlier than now, and the credit then crosses the
 * link), so all credits due by now + Delay are known: a packet may take them now and start when
 * the last one it needs is due (Take).
 */
class CreditAccount
{
  public:
    /** A returned credit not yet usable. */
    struct Pending
    {
        Time at;
        uint32_t bytes;
        Port* via; //!< a port whose packet arrives at `at` (it can tell this one), or null
    };

    CreditAccount();

    /** Hold bytes of credit and nothing pending (setup). */
    void Reset(uint64_t bytes);

    /** Bytes held now or returned but not yet due. */
    uint64_t Held() const;

    /** Credits come back at `at`; via: see Pending. */
    void Add(Time at, uint32_t wireBytes, Port* via);

    /**
     * Take wireBytes of credits for the next packet if those due by now + delay suffice; ready
     * is then when the last one it needed is due (0 if all were due already). If they do not,
     * the credits due by now become held.
     */
    bool Take(uint32_t wireBytes, Time now, Time delay, Time& ready);

    /**
     * Plan how a port whose head packet needs wireBytes gets told when its credits are there:
     * one link delay before the credit that completes them is due (or by the packet that
     * arrives when it is due, from a port with the same delay), unless a credit event at or
     * before then is scheduled already. A SCHEDULE answer is recorded as scheduled.
     */
    CreditWakeup PlanWakeup(uint32_t wireBytes, Time now, Time delay);

    /** The earliest scheduled credit event ran (events run in time order). */
    void EventRan()
    {
        m_events.pop_front();
    }

  private:
    static constexpr std::size_t NOT_ENOUGH = static_cast<std::size_t>(-1);

    /**
     * How many of the first pending credits, with those held, make wireBytes, counting only
     * those due by horizon; NOT_ENOUGH if they do not.
     */
    std::size_t Needed(uint32_t wireBytes, Time horizon) const;
    /** The pending credits due by now become held. */
    void Harvest(Time now);

    int64_t m_credits;       //!< bytes the peer can still take
    Fifo<Pending> m_pending; //!< returned credits not yet usable, sorted by time
    Fifo<Time> m_events;     //!< times of the scheduled credit events, ascending
};

inline void
CreditAccount::Add(Time at, uint32_t wireBytes, Port* via)
{
    // returns come nearly in time order: insert from the back, usually at the back
    std::size_t i = m_pending.size();
    while (i > 0 && m_pending[i - 1].at > at)
    {
        --i;
    }
    m_pending.insert(i, {at, wireBytes, via});
}

inline void
CreditAccount::Harvest(Time now)
{
    while (!m_pending.empty() && m_pending.front().at <= now)
    {
        m_credits += m_pending.front().bytes;
        m_pending.pop_front();
    }
}

inline std::size_t
CreditAccount::Needed(uint32_t wireBytes, Time horizon) const
{
    int64_t have = m_credits;
    std::size_t n = 0;
    while (have < wireBytes && n < m_pending.size() && m_pending[n].at <= horizon)
    {
        have += m_pending[n].bytes;
        ++n;
    }
    return have < wireBytes ? NOT_ENOUGH : n;
}

inline bool
CreditAccount::Take(uint32_t wireBytes, Time now, Time delay, Time& ready)
{
    const std::size_t n = Needed(wireBytes, now + delay);
    if (n == NOT_ENOUGH)
    {
        Harvest(now);
        return false;
    }
    int64_t have = m_credits;
    for (std::size_t i = 0; i < n; ++i)
    {
        have += m_pending[i].bytes;
    }
    // credits left over from the last entry are due by then too; the packets after this one
    // start after it, so they may use them
    ready = n > 0 ? m_pending[n - 1].at : Time(0);
    for (std::size_t i = 0; i < n; ++i)
    {
        m_pending.pop_front();
    }
    m_credits = have - wireBytes;
    return true;
}

} // namespace mcsim
} // namespace ns3
