// SPDX-License-Identifier: GPL-2.0-only
#include "ring-allreduce.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RingAllreduce);

TypeId
RingAllreduce::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::RingAllreduce")
                            .SetParent<RingReduceScatter>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<RingAllreduce>();
    return tid;
}

RingAllreduce::RingAllreduce()
    : m_gathered(0)
{
    SplitBlocks();
}

RingAllreduce::~RingAllreduce() = default;

void
RingAllreduce::Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    Connect(next, prev);
    m_prev->PostRecv((m_nRanks - 1) * m_chunks); // the Allgather's chunks
}

void
RingAllreduce::OnReceive(uint32_t host, const Completion& c)
{
    const uint32_t gather = m_nRanks * m_chunks; // the Allgather's immediates start there
    if (c.imm < gather)
    {
        RingReduceScatter::OnReceive(host, c);
        return;
    }
    const uint32_t id = c.imm - gather;
    m_stats.chunksReceived++;
    if (id / m_chunks != (m_rank + 1) % m_nRanks) // r+1 owns that block: it has the sum
    {
        Write(id, 0, c.imm);
    }
    ++m_gathered;
    FinishIfDone();
}

void
RingAllreduce::OwnChunkReduced(uint32_t id)
{
    ++m_completed;
    Write(id, 0, m_nRanks * m_chunks + id);
    FinishIfDone();
}

void
RingAllreduce::FinishIfDone()
{
    if (m_completed == m_chunks && m_gathered == static_cast<uint64_t>(m_nRanks - 1) * m_chunks)
    {
        MarkFinished();
    }
}

} // namespace mcsim
} // namespace ns3
