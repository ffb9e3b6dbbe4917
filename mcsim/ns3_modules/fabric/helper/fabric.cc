// SPDX-License-Identifier: GPL-2.0-only
#include "fabric.h"

#include "fabric-header.h"
#include "mix.h"

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/mcsim/bulk-output.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimFabric");
NS_OBJECT_ENSURE_REGISTERED(Fabric);

TypeId
Fabric::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Fabric")
            .SetParent<Object>()
            .SetGroupName("Mcsim")
            .AddConstructor<Fabric>()
            .AddAttribute(
                "FlowControl",
                "Flow control of every port: Lossless (credits), Lossy (tail drop) or Pfc "
                "(Priority Flow Control: pause frames from each ingress queue).",
                EnumValue(FlowControl::LOSSLESS),
                MakeEnumAccessor<FlowControl>(&Fabric::m_mode),
                MakeFlowControlChecker())
            .AddAttribute("SwitchBufferBytes",
                          "Buffer per switch port in bytes: the output queue limit (Lossy) or the "
                          "ingress buffer its upstream holds credits for (Lossless).",
                          UintegerValue(Port::DEFAULT_BUFFER_BYTES),
                          MakeUintegerAccessor(&Fabric::m_switchBuffer),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("HostBufferBytes",
                          "Ingress buffer of a host's port in bytes (credits of its switch port).",
                          UintegerValue(Port::DEFAULT_BUFFER_BYTES),
                          MakeUintegerAccessor(&Fabric::m_hostBuffer),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("Forwarding",
                          "How every switch forwards: CutThrough (a packet may leave once its "
                          "routing header has arrived; InfiniBand switches) or StoreAndForward "
                          "(once its last bit has).",
                          EnumValue(Forwarding::CUT_THROUGH),
                          MakeEnumAccessor<Forwarding>(&Fabric::m_forwarding),
                          MakeEnumChecker(Forwarding::CUT_THROUGH,
                                          "CutThrough",
                                          Forwarding::STORE_AND_FORWARD,
                                          "StoreAndForward"))
            .AddAttribute("RoutingHeaderBytes",
                          "Wire bytes a cut-through switch needs before it forwards a packet, in "
                          "bytes: 8, the InfiniBand LRH (its destination LID).",
                          UintegerValue(8),
                          MakeUintegerAccessor(&Fabric::m_routingHeaderBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("AggregationBufferBytes",
                          "Every switch's in-network reduction buffer for partial sums, in bytes, "
                          "split evenly among the aggregation trees it is in.",
                          UintegerValue(DEFAULT_AGGREGATION_BUFFER_BYTES),
                          MakeUintegerAccessor(&Fabric::m_aggregationBuffer),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Seed",
                          "Seed of the random faults (the RngRun of the ports' loss streams, read "
                          "when they are assigned): the same seed loses the same packets.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&Fabric::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Ecn",
                          "ECN: every switch port RED-marks the ECN-capable packets its output "
                          "queue takes (EcnKminBytes, EcnKmaxBytes, EcnPmax), and the hosts' "
                          "ports make every packet they send ECN-capable (ECT(0)).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&Fabric::m_ecn),
                          MakeBooleanChecker())
            .AddAttribute("SumPayloads",
                          "Verify mode: every switch sums the 32-bit integers the contributions "
                          "of an in-network reduction carry (otherwise only their timing is "
                          "modelled); set before or after Build.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&Fabric::SetSumPayloads, &Fabric::GetSumPayloads),
                          MakeBooleanChecker());
    return tid;
}

Fabric::Fabric()
    : m_switchFactory(Switch::GetTypeId().GetName()),
      m_portFactory(Port::GetTypeId().GetName()),
      m_seed(1),
      m_ecn(false),
      m_sumPayloads(false),
      m_firstStream(0),
      m_nHosts(0)
{
}

Fabric::~Fabric() = default;

namespace
{
/** Throw unless `factory` makes a T (or a subclass). */
template <class T>
void
RequireFactoryOf(const ObjectFactory& factory, const char* what)
{
    const TypeId tid = factory.GetTypeId();
    if (tid != T::GetTypeId() && !tid.IsChildOf(T::GetTypeId()))
    {
        throw std::invalid_argument(std::string("Fabric::") + what + ": a factory of " +
                                    tid.GetName() + ", not of " + T::GetTypeId().GetName());
    }
}
} // namespace

void
Fabric::SetSwitchFactory(ObjectFactory factory)
{
    RequireFactoryOf<Switch>(factory, "SetSwitchFactory");
    m_switchFactory = std::move(factory);
}

void
Fabric::SetPortFactory(ObjectFactory factory)
{
    RequireFactoryOf<Port>(factory, "SetPortFactory");
    m_portFactory = std::move(factory);
}

void
Fabric::DoDispose()
{
    for (auto& s : m_sources)
    {
        s->Dispose();
    }
    for (auto& h : m_hosts)
    {
        h->Dispose();
    }
    for (auto& s : m_switches)
    {
        s->Dispose();
    }
    for (auto& p : m_ports)
    {
        p->Dispose();
    }
    m_sources.clear();
    m_hosts.clear();
    m_switches.clear();
    m_ports.clear();
    Object::DoDispose();
}

void
Fabric::Build(uint32_t nHosts,
              const uint32_t* switchPorts,
              std::size_t nSwitches,
              const uint32_t* links,
              const uint64_t* rateBps,
              const uint32_t* encoding,
              const int64_t* delayPs,
              std::size_t nLinks)
{
    if (!m_ports.empty())
    {
        throw std::logic_error("Fabric::Build called twice");
    }
    m_nHosts = nHosts;
    NumberPorts(switchPorts, nSwitches);
    for (std::size_t i = 0; i < nLinks; ++i)
    {
        WireLink(i, links + 4 * i, rateBps[i], encoding + 2 * i, delayPs[i]);
    }
    RequireEveryPortLinked();
    CreateNodes();
    ConnectPorts();
    std::vector<std::vector<Port*>> byNode(m_portBase.size() - 1);
    for (uint32_t g = 0; g < m_ports.size(); ++g)
    {
        byNode[NodeOf(g)].push_back(PeekPointer(m_ports[g]));
    }
    m_pfcWatchdog.SetPorts(std::move(byNode));
}

void
Fabric::NumberPorts(const uint32_t* switchPorts, std::size_t nSwitches)
{
    const std::size_t nNodes = m_nHosts + nSwitches;
    m_portBase.assign(nNodes + 1, 0);
    for (std::size_t n = 0; n < nNodes; ++n)
    {
        const uint32_t count = n < m_nHosts ? 1 : switchPorts[n - m_nHosts];
        if (count == 0)
        {
            throw std::invalid_argument("Fabric: switch " + std::to_string(n) + " has no ports");
        }
        m_portBase[n + 1] = m_portBase[n] + count;
    }
    m_ports.resize(m_portBase[nNodes]);
    m_peerIndex.assign(m_portBase[nNodes], 0);
}

uint32_t
Fabric::LinkEnd(uint32_t node, uint32_t port) const
{
    if (!HasPort(node, port))
    {
        throw std::invalid_argument("Fabric: link end (node " + std::to_string(node) + ", port " +
                                    std::to_string(port) + ") does not exist");
    }
    return m_portBase[node] + port;
}

bool
Fabric::HasPort(uint32_t node, uint32_t port) const
{
    return std::size_t{node} + 1 < m_portBase.size() &&
           port < m_portBase[node + 1] - m_portBase[node];
}

uint32_t
Fabric::NodeOf(uint32_t g) const
{
    // the last node whose first port is <= g (nodes have at least one port each)
    const auto it = std::upper_bound(m_portBase.begin(), m_portBase.end(), g);
    return static_cast<uint32_t>(it - m_portBase.begin()) - 1;
}

void
Fabric::WireLink(std::size_t i,
                 const uint32_t* link,
                 uint64_t rateBps,
                 const uint32_t* encoding,
                 int64_t delayPs)
{
    if (rateBps == 0 || delayPs < 0 || encoding[0] == 0 || encoding[0] > encoding[1])
    {
        throw std::invalid_argument("Fabric: link " + std::to_string(i) +
                                    " has a zero rate, a negative delay or a bad encoding");
    }
    const uint32_t ends[2] = {LinkEnd(link[0], link[1]), LinkEnd(link[2], link[3])};
    for (int side = 0; side < 2; ++side)
    {
        const uint32_t me = ends[side];
        if (m_ports[me])
        {
            throw std::invalid_argument("Fabric: port " + std::to_string(link[2 * side + 1]) +
                                        " of node " + std::to_string(link[2 * side]) +
                                        " is used by two links");
        }
        const uint32_t peerNode = link[2 * (1 - side)];
        Ptr<Port> port = m_portFactory.Create<Port>();
        port->SetAttribute("DataRate", DataRateValue(DataRate(rateBps)));
        port->SetAttribute("EncodingDataBits", UintegerValue(encoding[0]));
        port->SetAttribute("EncodingLineBits", UintegerValue(encoding[1]));
        port->SetAttribute("Delay", TimeValue(PicoSeconds(delayPs)));
        port->SetFlowControl(m_mode);
        const bool fromHost = link[2 * side] < m_nHosts;
        // a host never queues more than its sources' one packet each: no tail drop there
        port->SetBufferBytes(fromHost ? std::numeric_limits<uint64_t>::max() / 2 : m_switchBuffer);
        port->SetCreditBytes(peerNode < m_nHosts ? m_hostBuffer : m_switchBuffer);
        port->SetLocation(link[2 * side], link[2 * side + 1]);
        // ECN: switches' ports mark, hosts' ports make what they send ECN-capable; each port's
        // draws keyed by the seed and its place
        port->SetEcn(m_ecn && !fromHost,
                     m_ecn && fromHost,
                     Mix(m_seed ^ Mix((uint64_t{link[2 * side]} << 32) | link[2 * side + 1])));
        port->SetIntStore(&m_intStore, !fromHost); // switches add INT hops, hosts read them
        const bool toSwitch = peerNode >= m_nHosts;
        port->SetCutThroughBytes(
            toSwitch && m_forwarding == Forwarding::CUT_THROUGH ? m_routingHeaderBytes : 0);
        m_ports[me] = port;
    }
    m_peerIndex[ends[0]] = ends[1];
    m_peerIndex[ends[1]] = ends[0];
}

void
Fabric::RequireEveryPortLinked() const
{
    for (uint32_t n = 0; n + 1 < m_portBase.size(); ++n)
    {
        for (uint32_t g = m_portBase[n]; g < m_portBase[n + 1]; ++g)
        {
            if (!m_ports[g])
            {
                throw std::invalid_argument("Fabric: port " + std::to_string(g - m_portBase[n]) +
                                            " of node " + std::to_string(n) + " has no link");
            }
        }
    }
}

void
Fabric::CreateNodes()
{
    // a port's upstream is the port at the far end of its link: it sends what arrives here
    std::vector<Port*> upstream(m_ports.size());
    for (uint32_t g = 0; g < m_ports.size(); ++g)
    {
        upstream[g] = PeekPointer(m_ports[m_peerIndex[g]]);
    }
    // where each host's one link ends: the switches route their own hosts by it
    auto attached = std::make_shared<std::vector<HostAttachment>>(m_nHosts);
    for (uint32_t h = 0; h < m_nHosts; ++h)
    {
        const uint32_t peer = m_peerIndex[m_portBase[h]];
        const uint32_t node = NodeOf(peer);
        (*attached)[h] = node < m_nHosts ? HostAttachment{UINT32_MAX, 0}
                                         : HostAttachment{node - m_nHosts, peer - m_portBase[node]};
    }
    // a switch tells the upstream port when a packet leaves (credits, or a PFC ingress queue)
    const bool lossless = m_mode != FlowControl::LOSSY;
    for (uint32_t n = 0; n + 1 < m_portBase.size(); ++n)
    {
        if (n < m_nHosts)
        {
            Ptr<Host> host = CreateObject<Host>();
            host->Setup(n, m_ports[m_portBase[n]], upstream[m_portBase[n]]);
            m_hosts.push_back(host);
        }
        else
        {
            Ptr<Switch> sw = m_switchFactory.Create<Switch>();
            std::vector<Ptr<Port>> ports(m_ports.begin() + m_portBase[n],
                                         m_ports.begin() + m_portBase[n + 1]);
            std::vector<Port*> up(upstream.begin() + m_portBase[n],
                                  upstream.begin() + m_portBase[n + 1]);
            sw->Setup(n, std::move(ports), std::move(up), lossless, attached);
            sw->SetSumPayloads(m_sumPayloads);
            m_switches.push_back(sw);
        }
    }
}

void
Fabric::ConnectPorts()
{
    for (uint32_t g = 0; g < m_ports.size(); ++g)
    {
        const uint32_t peer = m_peerIndex[g];
        const uint32_t peerNode = NodeOf(peer);
        PacketReceiver* receiver =
            peerNode < m_nHosts ? static_cast<PacketReceiver*>(PeekPointer(m_hosts[peerNode]))
                                : PeekPointer(m_switches[peerNode - m_nHosts]);
        m_ports[g]->SetReverse(PeekPointer(m_ports[peer]));
        m_ports[g]->GetPfc().SetWatchdog(m_mode == FlowControl::PFC ? &m_pfcWatchdog : nullptr);
        m_ports[g]->Connect(receiver, peer - m_portBase[peerNode]);
    }
}

Ptr<Switch>
Fabric::SwitchAt(uint32_t node, const char* what) const
{
    if (node < m_nHosts || node >= m_nHosts + m_switches.size())
    {
        throw std::invalid_argument(std::string("Fabric::") + what + ": node " +
                                    std::to_string(node) + " is not a switch");
    }
    return m_switches[node - m_nHosts];
}

uint32_t
Fabric::PortAt(uint32_t node, uint32_t port, const char* what) const
{
    if (!HasPort(node, port))
    {
        throw std::invalid_argument(std::string("Fabric::") + what + ": node " +
                                    std::to_string(node) + " has no port " + std::to_string(port));
    }
    return m_portBase[node] + port;
}

void
Fabric::AddSources(const uint32_t* host,
                   const uint32_t* destination,
                   const uint64_t* bytes,
                   const uint32_t* packetBytes,
                   const uint32_t* flow,
                   const int64_t* startPs,
                   std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
    {
        const bool group = (destination[i] & FabricHeader::GROUP_FLAG) != 0;
        if (host[i] >= m_nHosts || (!group && destination[i] >= m_nHosts) || bytes[i] == 0 ||
            packetBytes[i] == 0 || startPs[i] < 0)
        {
            throw std::invalid_argument("Fabric::AddSources: source " + std::to_string(i) +
                                        " has a bad host, destination, size or start");
        }
        Ptr<TrafficSource> s = CreateObject<TrafficSource>();
        s->SetAttribute("TotalBytes", UintegerValue(bytes[i]));
        s->SetAttribute("PacketBytes", UintegerValue(packetBytes[i]));
        s->Setup(m_hosts[host[i]], destination[i], flow[i]);
        s->Start(PicoSeconds(startPs[i]));
        m_sources.push_back(s);
    }
}

Ptr<Host>
Fabric::GetHost(uint32_t i) const
{
    if (i >= m_hosts.size())
    {
        throw std::out_of_range("Fabric::GetHost: no host " + std::to_string(i) + " of " +
                                std::to_string(m_hosts.size()));
    }
    return m_hosts[i];
}

Ptr<Port>
Fabric::GetPort(uint32_t g) const
{
    if (g >= m_ports.size())
    {
        throw std::out_of_range("Fabric::GetPort: no port " + std::to_string(g) + " of " +
                                std::to_string(m_ports.size()));
    }
    return m_ports[g];
}

Ptr<Port>
Fabric::GetPeerPort(uint32_t g) const
{
    GetPort(g); // throws if there is no such port
    return m_ports[m_peerIndex[g]];
}

uint32_t
Fabric::GetNHosts() const
{
    return m_nHosts;
}

uint32_t
Fabric::GetNNodes() const
{
    return static_cast<uint32_t>(m_portBase.size()) - 1;
}

uint32_t
Fabric::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

uint32_t
Fabric::GetPortIndex(uint32_t node, uint32_t port) const
{
    if (node + 1 >= m_portBase.size() || port >= m_portBase[node + 1] - m_portBase[node])
    {
        throw std::out_of_range("Fabric::GetPortIndex: no port " + std::to_string(port) +
                                " on node " + std::to_string(node));
    }
    return m_portBase[node] + port;
}

void
Fabric::SetLossProbabilities(const double* probability, std::size_t n)
{
    if (n != m_ports.size())
    {
        throw std::invalid_argument("Fabric::SetLossProbabilities: " + std::to_string(n) +
                                    " probabilities for " + std::to_string(m_ports.size()) +
                                    " ports");
    }
    for (std::size_t g = 0; g < n; ++g)
    {
        if (!(probability[g] >= 0.0 && probability[g] < 1.0))
        {
            throw std::invalid_argument("Fabric::SetLossProbabilities: port " + std::to_string(g) +
                                        " has p=" + std::to_string(probability[g]) +
                                        ", must be >= 0 and < 1");
        }
    }
    for (std::size_t g = 0; g < n; ++g)
    {
        m_ports[g]->SetLossProbability(probability[g]);
    }
    AssignStreams(m_firstStream);
}

void
Fabric::SetLossyHosts(const uint32_t* hosts, std::size_t n)
{
    if (n != 0 && m_mode != FlowControl::PFC)
    {
        throw std::invalid_argument("Fabric::SetLossyHosts: a lossy traffic class needs the "
                                    "FlowControl PFC (its other classes are lossless)");
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        if (hosts[i] >= m_nHosts)
        {
            throw std::invalid_argument("Fabric::SetLossyHosts: node " + std::to_string(hosts[i]) +
                                        " is not a host (0.." + std::to_string(m_nHosts) + ")");
        }
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        for (uint32_t g = m_portBase[hosts[i]]; g < m_portBase[hosts[i] + 1]; ++g)
        {
            m_ports[g]->SetLossyClass(true);
        }
    }
}

int64_t
Fabric::AssignStreams(int64_t stream)
{
    if (stream < 0)
    {
        throw std::invalid_argument("Fabric::AssignStreams: stream " + std::to_string(stream) +
                                    " must be >= 0");
    }
    m_firstStream = stream;
    // a stream's generator is seeded when it is assigned: set the seed and run for just that
    const uint32_t oldSeed = RngSeedManager::GetSeed();
    const uint64_t oldRun = RngSeedManager::GetRun();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(m_seed);
    for (std::size_t g = 0; g < m_ports.size(); ++g)
    {
        m_ports[g]->AssignStreams(stream + static_cast<int64_t>(g));
    }
    RngSeedManager::SetSeed(oldSeed);
    RngSeedManager::SetRun(oldRun);
    return static_cast<int64_t>(m_ports.size());
}

void
Fabric::SetChosenDrops(uint32_t node, uint32_t port, const uint64_t* indexes, std::size_t n)
{
    m_ports[PortAt(node, port, "SetChosenDrops")]->SetChosenDrops(indexes, n);
}

void
Fabric::SetLinkDown(uint32_t node, uint32_t port, const int64_t* downUpPs, std::size_t n)
{
    const uint32_t g = PortAt(node, port, "SetLinkDown");
    m_ports[g]->SetDownIntervals(downUpPs, n); // throws before anything changes on a bad row
    m_ports[m_peerIndex[g]]->SetDownIntervals(downUpPs, n);
}

uint32_t
Fabric::GetNSources() const
{
    return static_cast<uint32_t>(m_sources.size());
}

uint64_t
Fabric::GetUnroutablePackets() const
{
    uint64_t total = 0;
    for (const auto& s : m_switches)
    {
        total += s->GetCounters().unroutable;
    }
    return total;
}

} // namespace mcsim
} // namespace ns3
