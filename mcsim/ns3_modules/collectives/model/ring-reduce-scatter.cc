// SPDX-License-Identifier: GPL-2.0-only
#include "ring-reduce-scatter.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
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
            .SetParent<RingRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<RingReduceScatter>()
            .AddAttribute("ReducePerByte",
                          "Time to add one received byte to the local contribution (the reduction "
                          "engine handles one chunk at a time).",
                          TimeValue(PicoSeconds(0)),
                          MakeTimeAccessor(&RingReduceScatter::m_reducePerByte),
                          MakeTimeChecker(Time(0)));
    return tid;
}

RingReduceScatter::RingReduceScatter()
    : m_completed(0)
{
}

RingReduceScatter::~RingReduceScatter() = default;

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
RingReduceScatter::OnReceive(uint32_t host, const Completion& c)
{
    const uint32_t block = c.imm / m_chunks;
    m_stats.chunksReceived++;
    // add this rank's contribution on the reduction engine, then pass the sum on (or keep it)
    const Time start = std::max(Simulator::Now(), m_reduceBusyUntil);
    m_reduceBusyUntil = start + m_reducePerByte * static_cast<int64_t>(ChunkSize(c.imm % m_chunks));
    if (block == m_rank)
    {
        mcsim::Post(m_reduceBusyUntil - Simulator::Now(),
                    Ptr<EventImpl>(MakeEvent([this]() {
                                       if (++m_completed == m_chunks)
                                       {
                                           MarkFinished();
                                       }
                                   }),
                                   false),
                    m_computeSource);
    }
    else
    {
        mcsim::Post(m_reduceBusyUntil - Simulator::Now(),
                    Ptr<EventImpl>(MakeEvent(&RingReduceScatter::Write, this, c.imm), false),
                    m_computeSource);
    }
}

} // namespace mcsim
} // namespace ns3
