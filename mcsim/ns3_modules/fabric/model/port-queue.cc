// SPDX-License-Identifier: GPL-2.0-only
#include "port-queue.h"

#include "ns3/mcsim/invariant.h"

namespace ns3
{
namespace mcsim
{

PortQueue::PortQueue()
    : m_departed(0),
      m_queuedBytes(0),
      m_inFlightBytes(0),
      m_waitingBytes(0)
{
}

void
PortQueue::AttachCreditDue(Time handover, Port* to)
{
    // handover times in flight are strictly increasing: binary search
    std::size_t lo = 0;
    std::size_t hi = m_inFlight.size();
    while (lo < hi)
    {
        const std::size_t mid = (lo + hi) / 2;
        if (m_inFlight[mid].handover < handover)
        {
            lo = mid + 1;
        }
        else
        {
            hi = mid;
        }
    }
    MCSIM_ASSERT(lo < m_inFlight.size() && m_inFlight[lo].handover == handover,
                 "Port: no packet in flight arrives when the credit is due");
    m_inFlight[lo].creditDue = to;
}

void
PortQueue::Clear()
{
    m_waiting[0].clear();
    m_waiting[1].clear();
    m_lossyInFlight.clear();
    m_inFlight.clear();
    m_departed = 0;
    m_inFlightBytes = 0;
}

} // namespace mcsim
} // namespace ns3
