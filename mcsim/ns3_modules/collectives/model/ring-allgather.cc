// SPDX-License-Identifier: GPL-2.0-only
#include "ring-allgather.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RingAllgather);

TypeId
RingAllgather::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::RingAllgather")
                            .SetParent<RingRank>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<RingAllgather>();
    return tid;
}

RingAllgather::RingAllgather()
    : m_received(0)
{
}

RingAllgather::~RingAllgather() = default;

void
RingAllgather::Start()
{
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        Write(m_rank * m_chunks + i);
    }
}

void
RingAllgather::OnReceive(uint32_t host, const Completion& c)
{
    const uint32_t source = c.imm / m_chunks;
    m_stats.chunksReceived++;
    if (source != (m_rank + 1) % m_nRanks)
    {
        Write(c.imm);
    }
    if (++m_received == static_cast<uint64_t>(m_nRanks - 1) * m_chunks)
    {
        MarkFinished();
    }
}

} // namespace mcsim
} // namespace ns3
