// SPDX-License-Identifier: GPL-2.0-only
#include "switch.h"

#include "fabric-header.h"
#include "mix.h"

#include "ns3/data-rate.h"
#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimSwitch");
NS_OBJECT_ENSURE_REGISTERED(Switch);

TypeId
Switch::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::Switch")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<Switch>()
                            .AddAttribute("Latency",
                                          "Forwarding latency from when the switch has a packet "
                                          "(see Switch) to its earliest start on its output "
                                          "port; 170 ns: SX6036 (fabric/doc/fabric.md).",
                                          TimeValue(NanoSeconds(170)),
                                          MakeTimeAccessor(&Switch::m_latency),
                                          MakeTimeChecker(Time(0)))
                            .AddAttribute("EcmpSeed",
                                          "Seed of the ECMP flow hash.",
                                          UintegerValue(1),
                                          MakeUintegerAccessor(&Switch::m_ecmpSeed),
                                          MakeUintegerChecker<uint32_t>())
                            .AddAttribute("AggregationRate",
                                          "Throughput of the in-network reduction's ALU, in "
                                          "contribution bytes (whole packets) per second; 0 "
                                          "(the default): the sum of the switch's port data "
                                          "rates, i.e. it keeps up with every port at line rate.",
                                          DataRateValue(DataRate(0)),
                                          MakeDataRateAccessor(&Switch::m_aluRate),
                                          MakeDataRateChecker());
    return tid;
}

Switch::Switch()
    : m_id(0),
      m_index(0),
      m_lossless(true),
      m_sumPayloads(false)
{
}

Switch::~Switch() = default;

void
Switch::DoDispose()
{
    m_aggregation.reset();
    m_ports.clear();
    m_upstream.clear();
    Object::DoDispose();
}

std::string
Switch::Where() const
{
    return "Switch " + std::to_string(m_id);
}

void
Switch::Setup(uint32_t id,
              std::vector<Ptr<Port>> ports,
              std::vector<Port*> upstream,
              bool lossless,
              std::shared_ptr<const std::vector<HostAttachment>> hosts)
{
    if (!hosts || id < hosts->size())
    {
        throw std::invalid_argument("Switch " + std::to_string(id) +
                                    ": a switch's node id comes after every host");
    }
    if (ports.size() != upstream.size())
    {
        throw std::invalid_argument(Where() + ": ports and upstream ports differ in number");
    }
    m_id = id;
    m_index = id - static_cast<uint32_t>(hosts->size());
    m_hosts = std::move(hosts);
    m_ports = std::move(ports);
    m_upstream = std::move(upstream);
    m_lossless = lossless;
}

void
Switch::SetUnicastTable(const uint32_t* offsets,
                        std::size_t nOffsets,
                        const uint32_t* candidates,
                        std::size_t nCandidates)
{
    CheckUnicastTable(offsets, nOffsets, candidates, nCandidates);
    m_ucOffsets.assign(offsets, offsets + nOffsets);
    m_ucPorts.assign(candidates, candidates + nCandidates);
}

void
Switch::CheckUnicastTable(const uint32_t* offsets,
                          std::size_t nOffsets,
                          const uint32_t* candidates,
                          std::size_t nCandidates) const
{
    if (nOffsets < 2 || offsets[0] != 0 || offsets[nOffsets - 1] != nCandidates)
    {
        throw std::invalid_argument(Where() + ": unicast offsets must start at 0 and end at " +
                                    std::to_string(nCandidates));
    }
    for (std::size_t d = 0; d + 1 < nOffsets; ++d)
    {
        if (offsets[d + 1] < offsets[d])
        {
            throw std::invalid_argument(Where() + ": unicast offsets decrease at switch " +
                                        std::to_string(d));
        }
    }
    for (std::size_t i = 0; i < nCandidates; ++i)
    {
        if (candidates[i] >= m_ports.size())
        {
            throw std::invalid_argument(Where() + ": route to port " +
                                        std::to_string(candidates[i]) + " of " +
                                        std::to_string(m_ports.size()));
        }
    }
}

void
Switch::SetMulticastPorts(uint32_t group, const uint32_t* ports, std::size_t nPorts)
{
    CheckMulticastPorts(group, ports, nPorts);
    if (group >= m_groupPorts.size())
    {
        m_groupPorts.resize(group + 1);
    }
    m_groupPorts[group].assign(ports, ports + nPorts);
}

