// SPDX-License-Identifier: GPL-2.0-only
#include "halving-doubling-allreduce.h"

#include "host-sum.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/nic.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(HalvingDoublingAllreduce);

TypeId
HalvingDoublingAllreduce::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::HalvingDoublingAllreduce")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<HalvingDoublingAllreduce>()
            .AddAttribute("ChunkBytes",
                          "Bytes per RDMA WRITE.",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&HalvingDoublingAllreduce::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ReducePsPerByte",
                          "Picoseconds to add one received byte (as RingReduceScatter's).",
                          UintegerValue(HOST_REDUCE_PS_PER_BYTE),
                          MakeUintegerAccessor(&HalvingDoublingAllreduce::m_reducePsPerByte),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

HalvingDoublingAllreduce::HalvingDoublingAllreduce()
    : m_chunkBytes(64 * 1024),
      m_reducePsPerByte(HOST_REDUCE_PS_PER_BYTE),
      m_blocks(0, 1),
      m_step(0)
{
}

HalvingDoublingAllreduce::~HalvingDoublingAllreduce() = default;

void
HalvingDoublingAllreduce::DoDispose()
{
    m_peers.Clear();
    CollectiveRank::DoDispose();
}

std::vector<uint32_t>
HalvingDoublingAllreduce::GetRingDistances() const
{
    return PowerOfTwoDistances();
}

void
HalvingDoublingAllreduce::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    if (!std::has_single_bit(m_nRanks))
    {
        throw std::invalid_argument("HalvingDoublingAllreduce: " + std::to_string(m_nRanks) +
                                    " ranks, not a power of 2");
    }
    m_peers.Wire(next, prev, GetRingDistances());
    m_blocks = BlockSplit(m_bytesPerRank, m_nRanks);
    uint32_t lo = 0;
    uint32_t hi = m_nRanks;
    for (uint32_t mask = m_nRanks / 2; mask >= 1; mask /= 2) // halving: keep the side of r
    {
        const uint32_t mid = lo + (hi - lo) / 2;
        const bool upper = (m_rank & mask) != 0;
        const Step s{m_rank ^ mask,
                     upper ? lo : mid,
                     upper ? mid : hi,
                     upper ? mid : lo,
                     upper ? hi : mid,
                     true};
        m_steps.push_back(s);
        lo = s.recvLo;
        hi = s.recvHi;
    }
    for (uint32_t mask = 1; mask < m_nRanks; mask *= 2) // doubling: swap the windows of sums
    {
        const uint32_t partner = m_rank ^ mask;
        const uint32_t mine = m_rank & ~(mask - 1);
        const uint32_t theirs = partner & ~(mask - 1);
        m_steps.push_back({partner, mine, mine + mask, theirs, theirs + mask, false});
    }
    m_done.assign(m_steps.size(), 0);
    m_acked.assign(m_steps.size(), 0);
}

void
HalvingDoublingAllreduce::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_peers.WireRings(out, in);
}

uint64_t
HalvingDoublingAllreduce::Chunks(uint32_t lo, uint32_t hi) const
{
    return ChunkCount(m_blocks.Offset(hi) - m_blocks.Offset(lo), m_chunkBytes);
}

uint64_t
HalvingDoublingAllreduce::Landing(uint32_t k) const
{
    return m_steps[k].reduce ? (1 + k) * m_bytesPerRank : 0;
}

void
HalvingDoublingAllreduce::Start()
{
    for (const Step& s : m_steps)
    {
        m_peers.For(s.partner, m_rank, m_rank, m_nRanks)
            ->PostRecv(static_cast<uint32_t>(Chunks(s.recvLo, s.recvHi)));
    }
    Send(0);
    Advance(); // steps that move no bytes (N < 4P) end at once
}

void
HalvingDoublingAllreduce::Send(uint32_t k)
{
    const Step& s = m_steps[k];
    const uint64_t start = m_blocks.Offset(s.sendLo);
    const uint64_t end = m_blocks.Offset(s.sendHi);
    uint32_t i = 0;
    for (uint64_t at = start; at < end; at += m_chunkBytes, ++i)
    {
        m_peers.For(m_rank, s.partner, m_rank, m_nRanks)
            ->PostSend(RcQp::Verb::WRITE,
                       std::min<uint64_t>(m_chunkBytes, end - at),
                       Landing(k) + at,
                       k,
                       true,
                       (k << CHUNK_BITS) | i,
                       at); // from the rank's buffer
        m_stats.chunksSent++;
    }
}

void
HalvingDoublingAllreduce::OnReceive(uint32_t /* host */, const Completion& c)
{
    m_stats.chunksReceived++;
    const uint32_t k = c.imm >> CHUNK_BITS;
    const Step& s = m_steps.at(k);
    if (!s.reduce)
    {
        m_done[k]++;
        Advance();
        return;
    }
    const uint64_t start = m_blocks.Offset(s.recvLo);
    const uint64_t at =
        start + static_cast<uint64_t>(c.imm & ((1U << CHUNK_BITS) - 1)) * m_chunkBytes;
    const uint64_t n = std::min<uint64_t>(m_chunkBytes, m_blocks.Offset(s.recvHi) - at);
    const Time done = ReduceUntil(m_reduceBusyUntil, m_reducePsPerByte, n);
    mcsim::Post(
        done - Simulator::Now(),
        Ptr<EventImpl>(MakeEvent(&HalvingDoublingAllreduce::Reduced, this, k, at, n), false),
        m_computeSource);
}

void
HalvingDoublingAllreduce::Reduced(uint32_t k, uint64_t at, uint64_t n)
{
    if (uint8_t* own = Bytes(at, n); own != nullptr)
    {
        AddInt32(own, Bytes(Landing(k) + at, n), n);
    }
    m_done[k]++;
    Advance();
}

void
HalvingDoublingAllreduce::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t wrId)
{
    m_acked.at(wrId)++;
    Advance();
}

void
HalvingDoublingAllreduce::Advance()
{
    while (m_step < m_steps.size())
    {
        const Step& s = m_steps[m_step];
        if (m_done[m_step] != Chunks(s.recvLo, s.recvHi) ||
            m_acked[m_step] != Chunks(s.sendLo, s.sendHi))
        {
            return;
        }
        if (++m_step == m_steps.size())
        {
            MarkFinished();
            return;
        }
        Send(m_step);
    }
}

} // namespace mcsim
} // namespace ns3
