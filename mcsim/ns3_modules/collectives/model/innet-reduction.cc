// SPDX-License-Identifier: GPL-2.0-only
#include "innet-reduction.h"

#include "ns3/boolean.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(InnetReduction);

TypeId
InnetReduction::GetTypeId()
{
    static TypeId tid = AddRegionOffset(
        TypeId("ns3::mcsim::InnetReduction")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<InnetReduction>()
            .AddAttribute("ChunkBytes",
                          "Payload bytes per contribution (at most the MTU).",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&InnetReduction::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Batch",
                          "Contributions posted before waiting for a send completion.",
                          UintegerValue(128),
                          MakeUintegerAccessor(&InnetReduction::m_batch),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("FirstTree",
                          "The first of the team's aggregation trees.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&InnetReduction::m_firstTree),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Trees",
                          "Aggregation trees the team's contributions spread over (chunk c "
                          "goes up tree FirstTree + c mod Trees).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&InnetReduction::m_trees),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Allreduce",
                          "Every rank receives the whole sum (else a Reduce-Scatter).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&InnetReduction::m_allreduce),
                          MakeBooleanChecker()));
    return tid;
}

InnetReduction::InnetReduction()
    : m_chunkBytes(4096),
      m_batch(128),
      m_firstTree(0),
      m_trees(1),
      m_allreduce(false),
      m_group(0),
      m_chunks(0),
      m_total(0),
      m_posted(0),
      m_inFlight(0),
      m_received(0)
{
}

InnetReduction::~InnetReduction() = default;

void
InnetReduction::DoDispose()
{
    m_ud = nullptr;
    m_team.reset();
    CollectiveRank::DoDispose();
}

void
InnetReduction::Wire(uint32_t firstGroup, Ptr<RcQp> /* next */, Ptr<RcQp> /* prev */)
{
    m_group = firstGroup;
    m_chunks = static_cast<uint32_t>(ChunkCount(m_bytesPerRank, m_chunkBytes));
    m_total = m_allreduce ? m_chunks : static_cast<uint64_t>(m_chunks) * m_nRanks;
    Ptr<Nic> nic = m_stack->GetNic(m_host);
    m_ud = m_stack->CreateUdQp();
    const uint32_t qpn = nic->AddQp(m_ud, this);
    for (uint32_t t = 0; m_allreduce && t < m_trees; ++t)
    {
        nic->AttachMulticast(firstGroup + t, qpn);
    }
}

uint32_t
InnetReduction::GetAddressQpn() const
{
    return m_ud->GetQpn();
}

void
InnetReduction::Introduce(std::shared_ptr<const std::vector<RankAddress>> team)
{
    m_team = std::move(team);
}

uint32_t
InnetReduction::ChunkSize(uint32_t i) const
{
    return static_cast<uint32_t>(
        std::min<uint64_t>(m_chunkBytes, m_bytesPerRank - static_cast<uint64_t>(i) * m_chunkBytes));
}

void
InnetReduction::Start()
{
    PostMore();
}

void
InnetReduction::PostMore()
{
    while (m_inFlight < m_batch && m_posted < m_total)
    {
        const uint64_t c = m_posted++;
        const uint32_t block = m_allreduce ? 0 : static_cast<uint32_t>(c % m_nRanks);
        const uint32_t i = static_cast<uint32_t>(m_allreduce ? c : c / m_nRanks);
        const uint32_t t = static_cast<uint32_t>(c % m_trees);
        uint32_t dst = (m_group + t) | FabricHeader::GROUP_FLAG;
        uint32_t qpn = 0;
        if (!m_allreduce)
        {
            dst = (*m_team)[block].host;
            qpn = (*m_team)[block].qpn;
        }
        const uint64_t offset =
            static_cast<uint64_t>(block) * m_bytesPerRank + static_cast<uint64_t>(i) * m_chunkBytes;
        m_ud->PostContribution(m_firstTree + t,
                               static_cast<uint32_t>(c / m_trees),
                               dst,
                               qpn,
                               ChunkSize(i),
                               c,
                               static_cast<uint32_t>(c),
                               static_cast<int64_t>(InRegion(offset)));
        m_inFlight++;
    }
}

void
InnetReduction::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t /* wrId */)
{
    m_inFlight--;
    m_stats.chunksSent++;
    PostMore();
}

void
InnetReduction::OnReceive(uint32_t /* host */, const Completion& c)
{
    const uint32_t i = m_allreduce ? c.imm : c.imm / m_nRanks;
    Ptr<Nic> nic = m_stack->GetNic(m_host);
    if (c.packet != nullptr && nic->HasMemory())
    {
        const uint64_t block = m_allreduce ? 0 : m_rank;
        nic->StorePayload(
            c.packet,
            c.bytes,
            InRegion(block * m_bytesPerRank + static_cast<uint64_t>(i) * m_chunkBytes));
    }
    m_stats.chunksReceived++;
    if (++m_received == m_chunks)
    {
        MarkFinished();
    }
}

uint64_t
InnetReduction::GetReceiveDrops() const
{
    return m_ud ? m_ud->GetCounters().overruns : 0;
}

} // namespace mcsim
} // namespace ns3