void
Switch::CheckMulticastPorts(uint32_t group, const uint32_t* ports, std::size_t nPorts) const
{
    for (std::size_t i = 0; i < nPorts; ++i)
    {
        if (ports[i] >= m_ports.size())
        {
            throw std::invalid_argument(Where() + ": group " + std::to_string(group) +
                                        " uses port " + std::to_string(ports[i]) + " of " +
                                        std::to_string(m_ports.size()));
        }
    }
}

void
Switch::Receive(const Ptr<Packet>& packet, const FabricHeader::Fields& h, uint32_t inPort)
{
    const Time now = mcsim::Now();
    const uint32_t size = packet->GetSize();
    Port* in = m_upstream[inPort];
    const Time lastBit = now + in->GetHandoverLead(size); // now, unless it cuts through
    const Time earliest = now + m_latency;
    const Time tail = lastBit + m_latency;
    Port* upstream = IngressHolder(inPort, h);
    if (h.IsAggregate())
    {
        if (m_aggregation != nullptr && m_aggregation->HasTree(h.GetTree()))
        {
            m_aggregation->Receive(packet, h, inPort, lastBit);
            return;
        }
        m_counters.unroutable++;
        NS_LOG_INFO("switch " << m_id << ": not in aggregation tree " << h.GetTree()
                              << ", dropped");
        ReleaseIngress(upstream, packet, lastBit);
        return;
    }
    if (!h.IsGroup())
    {
        uint32_t port = 0;
        if (!RouteUnicast(h, port)) // an unknown host, or no route left to it
        {
            m_counters.unroutable++;
            NS_LOG_INFO("switch " << m_id << ": no route to host " << h.dst << ", dropped");
            ReleaseIngress(upstream, packet, lastBit);
            return;
        }
        Port* out = PeekPointer(m_ports[port]);
        out->Send(packet,
                  h,
                  Start(out, size, earliest, tail),
                  CreditReturn{upstream, nullptr},
                  nullptr);
        return;
    }
    Replicate(packet, h, inPort, upstream, earliest, tail, lastBit);
}

void
Switch::Replicate(const Ptr<Packet>& packet,
                  const FabricHeader::Fields& h,
                  uint32_t inPort,
                  Port* upstream,
                  Time earliest,
                  Time tail,
                  Time lastBit)
{
    const uint32_t size = packet->GetSize();
    const uint32_t g = h.GetGroup();
    const std::vector<uint32_t>* tree = g < m_groupPorts.size() ? &m_groupPorts[g] : nullptr;
    uint32_t copies = 0;
    if (tree != nullptr)
    {
        for (uint32_t p : *tree)
        {
            copies += p != inPort;
        }
    }
    if (copies == 0)
    {
        m_counters.unroutable += tree == nullptr;
        NS_LOG_INFO("switch " << m_id << ": group " << g << " has no port here but the ingress, "
                              << (tree == nullptr ? "unroutable" : "not forwarded"));
        ReleaseIngress(upstream, packet, lastBit);
        return;
    }
    CreditReturn credit;
    if (upstream != nullptr)
    {
        credit.shared = new SharedCredit{upstream,
                                         upstream->GetWireBytes(size),
                                         copies,
                                         Time(0),
                                         nullptr,
                                         Time(0)};
    }
    for (uint32_t p : *tree)
    {
        if (p != inPort)
        {
            // every copy is the same read-only packet (see PacketReceiver::Receive)
            Port* out = PeekPointer(m_ports[p]);
            out->Send(packet, h, Start(out, size, earliest, tail), credit, nullptr);
        }
    }
}

