// SPDX-License-Identifier: GPL-2.0-only
//
// Fabric: the routes it is given (unicast tables, multicast ports) and the route changes it
// applies at scheduled times (the subnet manager's sweeps after a link goes down).
#include "fabric-header.h"
#include "fabric.h"

#include "ns3/data-rate.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimFabricRoutes");

void
Fabric::SetUnicastTable(uint32_t node,
                        const uint32_t* offsets,
                        std::size_t nOffsets,
                        const uint32_t* candidates,
                        std::size_t nCandidates)
{
    if (nOffsets != m_switches.size() + 1)
    {
        throw std::invalid_argument("Fabric::SetUnicastTable: " + std::to_string(nOffsets) +
                                    " offsets for " + std::to_string(m_switches.size()) +
                                    " switches");
    }
    SwitchAt(node, "SetUnicastTable")->SetUnicastTable(offsets, nOffsets, candidates, nCandidates);
}

void
Fabric::SetMulticastPorts(uint32_t group, uint32_t node, const uint32_t* ports, std::size_t nPorts)
{
    if (group >= FabricHeader::GROUP_FLAG)
    {
        throw std::invalid_argument("Fabric::SetMulticastPorts: group id too large");
    }
    SwitchAt(node, "SetMulticastPorts")->SetMulticastPorts(group, ports, nPorts);
}

void
Fabric::SetAggregationTrees(const uint32_t* rows, std::size_t n, uint32_t slotBytes)
{
    if (slotBytes == 0)
    {
        throw std::invalid_argument("Fabric::SetAggregationTrees: slots of 0 bytes");
    }
    std::map<uint32_t, std::set<uint32_t>> trees; // switch node -> its trees
    for (std::size_t i = 0; i < n; ++i)
    {
        const uint32_t* row = rows + 4 * i;
        SwitchAt(row[1], "SetAggregationTrees");
        if (row[3] == 0 || !trees[row[1]].insert(row[0]).second)
        {
            throw std::invalid_argument("Fabric::SetAggregationTrees: tree " +
                                        std::to_string(row[0]) + " on switch " +
                                        std::to_string(row[1]) + " has no child or is given twice");
        }
    }
    for (const auto& [node, onSwitch] : trees)
    {
        const uint64_t window = m_aggregationBuffer / onSwitch.size() / slotBytes;
        if (window < 2)
        {
            throw std::invalid_argument(
                "Fabric: switch " + std::to_string(node) + "'s aggregation buffer of " +
                std::to_string(m_aggregationBuffer) + " B holds " + std::to_string(window) +
                " slots of " + std::to_string(slotBytes) + " B for each of its " +
                std::to_string(onSwitch.size()) + " trees; it needs >= 2");
        }
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        const uint32_t* row = rows + 4 * i;
        const uint64_t window = m_aggregationBuffer / trees[row[1]].size() / slotBytes;
        SwitchAt(row[1], "SetAggregationTrees")
            ->SetAggregationTree(row[0],
                                 row[2],
                                 row[3],
                                 static_cast<uint32_t>(std::min<uint64_t>(window, UINT32_MAX)));
    }
}

void
Fabric::SetSumPayloads(bool sum)
{
    m_sumPayloads = sum;
    for (const Ptr<Switch>& sw : m_switches)
    {
        sw->SetSumPayloads(sum);
    }
}

bool
Fabric::GetSumPayloads() const
{
    return m_sumPayloads;
}

void
Fabric::ScheduleUnicastTable(int64_t atPs,
                             uint32_t node,
                             const uint32_t* offsets,
                             std::size_t nOffsets,
                             const uint32_t* candidates,
                             std::size_t nCandidates)
{
    if (nOffsets != m_switches.size() + 1 || atPs < Simulator::Now().GetPicoSeconds())
    {
        throw std::invalid_argument("Fabric::ScheduleUnicastTable: " + std::to_string(nOffsets) +
                                    " offsets for " + std::to_string(m_switches.size()) +
                                    " switches, or a time in the past");
    }
    SwitchAt(node, "ScheduleUnicastTable")
        ->CheckUnicastTable(offsets, nOffsets, candidates, nCandidates);
    ScheduleRouteUpdate(atPs,
                        {node,
                         -1,
                         std::vector<uint32_t>(offsets, offsets + nOffsets),
                         std::vector<uint32_t>(candidates, candidates + nCandidates)});
}

void
Fabric::ScheduleMulticastPorts(int64_t atPs,
                               uint32_t group,
                               uint32_t node,
                               const uint32_t* ports,
                               std::size_t nPorts)
{
    if (group >= FabricHeader::GROUP_FLAG || atPs < Simulator::Now().GetPicoSeconds())
    {
        throw std::invalid_argument("Fabric::ScheduleMulticastPorts: group id too large or a time "
                                    "in the past");
    }
    SwitchAt(node, "ScheduleMulticastPorts")->CheckMulticastPorts(group, ports, nPorts);
    ScheduleRouteUpdate(atPs, {node, group, {}, std::vector<uint32_t>(ports, ports + nPorts)});
}

void
Fabric::ScheduleRouteUpdate(int64_t atPs, RouteUpdate update)
{
    m_routeUpdates.push_back(std::move(update));
    mcsim::PostPlanned(PicoSeconds(atPs) - Simulator::Now(),
                       MakeEvent(&Fabric::ApplyRouteUpdate, this, m_routeUpdates.size() - 1));
}

void
Fabric::ApplyRouteUpdate(std::size_t i)
{
    const RouteUpdate& u = m_routeUpdates[i];
    Ptr<Switch> sw = m_switches[u.node - m_nHosts];
    if (u.group < 0)
    {
        sw->SetUnicastTable(u.offsets.data(), u.offsets.size(), u.ports.data(), u.ports.size());
    }
    else
    {
        sw->SetMulticastPorts(static_cast<uint32_t>(u.group), u.ports.data(), u.ports.size());
    }
    m_routeUpdatesApplied++;
    NS_LOG_INFO(
        "switch " << u.node << ": rerouted "
                  << (u.group < 0 ? std::string("unicast") : "group " + std::to_string(u.group)));
}

uint64_t
Fabric::GetRouteUpdates() const
{
    return m_routeUpdatesApplied;
}

void
Fabric::SetSwitchAttributes(const uint64_t* latencyPs,
                            const uint64_t* aggregationBps,
                            std::size_t n)
{
    constexpr uint64_t maxPs = 1000000000000; // 1 s, as a link's delay
    if (n != m_switches.size())
    {
        throw std::invalid_argument("Fabric::SetSwitchAttributes: " + std::to_string(n) +
                                    " entries for " + std::to_string(m_switches.size()) +
                                    " switches");
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        if (latencyPs[i] > maxPs)
        {
            throw std::invalid_argument(
                "Fabric::SetSwitchAttributes: " + std::to_string(latencyPs[i]) + " ps is over 1 s");
        }
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        m_switches[i]->SetAttribute("Latency",
                                    TimeValue(PicoSeconds(static_cast<int64_t>(latencyPs[i]))));
        m_switches[i]->SetAttribute("AggregationRate", DataRateValue(DataRate(aggregationBps[i])));
    }
}

} // namespace mcsim
} // namespace ns3
