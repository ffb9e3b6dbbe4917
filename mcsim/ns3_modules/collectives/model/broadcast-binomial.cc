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
    m_out.clear();
    m_in.clear();
    CollectiveRank::DoDispose();
}

std::vector<uint32_t>
BroadcastBinomial::GetRingDistances() const
{
    std::vector<uint32_t> d;
    for (uint64_t k = 2; k < m_nRanks; k *= 2)
    {
        d.push_back(static_cast<uint32_t>(k));
    }
    return d;
}

void
BroadcastBinomial::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    if (static_cast<uint32_t>(m_root) >= m_nRanks)
    {
        throw std::invalid_argument("BroadcastBinomial: Root=" + std::to_string(m_root) +
                                    " is not a rank of " + std::to_string(m_nRanks));
    }
    m_out = {next};
    m_in = {prev};
    m_chunks = static_cast<uint32_t>((m_bytesPerRank + m_chunkBytes - 1) / m_chunkBytes);
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
    if (v % 2 == 1)
    {
        prev->PostRecv(m_chunks); // the parent is v - 1 (the other parents' QPs: WireRings)
    }
}

void
BroadcastBinomial::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_out.insert(m_out.end(), out.begin(), out.end());
    m_in.insert(m_in.end(), in.begin(), in.end());
    const uint32_t v = (m_rank + m_nRanks - static_cast<uint32_t>(m_root)) % m_nRanks;
    if (v != 0 && v % 2 == 0)
    {
        m_in.at(std::countr_zero(v))->PostRecv(m_chunks); // from v - 2^j, its lowest set bit
    }
}

void
BroadcastBinomial::Start()
{
    if (m_rank == static_cast<uint32_t>(m_root))
    {
        MarkFinished(); // the root holds the buffer
        SendToNextChild();
    }
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
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        const uint64_t offset = static_cast<uint64_t>(i) * m_chunkBytes;
        const uint64_t bytes = std::min<uint64_t>(m_chunkBytes, m_bytesPerRank - offset);
        m_out.at(k)->PostSend(RcQp::Verb::WRITE, bytes, offset, i, true, i);
        m_stats.chunksSent++;
    }
}

} // namespace mcsim
} // namespace ns3
