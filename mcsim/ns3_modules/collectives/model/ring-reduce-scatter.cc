// SPDX-License-Identifier: GPL-2.0-only
#include "ring-reduce-scatter.h"

#include "host-sum.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>

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
            .AddAttribute("ReducePsPerByte",
                          "Picoseconds to add one received byte to the local contribution (the "
                          "reduction engine handles one chunk at a time); the default, 68 ps "
                          "(14.7 GB/s), is one core adding 32-bit integers out of cache "
                          "(mcsim/config/collectives.py, HOST_REDUCE_PS_PER_BYTE). An integer of "
                          "ps, not a Time: a Time default below 1 ns would be rounded to the "
                          "nanosecond before the run sets the resolution to ps.",
                          UintegerValue(HOST_REDUCE_PS_PER_BYTE),
                          MakeUintegerAccessor(&RingReduceScatter::m_reducePsPerByte),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

RingReduceScatter::RingReduceScatter()
    : m_completed(0),
      m_reducePsPerByte(HOST_REDUCE_PS_PER_BYTE)
{
}

RingReduceScatter::~RingReduceScatter() = default;

uint64_t
RingReduceScatter::LandingOffset() const
{
    const uint64_t buffer = BlockOffset(m_nRanks - 1) + BlockBytes(m_nRanks - 1);
    return Bytes(0, 0) != nullptr ? buffer : 0;
}

void
RingReduceScatter::Start()
{
    const uint32_t block = (m_rank + m_nRanks - 1) % m_nRanks; // this rank starts block r-1
    const uint64_t landing = LandingOffset();
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        const uint32_t id = block * m_chunks + i;
        const uint64_t n = ChunkBytes(id);
        if (uint8_t* own = Bytes(ChunkOffset(id), n); own != nullptr)
        {
            std::memcpy(Bytes(landing + ChunkOffset(id), n), own, n); // sent from the landing zone
        }
        Write(id, landing, id);
    }
}

void
RingReduceScatter::OnReceive(uint32_t host, const Completion& c)
{
    m_stats.chunksReceived++;
    // add this rank's contribution on the reduction engine, then pass the sum on (or keep it)
    const Time done = ReduceUntil(m_reduceBusyUntil, m_reducePsPerByte, ChunkBytes(c.imm));
    mcsim::Post(done - Simulator::Now(),
                Ptr<EventImpl>(MakeEvent(&RingReduceScatter::Reduced, this, c.imm), false),
                m_computeSource);
}

void
RingReduceScatter::Reduced(uint32_t id)
{
    const uint64_t n = ChunkBytes(id);
    const uint64_t landing = LandingOffset();
    if (uint8_t* own = Bytes(ChunkOffset(id), n); own != nullptr)
    {
        AddInt32(Bytes(landing + ChunkOffset(id), n), own, n);
    }
    if (id / m_chunks == m_rank)
    {
        if (uint8_t* own = Bytes(ChunkOffset(id), n); own != nullptr)
        {
            std::memcpy(own, Bytes(landing + ChunkOffset(id), n), n); // the sum, in place
        }
        OwnChunkReduced(id);
    }
    else
    {
        Write(id, landing, id);
    }
}

void
RingReduceScatter::OwnChunkReduced(uint32_t /* id */)
{
    if (++m_completed == m_chunks)
    {
        MarkFinished();
    }
}

} // namespace mcsim
} // namespace ns3
