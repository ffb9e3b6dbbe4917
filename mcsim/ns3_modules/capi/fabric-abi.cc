// SPDX-License-Identifier: GPL-2.0-only
// The fabric's part of the C ABI (ns3/mcsim/abi.h): a Fabric handle's calls, one each.
#include "abi.h"

#include "ns3/mcsim/aggregation-unit.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/mcsim/fabric.h"

using namespace ns3;
using namespace ns3::mcsim;

namespace
{
/** mcsim.config.fabric declares them too (tests/native/test_constants.py compares). */
const capi::Constants g_fabricConstants({
    {"FABRIC_HEADER_BYTES", FabricHeader::SERIALIZED_BYTES},
    {"GROUP_FLAG", FabricHeader::GROUP_FLAG},
    {"AGGREGATION_ROOT", AggregationUnit::ROOT},
});

/** The fabric's counter tables (fabric/helper/fabric-counters.cc), read by mcsim_counters. */
const capi::CounterReaders g_fabricReaders({
    {"port", capi::ReadWith<Fabric, &Fabric::GetPortCounters>},
    {"pfc", capi::ReadWith<Fabric, &Fabric::GetPfcCounters>},
    {"ecn", capi::ReadWith<Fabric, &Fabric::GetEcnCounters>},
    {"int", capi::ReadWith<Fabric, &Fabric::GetIntCounters>},
    {"host", capi::ReadWith<Fabric, &Fabric::GetHostCounters>},
    {"source", capi::ReadWith<Fabric, &Fabric::GetSourceCounters>},
    {"aggregation", capi::ReadWith<Fabric, &Fabric::GetAggregationCounters>},
});
} // namespace

/** The factories of every switch and port (Fabric::SetSwitchFactory, SetPortFactory), before Build.
 */
MCSIM_ABI int64_t
mcsim_fabric_set_factories(void* fabric, void* switchFactory, void* portFactory)
{
    return capi::Do([&] {
        capi::As<Fabric>(fabric).SetSwitchFactory(capi::FactoryAt(switchFactory));
        capi::As<Fabric>(fabric).SetPortFactory(capi::FactoryAt(portFactory));
    });
}

MCSIM_ABI int64_t
mcsim_fabric_build(void* fabric,
                   uint32_t nHosts,
                   const uint32_t* switchPorts,
                   uint64_t nSwitches,
                   const uint32_t* links,
                   const uint64_t* rateBps,
                   const uint32_t* encoding,
                   const int64_t* delayPs,
                   uint64_t nLinks)
{
    return capi::Do([&] {
        capi::As<Fabric>(fabric)
            .Build(nHosts, switchPorts, nSwitches, links, rateBps, encoding, delayPs, nLinks);
    });
}

MCSIM_ABI int64_t
mcsim_fabric_set_unicast_table(void* fabric,
                               uint32_t node,
                               const uint32_t* offsets,
                               uint64_t nOffsets,
                               const uint32_t* candidates,
                               uint64_t nCandidates)
{
    return capi::Do([&] {
        capi::As<Fabric>(fabric).SetUnicastTable(node, offsets, nOffsets, candidates, nCandidates);
    });
}

MCSIM_ABI int64_t
mcsim_fabric_schedule_unicast_table(void* fabric,
                                    int64_t atPs,
                                    uint32_t node,
                                    const uint32_t* offsets,
                                    uint64_t nOffsets,
                                    const uint32_t* candidates,
                                    uint64_t nCandidates)
{
    return capi::Do([&] {
        capi::As<Fabric>(fabric)
            .ScheduleUnicastTable(atPs, node, offsets, nOffsets, candidates, nCandidates);
    });
}

MCSIM_ABI int64_t
mcsim_fabric_set_multicast_ports(void* fabric,
                                 uint32_t group,
                                 uint32_t node,
                                 const uint32_t* ports,
                                 uint64_t nPorts)
{
    return capi::Do(
        [&] { capi::As<Fabric>(fabric).SetMulticastPorts(group, node, ports, nPorts); });
}

