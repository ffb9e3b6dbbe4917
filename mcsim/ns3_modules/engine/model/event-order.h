// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The class of an event. At one time stamp events run class by class, in this order, and
 * inside a class by their source's key (node, then unit), then in the order that source posted
 * them: mcsim's canonical same-time order (engine/doc/engine.md, "Canonical order").
 */
enum class EventClass : uint64_t
{
    ARRIVAL = 0,    //!< a packet is handed to the next node (a port's arrival)
    TRANSMIT = 1,   //!< a sender acts: a NIC picks its next packet, credits come due at a port
    COMPLETION = 2, //!< a completion processor (host CPU, DPA) finishes work, a host reduction
    TIMER = 3,      //!< a protocol timer: RC ACK timeout and RNR retry, a collective's phase timer
    CONTROL = 4,    //!< the run's plan: starts of collectives and operations, re-routing
    SCHEDULED = 7,  //!< anything else (Simulator::Schedule, mcsim::Post without a source)
};

/**
 * Units of a node (the key's low 29 bits): which of its parts posts the events. A port's unit is
 * its number on the node; the rest are fixed.
 */
namespace unit
{
constexpr uint32_t QP = 0x10000;           //!< + the QP number: a QP's timers
constexpr uint32_t NIC = 0x20000;          //!< a NIC's arbiter (its picks and loopback)
constexpr uint32_t CPU = 0x20001;          //!< the receive (or only) completion processor
constexpr uint32_t TX_CPU = 0x20002;       //!< a separate send completion processor
constexpr uint32_t DPA_ARRIVAL = 0x20004;  //!< a DPA's completions arriving
constexpr uint32_t DPA_LOOPBACK = 0x20005; //!< a DPA's loopback copies
constexpr uint32_t SOURCE = 0x20006;       //!< a completion source (a DPA bench)
constexpr uint32_t DPA_CORE = 0x21000;     //!< + the core: a DPA core
constexpr uint32_t RANK = 0x30000;         //!< + the rank's QP number: a collective rank
constexpr uint32_t JOB = 0x8000000;        //!< + the job's number: a job's steps on a rank's host
constexpr uint32_t JOB_LIMIT = 0xFFFFFF;   //!< the largest job number
constexpr uint32_t TRAFFIC = 0x10000000;   //!< + the flow id's low 28 bits: a traffic source
constexpr uint32_t PLAN = 0x1FFFFFFF;      //!< the run's plan (node 0)
constexpr uint32_t LIMIT = 0x20000000;     //!< every unit is below it
} // namespace unit

/** The order key of a source: class (3 bits), node (32 bits), unit (29 bits). */
constexpr uint64_t
EventOrderKey(EventClass c, uint32_t node, uint32_t unit)
{
    return (static_cast<uint64_t>(c) << 61) | (static_cast<uint64_t>(node) << 29) |
           (unit & (unit::LIMIT - 1));
}

/** The node of an order key. */
constexpr uint32_t
NodeOf(uint64_t order)
{
    return static_cast<uint32_t>(order >> 29);
}

/** The unit of an order key. */
constexpr uint32_t
UnitOf(uint64_t order)
{
    return static_cast<uint32_t>(order & (unit::LIMIT - 1));
}

/** Whether place (ts, order) comes before place (ts2, order2) in the canonical order (time stamp,
 * then order key; a source's own events at one place are told apart by their post counts). */
constexpr bool
PlacedBefore(uint64_t ts, uint64_t order, uint64_t ts2, uint64_t order2)
{
    return ts < ts2 || (ts == ts2 && order < order2);
}

/** The key of every event without a source: after all the others, in the order scheduled. */
constexpr uint64_t SCHEDULED_ORDER_KEY = EventOrderKey(EventClass::SCHEDULED, 0, 0);

/**
 * @brief Who posts a stream of events of one class: its order key and the count of its posts
 * (which orders its own events at one time stamp). Its owner places it (node, unit) at setup.
 */
class EventSource
{
  public:
    explicit EventSource(EventClass c)
        : m_key(EventOrderKey(c, 0, 0))
    {
    }

    /** Place it: the events it posts from now on are those of (node, unit) of its class. */
    void Place(uint32_t node, uint32_t unit)
    {
        m_key = EventOrderKey(static_cast<EventClass>(m_key >> 61), node, unit);
    }

    uint64_t Key() const
    {
        return m_key;
    }

    /** The sequence number of the next post (its count wraps at 2^32). */
    uint32_t NextSeq()
    {
        return m_seq++;
    }

  private:
    uint64_t m_key;
    uint32_t m_seq = 0;
};

} // namespace mcsim
} // namespace ns3
