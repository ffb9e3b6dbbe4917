// SPDX-License-Identifier: GPL-2.0-only
// A Fabric's bulk readers of its ports', hosts', sources' and switches' counters, and of a PFC
// deadlock.
#include "fabric.h"

#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/counter-table.h"

namespace ns3
{
namespace mcsim
{

namespace
{
/** The fields of a row of GetSourceCounters, in order: X(member, initial, python_name). */
#define MCSIM_SOURCE_COUNTERS(X)                                                                   \
    /* packets handed to the host */                                                               \
    X(sentPackets, 0, "sent_packets")                                                              \
    /* payload bytes handed to the host */                                                         \
    X(sentBytes, 0, "sent_bytes")                                                                  \
    /* last bit of the last packet left the host */                                                \
    X(lastDeparturePs, 0, "last_departure_ps")

/** One traffic source's row of GetSourceCounters. */
struct SourceRow
{
    MCSIM_COUNTERS(MCSIM_SOURCE_COUNTERS)
};

const CounterTable g_portTable("port", CounterTable::Columns({}, Port::Counters::NAMES));
const CounterTable g_pfcTable("pfc", CounterTable::Columns({}, PfcCounters::NAMES));
const CounterTable g_ecnTable("ecn", CounterTable::Columns({}, EcnCounters::NAMES));
const CounterTable g_intTable("int", CounterTable::Columns({}, IntCounters::NAMES));
const CounterTable g_hostTable("host", CounterTable::Columns({}, Host::Counters::NAMES));
const CounterTable g_sourceTable("source", CounterTable::Columns({}, SourceRow::NAMES));
const CounterTable g_aggregationTable("aggregation",
                                      CounterTable::Columns({}, AggregationUnit::Counters::NAMES));
} // namespace

void
Fabric::GetPortCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Fabric::GetPortCounters", n, m_ports.size() * Port::NUM_COUNTERS);
    static_assert(sizeof(Port::Counters) == Port::NUM_COUNTERS * sizeof(uint64_t));
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        m_ports[i]->GetCounters().CopyTo(out + i * Port::NUM_COUNTERS);
    }
}

void
Fabric::GetPfcCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Fabric::GetPfcCounters", n, m_ports.size() * PfcCounters::COUNT);
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        m_ports[i]->GetPfc().GetCounters().CopyTo(out + i * PfcCounters::COUNT);
    }
}

void
Fabric::GetEcnCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Fabric::GetEcnCounters", n, m_ports.size() * EcnCounters::COUNT);
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        m_ports[i]->GetEcnCounters().CopyTo(out + i * EcnCounters::COUNT);
    }
}

void
Fabric::GetIntCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Fabric::GetIntCounters", n, m_ports.size() * IntCounters::COUNT);
    for (std::size_t i = 0; i < m_ports.size(); ++i)
    {
        m_ports[i]->GetIntCounters().CopyTo(out + i * IntCounters::COUNT);
    }
}

IntStore*
Fabric::GetIntStore()
{
    return &m_intStore;
}

void
Fabric::GetPfcDeadlock(uint32_t* out, std::size_t n) const
{
    const auto& cycle = m_pfcWatchdog.GetCycle();
    CheckOutputSize("Fabric::GetPfcDeadlock", n, 2 * cycle.size());
    for (std::size_t i = 0; i < cycle.size(); ++i)
    {
        out[2 * i] = cycle[i].first;
        out[2 * i + 1] = cycle[i].second;
    }
}

uint32_t
Fabric::GetPfcDeadlockLength() const
{
    return static_cast<uint32_t>(m_pfcWatchdog.GetCycle().size());
}

void
Fabric::GetHostCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Fabric::GetHostCounters", n, m_hosts.size() * Host::NUM_COUNTERS);
    for (std::size_t i = 0; i < m_hosts.size(); ++i)
    {
        m_hosts[i]->GetCounters().CopyTo(out + i * Host::NUM_COUNTERS);
    }
}

void
Fabric::GetSourceCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Fabric::GetSourceCounters", n, m_sources.size() * SourceRow::COUNT);
    for (std::size_t i = 0; i < m_sources.size(); ++i)
    {
        const TrafficSource& s = *m_sources[i];
        const SourceRow row{.sentPackets = s.GetSentPackets(),
                            .sentBytes = s.GetSentBytes(),
                            .lastDeparturePs =
                                static_cast<uint64_t>(s.GetLastDeparture().GetPicoSeconds())};
        row.CopyTo(out + i * SourceRow::COUNT);
    }
}

void
Fabric::GetAggregationCounters(uint64_t* out, std::size_t n) const
{
    constexpr uint32_t columns = AggregationUnit::Counters::COUNT;
    CheckOutputSize("Fabric::GetAggregationCounters", n, m_switches.size() * columns);
    for (std::size_t i = 0; i < m_switches.size(); ++i)
    {
        m_switches[i]->GetAggregationCounters().CopyTo(out + i * columns);
    }
}

} // namespace mcsim
} // namespace ns3
