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
    static TypeId tid = AddProtocol(
        AddRegionOffset(TypeId("ns3::mcsim::RingRank")
                            .SetParent<CollectiveRank>()
                            .SetGroupName("Mcsim")
                            .AddAttribute("ChunkBytes",
                                          "Pipelining unit: bytes per RDMA WRITE with immediate.",
                                          UintegerValue(64 * 1024),
                                          MakeUintegerAccessor(&RingRank::m_chunkBytes),
                                          MakeUintegerChecker<uint32_t>(1))));
    return tid;
}

RingRank::RingRank()
    : m_chunkBytes(64 * 1024),
      m_chunks(0),
      m_split(false),
      m_blocks(0, 1)
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
RingRank::SplitBlocks()
{
    m_split = true;
}

void
RingRank::Connect(Ptr<RcQp> next, Ptr<RcQp> prev)
{
    m_next = next;
    m_prev = prev;
    m_blocks = BlockSplit(m_bytesPerRank, m_nRanks);
    // block 0 is the longest; a block of no bytes still takes one (empty) chunk
    m_chunks =
        static_cast<uint32_t>(std::max<uint64_t>(1, ChunkCount(BlockBytes(0), m_chunkBytes)));
    m_prev->PostRecv((m_nRanks - 1) * m_chunks); // every WRITE with immediate consumes one
    CarryLines(m_next);
    CarryLines(m_prev);
    m_stepDelay = StepDelayTo(PeerHost(m_next));
}

void
RingRank::Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    Connect(next, prev);
}

uint64_t
RingRank::BlockBytes(uint32_t b) const
{
    if (!m_split)
    {
        return m_bytesPerRank;
    }
    return m_blocks.Bytes(b);
}

uint64_t
RingRank::BlockOffset(uint32_t b) const
{
    if (!m_split)
    {
        return b * m_bytesPerRank;
    }
    return m_blocks.Offset(b);
}

uint64_t
RingRank::ChunkBytes(uint32_t id) const
{
    const uint64_t start = static_cast<uint64_t>(id % m_chunks) * m_chunkBytes;
    const uint64_t block = BlockBytes(id / m_chunks);
    return start >= block ? 0 : std::min<uint64_t>(m_chunkBytes, block - start);
}

uint64_t
RingRank::ChunkOffset(uint32_t id) const
{
    return BlockOffset(id / m_chunks) + static_cast<uint64_t>(id % m_chunks) * m_chunkBytes;
}

void
RingRank::Write(uint32_t id, uint64_t base, uint32_t imm)
{
    AfterStep<&RingRank::Send>(m_stepDelay, this, id, base, imm);
}

void
RingRank::Send(uint32_t id, uint64_t base, uint32_t imm)
{
    const uint64_t bytes = ChunkBytes(id);
    if (bytes == 0)
    {
        m_next->PostSend(RcQp::Verb::SEND, 0, 0, id, true, imm); // keeps the chunk's step
    }
    else
    {
        m_next->PostSend(RcQp::Verb::WRITE, bytes, InRegion(base + ChunkOffset(id)), id, true, imm);
    }
    m_stats.chunksSent++;
}

void
RingRank::Write(uint32_t id)
{
    Write(id, 0, id);
}

void
RingRank::OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId)
{
}

} // namespace mcsim
} // namespace ns3
