// SPDX-License-Identifier: GPL-2.0-only
#include "ring-reduce-scatter.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RingReduceScatter);

TypeId
RingReduceScatter::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::RingReduceScatter")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<RingReduceScatter>()
            .AddAttribute("ChunkBytes",
                          "Pipelining unit: bytes per RDMA WRITE with immediate.",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&RingReduceScatter::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("ReducePerByte",
                          "Time to add one received byte to the local contribution (the reduction "
                          "engine handles one chunk at a time).",
                          TimeValue(PicoSeconds(0)),
                          MakeTimeAccessor(&RingReduceScatter::m_reducePerByte),
                          MakeTimeChecker(Time(0)));
    return tid;
}

RingReduceScatter::RingReduceScatter()
    : m_chunkBytes(64 * 1024),
      m_chunks(0),
      m_completed(0)
{
}

RingReduceScatter::~RingReduceScatter() = default;

void
RingReduceScatter::DoDispose()
{
    m_next = nullptr;
    m_prev = nullptr;
    CollectiveRank::DoDispose();
}

void
RingReduceScatter::Connect(Ptr<RcQp> next, Ptr<RcQp> prev)
{
    m_next = next;
    m_prev = prev;
    m_chunks = static_cast<uint32_t>((m_shardBytes + m_chunkBytes - 1) / m_chunkBytes);
    m_prev->PostRecv((m_nRanks - 1) * m_chunks); // every WRITE with immediate consumes one
}

uint64_t
RingReduceScatter::ChunkSize(uint32_t i) const
{
    const uint64_t start = static_cast<uint64_t>(i) * m_chunkBytes;
    return std::min<uint64_t>(m_chunkBytes, m_shardBytes - start);
}

void
RingReduceScatter::Start()
{
    const uint32_t block = (m_rank + m_nRanks - 1) % m_nRanks; // this rank starts block r-1
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        Write(block * m_chunks + i);
    }
}

void
RingReduceScatter::Write(uint32_t id)
{
    const uint32_t block = id / m_chunks;
    const uint32_t i = id % m_chunks;
    // partial sums of block b land in the receiver's staging area for b (its region, block b)
    const uint64_t offset = block * m_shardBytes + static_cast<uint64_t>(i) * m_chunkBytes;
    m_next->PostSend(RcQp::Verb::WRITE, ChunkSize(i), offset, id, true, id);
    m_stats.chunksSent++;
}

void
RingReduceScatter::OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId)
{
}

void
RingReduceScatter::OnReceive(uint32_t host, const Completion& c)
{
    const uint32_t block = c.imm / m_chunks;
    m_stats.chunksReceived++;
    // add this rank's contribution on the reduction engine, then pass the sum on (or keep it)
    const Time start = std::max(Simulator::Now(), m_reduceBusyUntil);
    m_reduceBusyUntil = start + m_reducePerByte * static_cast<int64_t>(ChunkSize(c.imm % m_chunks));
    if (block == m_rank)
    {
        Simulator::Schedule(m_reduceBusyUntil - Simulator::Now(), [this]() {
            if (++m_completed == m_chunks)
            {
                MarkFinished();
            }
        });
    }
    else
    {
        Simulator::Schedule(m_reduceBusyUntil - Simulator::Now(), &RingReduceScatter::Write, this, c.imm);
    }
}

} // namespace mcsim
} // namespace ns3
