// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "fabric-header.h"

#include "ns3/mcsim/counter-table.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One switch egress's in-band telemetry record (INT), as HPCC reads it (Li et al., "HPCC:
 * High Precision Congestion Control", SIGCOMM 2019; fabric.md, "INT"): when the packet started on
 * the port, the wire bytes the port had started before it, the queue it met and the port's data
 * rate. The queue is the packet's wait at the port (from when it could have started, the switch's
 * latency after its header came in, to its start) as bytes at the port's rate: what a FIFO's
 * delay measures, where HPCC's INT reads the egress queue's bytes at dequeue; on the credit fabric
 * a wait for credits is not counted. Exact values: a real INT header quantizes them (HPCC's
 * simulator: 24-bit ns, 128-byte and 80-byte units).
 */
struct IntHop
{
    int64_t tsPs;       //!< the packet's start on the port
    uint64_t txBytes;   //!< wire bytes the port started before this packet
    uint64_t qlenBytes; //!< the queue it met: its wait at the port as bytes at the port's rate
    uint64_t rateBps;   //!< the port's data rate
};

/** The fields of IntCounters, in order: X(member, initial, python_name). */
#define MCSIM_INT_COUNTERS(X)                                                                      \
    /* hop records this port added to packets */                                                   \
    X(pushed, 0, "int_pushed")                                                                     \
    /* packets that had no room for this port's record (more than MAX_HOPS switches) */            \
    X(overflow, 0, "int_overflow")

/** @brief INT counters of one port, read in bulk after the run. */
struct IntCounters
{
    MCSIM_COUNTERS(MCSIM_INT_COUNTERS)
};

/**
 * @brief The INT records of the packets in flight, one stack per packet that asked for INT, named
 * by the handle in its fields (FabricHeader::Fields::GetInt): packets are shared blank buffers, so
 * the records travel beside them, as their other header fields do. A NIC takes a handle for a data
 * packet, every switch egress on its path pushes a hop, the receiving NIC hands the handle on to
 * its ACK (with INT_ECHO: no hop adds to it), and the sender reads the records and releases it.
 * A handle of a packet lost on the wire is never released (a leak bounded by the losses).
 */
class IntStore
{
  public:
    /** Records per packet: HPCC's simulator's maxHop (5: a three-tier fat tree's switches). */
    static constexpr uint32_t MAX_HOPS = 5;
    /** The wire bytes INT adds to a packet that carries it: a 2-byte hop count and 8 bytes per
     * hop record, room for MAX_HOPS (HPCC's simulator's IntHeader: 42 bytes). */
    static constexpr uint32_t HEADER_BYTES = 2 + 8 * MAX_HOPS;

    struct Stack
    {
        uint32_t hops = 0;
        IntHop hop[MAX_HOPS];
    };

    /** A new empty stack's handle (1 .. INT_ECHO - 1). */
    uint32_t Take()
    {
        if (!m_free.empty())
        {
            const uint32_t h = m_free.back();
            m_free.pop_back();
            m_stacks[h].hops = 0;
            return h;
        }
        if (m_stacks.size() >= FabricHeader::INT_ECHO) // the handles below the echo bit are taken
        {
            throw std::runtime_error("IntStore: more packets carry INT at once than handles exist");
        }
        m_stacks.emplace_back();
        return static_cast<uint32_t>(m_stacks.size() - 1);
    }

    /** Add a hop to the stack of handle h; false if it is full. */
    bool Push(uint32_t h, const IntHop& hop)
    {
        Stack& s = m_stacks[h];
        if (s.hops == MAX_HOPS)
        {
            return false;
        }
        s.hop[s.hops++] = hop;
        return true;
    }

    const Stack& Get(uint32_t h) const
    {
        return m_stacks[h];
    }

    void Release(uint32_t h)
    {
        m_free.push_back(h);
    }

    /** Handles taken and not released (the packets in flight with INT, and any lost). */
    uint64_t Live() const
    {
        return m_stacks.size() - 1 - m_free.size();
    }

  private:
    std::vector<Stack> m_stacks{Stack{}}; //!< index 0 unused: handle 0 is "no INT"
    std::vector<uint32_t> m_free;
};

} // namespace mcsim
} // namespace ns3
