// SPDX-License-Identifier: GPL-2.0-only
// INT of a Port: a switch's port adds its hop record to the packets that ask for it (fabric.md,
// "INT").
#include "port.h"

#include "ns3/mcsim/line-time.h"

namespace ns3
{
namespace mcsim
{

void
Port::SetIntStore(IntStore* store, bool push)
{
    m_intStore = store;
    m_intPush = push && store != nullptr;
}

IntStore*
Port::GetIntStore() const
{
    return m_intStore;
}

const IntCounters&
Port::GetIntCounters() const
{
    return m_intCounters;
}

void
Port::IntPush(const FabricHeader::Fields& f, Time start, Time earliest, uint32_t wire)
{
    const uint32_t h = f.GetInt();
    if ((h & FabricHeader::INT_ECHO) != 0)
    {
        return; // an ACK bringing another packet's records back
    }
    // the bytes started before this packet (Commit counted it), and the queue it met: its wait
    // at the port (credits, pauses and the frames ahead of it) as bytes at the port's rate
    const uint64_t rate = GetDataRateBps();
    const IntHop hop{start.GetPicoSeconds(),
                     m_counters.txWireBytes - wire,
                     LineBytes(start - earliest, rate),
                     rate};
    if (m_intStore->Push(h, hop))
    {
        m_intCounters.pushed++;
    }
    else
    {
        m_intCounters.overflow++;
    }
}

} // namespace mcsim
} // namespace ns3
