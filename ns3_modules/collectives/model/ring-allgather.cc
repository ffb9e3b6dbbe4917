// SPDX-License-Identifier: GPL-2.0-only
#include "ring-allgather.h"

#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RingAllgather);

TypeId
RingAllgather::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::RingAllgather")
                            .SetParent<CollectiveRank>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<RingAllgather>()
                            .AddAttribute("ChunkBytes",
                                          "Pipelining unit: bytes per RDMA WRITE with immediate.",
                                          UintegerValue(64 * 1024),
                                          MakeUintegerAccessor(&RingAllgather::m_chunkBytes),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

RingAllgather::RingAllgather()
    : m_chunkBytes(64 * 1024),
      m_chunks(0),
      m_received(0)
{
}

RingAllgather::~RingAllgather() = default;

void
RingAllgather::DoDispose()
{
    m_next = nullptr;
    m_prev = nullptr;
    CollectiveRank::DoDispose();
}

void
RingAllgather::Connect(Ptr<RcQp> next, Ptr<RcQp> prev)
{
    m_next = next;
    m_prev = prev;
    m_chunks = static_cast<uint32_t>((m_shardBytes + m_chunkBytes - 1) / m_chunkBytes);
    m_prev->PostRecv((m_nRanks - 1) * m_chunks); // every WRITE with immediate consumes one
}

void
RingAllgather::Start()
{
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        Write(m_rank * m_chunks + i);
    }
}

void
RingAllgather::Write(uint32_t id)
{
    const uint32_t source = id / m_chunks;
    const uint32_t i = id % m_chunks;
    const uint64_t start = static_cast<uint64_t>(i) * m_chunkBytes;
    const uint64_t bytes = std::min<uint64_t>(m_chunkBytes, m_shardBytes - start);
    m_next->PostSend(RcQp::Verb::WRITE, bytes, source * m_shardBytes + start, id, true, id);
    m_stats.chunksSent++;
}

void
RingAllgather::OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId)
{
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
