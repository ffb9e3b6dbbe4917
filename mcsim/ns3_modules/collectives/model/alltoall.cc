// SPDX-License-Identifier: GPL-2.0-only
#include "alltoall.h"

#include "ns3/boolean.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(Alltoall);

TypeId
Alltoall::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Alltoall")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<Alltoall>()
            .AddAttribute("ChunkBytes",
                          "Bytes per RDMA WRITE (a block goes in such pieces).",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&Alltoall::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Pairwise",
                          "true: P-1 steps, to r+s and from r-s in step s; false: every block "
                          "posted at the start.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&Alltoall::m_pairwise),
                          MakeBooleanChecker());
    return tid;
}

Alltoall::Alltoall()
    : m_chunkBytes(64 * 1024),
      m_pairwise(true),
      m_chunks(0),
      m_received(0),
      m_step(1),
      m_stepAcked(0)
{
}

Alltoall::~Alltoall() = default;

void
Alltoall::DoDispose()
{
    m_out.clear();
    CollectiveRank::DoDispose();
}

std::vector<uint32_t>
Alltoall::GetRingDistances() const
{
    std::vector<uint32_t> d;
    for (uint32_t k = 2; k < m_nRanks; ++k)
    {
        d.push_back(k);
    }
    return d;
}

void
Alltoall::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    m_chunks = static_cast<uint32_t>(ChunkCount(m_bytesPerRank, m_chunkBytes));
    m_out = {next};
    m_from.assign(m_nRanks, 0);
    prev->PostRecv(m_chunks);
}

void
Alltoall::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_out.insert(m_out.end(), out.begin(), out.end());
    for (const auto& qp : in)
    {
        qp->PostRecv(m_chunks);
    }
}

uint64_t
Alltoall::ChunkBytes(uint32_t i) const
{
    return std::min<uint64_t>(m_chunkBytes,
                              m_bytesPerRank - static_cast<uint64_t>(i) * m_chunkBytes);
}

void
Alltoall::Start()
{
    const uint64_t n = m_bytesPerRank;
    const uint64_t recv = m_nRanks * n; // the receive buffer's start
    if (uint8_t* own = Bytes(m_rank * n, n); own != nullptr)
    {
        std::memcpy(Bytes(recv + m_rank * n, n), own, n); // its own block
    }
    if (m_pairwise)
    {
        SendTo(1);
        return;
    }
    for (uint32_t d = 1; d < m_nRanks; ++d)
    {
        SendTo(d);
    }
}

void
Alltoall::SendTo(uint32_t distance)
{
    const uint32_t to = (m_rank + distance) % m_nRanks;
    const uint64_t n = m_bytesPerRank;
    const uint64_t recv = m_nRanks * n;
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        const uint64_t within = static_cast<uint64_t>(i) * m_chunkBytes;
        m_out.at(distance - 1)
            ->PostSend(RcQp::Verb::WRITE,
                       ChunkBytes(i),
                       recv + m_rank * n + within, // rank `to`'s block r
                       distance,
                       true,
                       m_rank * m_chunks + i,
                       to * n + within); // this rank's block for `to`
        m_stats.chunksSent++;
    }
}

void
Alltoall::OnReceive(uint32_t /* host */, const Completion& c)
{
    m_stats.chunksReceived++;
    const uint32_t sender = c.imm / m_chunks;
    m_from[(m_rank + m_nRanks - sender) % m_nRanks]++;
    if (++m_received == static_cast<uint64_t>(m_nRanks - 1) * m_chunks)
    {
        MarkFinished();
    }
    Advance();
}

void
Alltoall::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t wrId)
{
    if (m_pairwise && wrId == m_step)
    {
        m_stepAcked++;
        Advance();
    }
}

void
Alltoall::Advance()
{
    while (m_pairwise && m_step < m_nRanks && m_stepAcked == m_chunks && m_from[m_step] == m_chunks)
    {
        m_stepAcked = 0;
        if (++m_step < m_nRanks)
        {
            SendTo(m_step);
        }
    }
}

} // namespace mcsim
} // namespace ns3
