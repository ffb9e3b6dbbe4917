// SPDX-License-Identifier: GPL-2.0-only
#include "step-allgather.h"

#include "ns3/uinteger.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(StepAllgather);
NS_OBJECT_ENSURE_REGISTERED(RecursiveDoublingAllgather);
NS_OBJECT_ENSURE_REGISTERED(BruckAllgather);

TypeId
StepAllgather::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::StepAllgather")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddAttribute("ChunkBytes",
                          "Bytes per RDMA WRITE (a step's shards go in such pieces).",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&StepAllgather::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

StepAllgather::StepAllgather()
    : m_chunkBytes(64 * 1024),
      m_step(0)
{
}

StepAllgather::~StepAllgather() = default;

void
StepAllgather::DoDispose()
{
    m_peers.Clear();
    CollectiveRank::DoDispose();
}

std::vector<uint32_t>
StepAllgather::GetRingDistances() const
{
    return PowerOfTwoDistances();
}

void
StepAllgather::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    m_peers.Wire(next, prev, GetRingDistances());
    m_steps = PlanSteps();
    m_got.assign(m_steps.size(), 0);
    m_acked.assign(m_steps.size(), 0);
}

void
StepAllgather::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_peers.WireRings(out, in);
}

std::vector<StepAllgather::Range>
StepAllgather::Wrapped(uint32_t first, uint32_t count) const
{
    first %= m_nRanks;
    const uint32_t head = std::min(count, m_nRanks - first);
    std::vector<Range> out{{first, head}};
    if (head < count)
    {
        out.push_back({0, count - head});
    }
    return out;
}

uint64_t
StepAllgather::Chunks(const std::vector<Range>& ranges) const
{
    uint64_t n = 0;
    for (const Range& r : ranges)
    {
        n += ChunkCount(r.count * m_bytesPerRank, m_chunkBytes);
    }
    return n;
}

void
StepAllgather::Start()
{
    for (const Step& s : m_steps)
    {
        m_peers.For(s.from, m_rank, m_rank, m_nRanks)
            ->PostRecv(static_cast<uint32_t>(Chunks(s.receive)));
    }
    if (m_steps.empty())
    {
        MarkFinished();
        return;
    }
    Send(0);
}

void
StepAllgather::Send(uint32_t k)
{
    Ptr<RcQp> qp = m_peers.For(m_rank, m_steps[k].to, m_rank, m_nRanks);
    for (const Range& r : m_steps[k].send)
    {
        const uint64_t start = r.first * m_bytesPerRank;
        const uint64_t end = start + r.count * m_bytesPerRank;
        for (uint64_t at = start; at < end; at += m_chunkBytes)
        {
            qp->PostSend(RcQp::Verb::WRITE,
                         std::min<uint64_t>(m_chunkBytes, end - at),
                         at,
                         k,
                         true,
                         k);
            m_stats.chunksSent++;
        }
    }
}

void
StepAllgather::OnReceive(uint32_t /* host */, const Completion& c)
{
    m_stats.chunksReceived++;
    m_got.at(c.imm)++;
    Advance();
}

void
StepAllgather::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t wrId)
{
    m_acked.at(wrId)++;
    Advance();
}

void
StepAllgather::Advance()
{
    while (m_step < m_steps.size() && m_got[m_step] == Chunks(m_steps[m_step].receive) &&
           m_acked[m_step] == Chunks(m_steps[m_step].send))
    {
        if (++m_step == m_steps.size())
        {
            MarkFinished();
            return;
        }
        Send(m_step);
    }
}

TypeId
RecursiveDoublingAllgather::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::RecursiveDoublingAllgather")
                            .SetParent<StepAllgather>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<RecursiveDoublingAllgather>();
    return tid;
}

std::vector<StepAllgather::Step>
RecursiveDoublingAllgather::PlanSteps() const
{
    if (!std::has_single_bit(m_nRanks))
    {
        throw std::invalid_argument("RecursiveDoublingAllgather: " + std::to_string(m_nRanks) +
                                    " ranks, not a power of 2");
    }
    std::vector<Step> steps;
    for (uint32_t d = 1; d < m_nRanks; d *= 2)
    {
        const uint32_t partner = m_rank ^ d;
        steps.push_back({partner, {{m_rank & ~(d - 1), d}}, partner, {{partner & ~(d - 1), d}}});
    }
    return steps;
}

TypeId
BruckAllgather::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::BruckAllgather")
                            .SetParent<StepAllgather>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<BruckAllgather>();
    return tid;
}

std::vector<StepAllgather::Step>
BruckAllgather::PlanSteps() const
{
    std::vector<Step> steps;
    for (uint32_t d = 1; d < m_nRanks; d *= 2)
    {
        const uint32_t count = std::min(d, m_nRanks - d);
        const uint32_t to = (m_rank + m_nRanks - d) % m_nRanks;
        const uint32_t from = (m_rank + d) % m_nRanks;
        steps.push_back({to, Wrapped(m_rank, count), from, Wrapped(from, count)});
    }
    return steps;
}

} // namespace mcsim
} // namespace ns3