bool
Switch::RouteUnicast(const FabricHeader::Fields& h, uint32_t& port) const
{
    const uint32_t d = h.dst;
    if (d >= m_hosts->size())
    {
        return false;
    }
    const HostAttachment& at = (*m_hosts)[d];
    if (at.leaf == m_index)
    {
        port = at.port;
        return true;
    }
    if (at.leaf + 1 >= m_ucOffsets.size())
    {
        return false;
    }
    const uint32_t first = m_ucOffsets[at.leaf];
    const uint32_t n = m_ucOffsets[at.leaf + 1] - first;
    if (n > 1)
    {
        const uint64_t key = (static_cast<uint64_t>(h.src) << 32) ^ d ^
                             (static_cast<uint64_t>(h.flow) << 16) ^ m_ecmpSeed;
        port = m_ucPorts[first + static_cast<uint32_t>(Mix(key) % n)];
    }
    else if (n == 1)
    {
        port = m_ucPorts[first];
    }
    return n != 0;
}

void
Switch::SetAggregationTree(uint32_t tree, uint32_t parent, uint32_t children, uint32_t window)
{
    if (parent != AggregationUnit::ROOT && parent >= m_ports.size())
    {
        throw std::invalid_argument(Where() + ": aggregation tree " + std::to_string(tree) +
                                    " has parent port " + std::to_string(parent) + " of " +
                                    std::to_string(m_ports.size()));
    }
    if (m_aggregation == nullptr)
    {
        uint64_t rate = m_aluRate.GetBitRate();
        if (rate == 0)
        {
            for (const Ptr<Port>& port : m_ports)
            {
                rate += port->GetDataRateBps();
            }
        }
        m_aggregation =
            std::make_unique<AggregationUnit>(static_cast<AggregationOwner*>(this), rate);
        m_aggregation->SetSumPayloads(m_sumPayloads);
    }
    m_aggregation->SetTree(tree, parent, children, window);
}

void
Switch::SetSumPayloads(bool sum)
{
    m_sumPayloads = sum;
    if (m_aggregation != nullptr)
    {
        m_aggregation->SetSumPayloads(sum);
    }
}

AggregationUnit::Counters
Switch::GetAggregationCounters() const
{
    return m_aggregation != nullptr ? m_aggregation->GetCounters() : AggregationUnit::Counters();
}

void
Switch::Consumed(uint32_t inPort,
                 const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 Time at)
{
    ReleaseIngress(IngressHolder(inPort, fields), packet, at);
}

void
Switch::Emit(const Ptr<Packet>& packet,
             const FabricHeader::Fields& fields,
             uint32_t parent,
             Time ready)
{
    FabricHeader::Fields f = fields;
    f.src = m_id; // a sum comes from the switch that made it
    const Time start = ready + m_latency;
    if (parent != AggregationUnit::ROOT)
    {
        PeekPointer(m_ports[parent])->Send(packet, f, start, CreditReturn{}, nullptr);
        return;
    }
    f.dst = fields.flow; // the root sends the sum where the reduction goes
    f.flow = fields.GetTree();
    if (f.IsGroup())
    {
        const uint32_t g = f.GetGroup();
        if (g < m_groupPorts.size() && !m_groupPorts[g].empty())
        {
            for (uint32_t p : m_groupPorts[g])
            {
                PeekPointer(m_ports[p])->Send(packet, f, start, CreditReturn{}, nullptr);
            }
            return;
        }
    }
    else
    {
        uint32_t port = 0;
        if (RouteUnicast(f, port))
        {
            PeekPointer(m_ports[port])->Send(packet, f, start, CreditReturn{}, nullptr);
            return;
        }
    }
    m_counters.unroutable++;
    NS_LOG_INFO("switch " << m_id << ": no route for the sum of aggregation tree "
                          << fields.GetTree() << ", dropped");
}

Port*
Switch::IngressHolder(uint32_t inPort, const FabricHeader::Fields& fields) const
{
    // a lossy fabric holds nothing; on PFC the lossy class holds no ingress
    return m_lossless && !fields.IsLossy() ? m_upstream[inPort] : nullptr;
}

void
Switch::ReleaseIngress(Port* upstream, const Ptr<Packet>& packet, Time lastBit)
{
    if (upstream != nullptr)
    {
        upstream->ReturnCredit(lastBit + upstream->GetDelay(),
                               upstream->GetWireBytes(packet->GetSize()));
    }
}

uint32_t
Switch::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

Ptr<Port>
Switch::GetPort(uint32_t i) const
{
    return m_ports.at(i);
}

const Switch::Counters&
Switch::GetCounters() const
{
    return m_counters;
}

} // namespace mcsim
} // namespace ns3
