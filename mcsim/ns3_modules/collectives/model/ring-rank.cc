// SPDX-License-Identifier: GPL-2.0-only
#include "ring-rank.h"

#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RingRank);

TypeId
RingRank::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::RingRank")
                            .SetParent<CollectiveRank>()
                            .SetGroupName("Mcsim")
                            .AddAttribute("ChunkBytes",
                                          "Pipelining unit: bytes per RDMA WRITE with immediate.",
                                          UintegerValue(64 * 1024),
                                          MakeUintegerAccessor(&RingRank::m_chunkBytes),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

RingRank::RingRank()
    : m_chunkBytes(64 * 1024),
      m_chunks(0)
{
}

RingRank::~RingRank() = default;

void
RingRank::DoDispose()
{
    m_next = nullptr;
    m_prev = nullptr;
    CollectiveRank::DoDispose();
}

void
RingRank::Connect(Ptr<RcQp> next, Ptr<RcQp> prev)
{
    m_next = next;
    m_prev = prev;
    m_chunks = static_cast<uint32_t>((m_bytesPerRank + m_chunkBytes - 1) / m_chunkBytes);
    m_prev->PostRecv((m_nRanks - 1) * m_chunks); // every WRITE with immediate consumes one
}

void
RingRank::Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    Connect(next, prev);
}

uint64_t
RingRank::ChunkSize(uint32_t i) const
{
    const uint64_t start = static_cast<uint64_t>(i) * m_chunkBytes;
    return std::min<uint64_t>(m_chunkBytes, m_bytesPerRank - start);
}

void
RingRank::Write(uint32_t id)
{
    const uint32_t block = id / m_chunks;
    const uint32_t i = id % m_chunks;
    const uint64_t offset = block * m_bytesPerRank + static_cast<uint64_t>(i) * m_chunkBytes;
    m_next->PostSend(RcQp::Verb::WRITE, ChunkSize(i), offset, id, true, id);
    m_stats.chunksSent++;
}

void
RingRank::OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId)
{
}

} // namespace mcsim
} // namespace ns3
