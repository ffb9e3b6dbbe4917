// SPDX-License-Identifier: GPL-2.0-only
// The faults of a Port's link, set before the run (LinkFaults; fabric/doc/fabric.md, "Port"): what
// LoseAtArrival decides from.
#include "port.h"

namespace ns3
{
namespace mcsim
{

void
Port::SetLossProbability(double p)
{
    m_faults.SetLossProbability(p);
    m_faulty = m_faults.Any();
}

double
Port::GetLossProbability() const
{
    return m_faults.GetLossProbability();
}

int64_t
Port::AssignStreams(int64_t stream)
{
    return m_faults.AssignStreams(stream);
}

void
Port::SetChosenDrops(const uint64_t* indexes, std::size_t n)
{
    m_faults.SetChosenDrops(indexes, n);
    m_faulty = m_faults.Any();
}

void
Port::SetDownIntervals(const int64_t* downUpPs, std::size_t n)
{
    m_faults.SetDownIntervals(downUpPs, n);
    m_faulty = m_faults.Any();
}

} // namespace mcsim
} // namespace ns3