MCSIM_ABI int64_t
mcsim_fabric_schedule_multicast_ports(void* fabric,
                                      int64_t atPs,
                                      uint32_t group,
                                      uint32_t node,
                                      const uint32_t* ports,
                                      uint64_t nPorts)
{
    return capi::Do(
        [&] { capi::As<Fabric>(fabric).ScheduleMulticastPorts(atPs, group, node, ports, nPorts); });
}

MCSIM_ABI int64_t
mcsim_fabric_set_aggregation_trees(void* fabric,
                                   const uint32_t* rows,
                                   uint64_t n,
                                   uint32_t slotBytes)
{
    return capi::Do([&] { capi::As<Fabric>(fabric).SetAggregationTrees(rows, n, slotBytes); });
}

MCSIM_ABI int64_t
mcsim_fabric_set_loss_probabilities(void* fabric, const double* probability, uint64_t n)
{
    return capi::Do([&] { capi::As<Fabric>(fabric).SetLossProbabilities(probability, n); });
}

MCSIM_ABI int64_t
mcsim_fabric_set_lossy_hosts(void* fabric, const uint32_t* hosts, uint64_t n)
{
    return capi::Do([&] { capi::As<Fabric>(fabric).SetLossyHosts(hosts, n); });
}

MCSIM_ABI int64_t
mcsim_fabric_set_switch_attributes(void* fabric,
                                   const uint64_t* latency_ps,
                                   const uint64_t* aggregation_bps,
                                   uint64_t n)
{
    return capi::Do(
        [&] { capi::As<Fabric>(fabric).SetSwitchAttributes(latency_ps, aggregation_bps, n); });
}

MCSIM_ABI int64_t
mcsim_fabric_set_chosen_drops(void* fabric,
                              uint32_t node,
                              uint32_t port,
                              const uint64_t* indexes,
                              uint64_t n)
{
    return capi::Do([&] { capi::As<Fabric>(fabric).SetChosenDrops(node, port, indexes, n); });
}

MCSIM_ABI int64_t
mcsim_fabric_set_link_down(void* fabric,
                           uint32_t node,
                           uint32_t port,
                           const int64_t* downUpPs,
                           uint64_t n)
{
    return capi::Do([&] { capi::As<Fabric>(fabric).SetLinkDown(node, port, downUpPs, n); });
}

MCSIM_ABI int64_t
mcsim_fabric_add_sources(void* fabric,
                         const uint32_t* host,
                         const uint32_t* destination,
                         const uint64_t* bytes,
                         const uint32_t* packetBytes,
                         const uint32_t* flow,
                         const int64_t* startPs,
                         uint64_t n)
{
    return capi::Do([&] {
        capi::As<Fabric>(fabric)
            .AddSources(host, destination, bytes, packetBytes, flow, startPs, n);
    });
}

MCSIM_ABI int64_t
mcsim_fabric_n_ports(void* fabric)
{
    return capi::Call([&] { return capi::As<Fabric>(fabric).GetNPorts(); });
}

MCSIM_ABI int64_t
mcsim_fabric_unroutable_packets(void* fabric)
{
    return capi::Call([&] { return capi::As<Fabric>(fabric).GetUnroutablePackets(); });
}

/** Ports in the PFC deadlock that stopped the run (0: none). */
MCSIM_ABI int64_t
mcsim_fabric_pfc_deadlock_length(void* fabric)
{
    return capi::Call([&] { return capi::As<Fabric>(fabric).GetPfcDeadlockLength(); });
}

/** The PFC deadlock's ports: (node, port) pairs, each waiting on the next. */
MCSIM_ABI int64_t
mcsim_fabric_pfc_deadlock(void* fabric, uint32_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<Fabric>(fabric).GetPfcDeadlock(out, n); });
}
