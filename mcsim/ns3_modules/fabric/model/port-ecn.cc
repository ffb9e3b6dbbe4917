// SPDX-License-Identifier: GPL-2.0-only
// ECN of a Port: RED marking at a switch's output queue, ECT(0) at a host's (fabric.md, "ECN").
#include "mix.h"
#include "port.h"

#include "ns3/mcsim/event-loop.h"

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr double UNIT_53 =
    1.0 / static_cast<double>(uint64_t{1} << 53); //!< 53 random bits -> [0, 1)
} // namespace

void
Port::SetEcn(bool mark, bool stamp, uint64_t seed)
{
    m_ecn.mark = mark;
    m_ecn.stamp = stamp;
    m_ecn.seed = seed;
    UpdateRewrite();
}

const EcnCounters&
Port::GetEcnCounters() const
{
    return m_ecn.counters;
}

uint64_t
Port::GetEcnKminBytes() const
{
    return m_ecn.kmin;
}

uint64_t
Port::GetEcnKmaxBytes() const
{
    return m_ecn.kmax;
}

uint64_t
Port::GetQueueBytesAt(Time at) const
{
    return m_queue.OccupancyAt(at, m_delay);
}

void
Port::EcnStamp(FabricHeader::Fields& f)
{
    if (m_ecn.stamp && f.GetEcn() == FabricHeader::ECN_NOT_ECT)
    {
        f.SetEcn(FabricHeader::ECN_ECT0);
        m_ecn.counters.ectStamped++;
    }
    if (!m_ecn.mark || f.GetEcn() == FabricHeader::ECN_NOT_ECT)
    {
        return;
    }
    m_ecn.counters.ectPackets++;
    if (f.GetEcn() == FabricHeader::ECN_CE)
    {
        return; // marked upstream already
    }
    // RED on the output queue as the packet joins it: no mark at or below Kmin, a mark at or
    // above Kmax, in between with probability Pmax (q - Kmin) / (Kmax - Kmin)
    const uint64_t q = m_queue.Occupancy(mcsim::Now(), m_delay);
    if (q <= m_ecn.kmin)
    {
        return;
    }
    if (q < m_ecn.kmax)
    {
        const double p = m_ecn.pmax * static_cast<double>(q - m_ecn.kmin) /
                         static_cast<double>(m_ecn.kmax - m_ecn.kmin);
        const uint64_t draw = Mix(m_ecn.seed ^ Mix(m_ecn.draws++));
        if (static_cast<double>(draw >> 11) * UNIT_53 >= p)
        {
            return;
        }
    }
    f.SetEcn(FabricHeader::ECN_CE);
    m_ecn.counters.ceMarked++;
}

} // namespace mcsim
} // namespace ns3
