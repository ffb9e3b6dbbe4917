// SPDX-License-Identifier: GPL-2.0-only
#include "broadcast-binomial.h"

#include "ns3/integer.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(BroadcastBinomial);

TypeId
BroadcastBinomial::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::BroadcastBinomial")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<BroadcastBinomial>()
            .AddAttribute("ChunkBytes",
                          "Bytes per RDMA WRITE (the buffer goes to a child in such pieces).",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&BroadcastBinomial::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Root",
                          "The rank whose buffer every rank gets.",
                          IntegerValue(0),
                          MakeIntegerAccessor(&BroadcastBinomial::m_root),
                          MakeIntegerChecker<int32_t>(0));
    return tid;
}

BroadcastBinomial::BroadcastBinomial()
    : m_chunkBytes(64 * 1024),
      m_root(0),
      m_chunks(0),
      m_received(0),
      m_completed(0)
{
}

BroadcastBinomial::~BroadcastBinomial() = default;

void
BroadcastBinomial::DoDispose()
{
    m_peers.Clear();
    CollectiveRank::DoDispose();
}

std::vector<uint32_t>
BroadcastBinomial::GetRingDistances() const
{
    return PowerOfTwoDistances();
}

void
BroadcastBinomial::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    if (static_cast<uint32_t>(m_root) >= m_nRanks)
    {
        throw std::invalid_argument("BroadcastBinomial: Root=" + std::to_string(m_root) +
                                    " is not a rank of " + std::to_string(m_nRanks));
    }
    m_peers.Wire(next, prev, GetRingDistances());
    m_chunks = static_cast<uint32_t>(ChunkCount(m_bytesPerRank, m_chunkBytes));
    const uint32_t v = (m_rank + m_nRanks - static_cast<uint32_t>(m_root)) % m_nRanks;
    // children v + 2^k below the lowest set bit of v (the root: every 2^k < P), farthest first
    const uint32_t top = v == 0 ? std::bit_width(m_nRanks - 1) : std::countr_zero(v);
    for (uint32_t k = 0; k < top; ++k)
    {
        if (v + (uint64_t{1} << k) < m_nRanks)
        {
            m_toSend.push_back(k); // taken from the back: k = top-1 first
        }
    }
}

void
BroadcastBinomial::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_peers.WireRings(out, in);
}

void
BroadcastBinomial::Start()
{
    const uint32_t v = (m_rank + m_nRanks - static_cast<uint32_t>(m_root)) % m_nRanks;
    if (v != 0) // the parent is v - 2^j, 2^j the lowest set bit of v
    {
        const uint32_t parent = (m_rank + m_nRanks - (v & (~v + 1))) % m_nRanks;
        m_peers.For(parent, m_rank, m_rank, m_nRanks)->PostRecv(m_chunks);
        return;
    }
    MarkFinished(); // the root holds the buffer
    SendToNextChild();
}

void
BroadcastBinomial::OnReceive(uint32_t /* host */, const Completion& /* c */)
{
    m_stats.chunksReceived++;
    if (++m_received == m_chunks)
    {
        MarkFinished();
        SendToNextChild();
    }
}

void
BroadcastBinomial::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t /* wrId */)
{
    if (++m_completed == m_chunks)
    {
        SendToNextChild();
    }
}

void
BroadcastBinomial::SendToNextChild()
{
    if (m_toSend.empty())
    {
        return;
    }
    const uint32_t k = m_toSend.back();
    m_toSend.pop_back();
    m_completed = 0;
    const uint32_t child = (m_rank + (1U << k)) % m_nRanks; // place v + 2^k
    Ptr<RcQp> qp = m_peers.For(m_rank, child, m_rank, m_nRanks);
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        const uint64_t offset = static_cast<uint64_t>(i) * m_chunkBytes;
        const uint64_t bytes = std::min<uint64_t>(m_chunkBytes, m_bytesPerRank - offset);
        qp->PostSend(RcQp::Verb::WRITE, bytes, offset, i, true, i);
        m_stats.chunksSent++;
    }
}

} // namespace mcsim
} // namespace ns3
