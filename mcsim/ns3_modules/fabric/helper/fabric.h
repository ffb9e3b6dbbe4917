// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "host.h"
#include "pfc-watchdog.h"
#include "port.h"
#include "switch.h"
#include "traffic-source.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Builds and owns a whole fabric from flat arrays, and reads its counters in bulk.
 *
 * Nodes 0..nHosts-1 are hosts (one port each), then switches. Ports are numbered per node; the
 * global port index runs node by node, port by port (GetPortIndex). Python hands over numpy
 * arrays (no copy) and reads numpy arrays back: no per-packet or per-object Python calls.
 */
class Fabric : public Object
{
  public:
    static TypeId GetTypeId();
    Fabric();
    ~Fabric() override;

    /**
     * Create the nodes and links.
     * @param nHosts hosts (one port each)
     * @param switchPorts ports of each switch, nSwitches entries
     * @param links nLinks rows of (nodeA, portA, nodeB, portB)
     * @param rateBps signalling rate per link
     * @param encoding nLinks rows of (data bits, line bits)
     * @param delayPs propagation delay per link
     * @throws std::invalid_argument on a port used twice or left unconnected, a host with other
     * than one port, or a bad value
     */
    void Build(uint32_t nHosts,
               const uint32_t* switchPorts,
               std::size_t nSwitches,
               const uint32_t* links,
               const uint64_t* rateBps,
               const uint32_t* encoding,
               const int64_t* delayPs,
               std::size_t nLinks);

    /**
     * The factories Build creates every switch and port from (the attributes all of them share;
     * by default each type's own defaults). Build then sets what depends on a port's place: its
     * link's rate, encoding and delay, its flow control, buffer, credits and cut-through bytes.
     * @throws std::invalid_argument for a factory of another type
     */
    void SetSwitchFactory(ObjectFactory factory);
    void SetPortFactory(ObjectFactory factory); //!< as SetSwitchFactory

    /** Switch `node`'s unicast table (see Switch::SetUnicastTable). */
    void SetUnicastTable(uint32_t node,
                         const uint32_t* offsets,
                         std::size_t nOffsets,
                         const uint32_t* candidates,
                         std::size_t nCandidates);
    /** Switch `node`'s ports in group's multicast tree. */
    void SetMulticastPorts(uint32_t group,
                           uint32_t node,
                           const uint32_t* ports,
                           std::size_t nPorts);
    /**
     * A subnet manager's reprogramming: at atPs, SetUnicastTable(node, ...) with this table
     * (checked and copied now, so a bad table throws here and not during the run).
     */
    void ScheduleUnicastTable(int64_t atPs,
                              uint32_t node,
                              const uint32_t* offsets,
                              std::size_t nOffsets,
                              const uint32_t* candidates,
                              std::size_t nCandidates);
    /** At atPs, SetMulticastPorts(group, node, ...) (checked and copied now). */
    void ScheduleMulticastPorts(int64_t atPs,
                                uint32_t group,
                                uint32_t node,
                                const uint32_t* ports,
                                std::size_t nPorts);
    /**
     * In-network reduction: n rows of (tree, switch node, parent port or
     * AggregationUnit::ROOT, children). Each switch splits AggregationBufferBytes evenly among
     * its trees, in slots of slotBytes (a contribution's largest packet).
     * @throws std::invalid_argument for a node that is not a switch, a bad parent port, no child,
     * a tree given twice on one switch, or a buffer that holds fewer than 2 slots per tree
     */
    void SetAggregationTrees(const uint32_t* rows, std::size_t n, uint32_t slotBytes);
    /** "SumPayloads" (verify mode): switches sum the 32-bit integers contributions carry. */
    void SetSumPayloads(bool sum);
    bool GetSumPayloads() const;
    /** out[switch * AggregationUnit::Counters::COUNT + field], switches in node order. */
    void GetAggregationCounters(uint64_t* out, std::size_t n) const;
    /** Scheduled route changes applied so far (a switch's table or tree ports each). */
    uint64_t GetRouteUpdates() const;

    /**
     * Add n raw traffic sources: host[i] sends bytes[i] to destination[i] (a host, or a group |
     * FabricHeader::GROUP_FLAG) in packets of packetBytes[i] payload, flow flow[i], from
     * startPs[i].
     */
    void AddSources(const uint32_t* host,
                    const uint32_t* destination,
                    const uint64_t* bytes,
                    const uint32_t* packetBytes,
                    const uint32_t* flow,
                    const int64_t* startPs,
                    std::size_t n);

    /** Host i (0 <= i < nHosts), e.g. to attach a NIC; throws std::out_of_range. */
    Ptr<Host> GetHost(uint32_t i) const;
    /** Global port g (0 <= g < GetNPorts()); throws std::out_of_range. */
    Ptr<Port> GetPort(uint32_t g) const;
    /** The port at the far end of global port g's link; throws std::out_of_range. */
    Ptr<Port> GetPeerPort(uint32_t g) const;
    uint32_t GetNHosts() const;
    uint32_t GetNNodes() const;
    uint32_t GetNPorts() const;                                //!< all ports, hosts' included
    uint32_t GetPortIndex(uint32_t node, uint32_t port) const; //!< global index
    uint32_t GetNSources() const;

    // Faults (after Build, before the run); see Port for what a lost packet does.
    /**
     * Random loss of every port (each direction of each link): probability[g] for global port g,
     * 0 <= p < 1, n == GetNPorts(). Ports with p > 0 get a uniform random variable on stream
     * firstStream + g (see AssignStreams) under RngRun = Seed.
     * @throws std::invalid_argument for a wrong n or a p outside [0, 1) (nothing is changed)
     */
    void SetLossProbabilities(const double* probability, std::size_t n);
    /**
     * The n hosts send every packet in the lossy traffic class (fabric.md, "Traffic classes"):
     * no pause holds it, its packets hold no PFC ingress, a switch's port tail-drops them beyond
     * its BufferBytes of them. Setup, after Build.
     * @throws std::invalid_argument unless the FlowControl is PFC and every id is a host's
     */
    void SetLossyHosts(const uint32_t* hosts, std::size_t n);
    /**
     * After Build, before the aggregation trees: switch i (node nHosts + i) forwards with
     * latencyPs[i] ps (its "Latency") and sums at aggregationBps[i] bit/s (its "AggregationRate";
     * 0: its ports' sum). n must be the number of switches; each latency at most 1 s. A part of a
     * node that is no switch chip (a GPU's hub, a NIC's port) forwards in 0; an NVSwitch sums at
     * its own rate (NVLS).
     * @throws std::invalid_argument for another n or a latency over 1 s
     */
    void SetSwitchAttributes(const uint64_t* latencyPs,
                             const uint64_t* aggregationBps,
                             std::size_t n);
    /**
     * Give port g's loss random variable stream `stream + g`, drawn with RngSeed 1 and RngRun
     * Seed whatever the global RngSeedManager says (it is left as it was): the losses depend only
     * on Seed, the stream numbers and the traffic. Ports given a loss later use the same base.
     * @return the streams this fabric reserves: GetNPorts()
     */
    int64_t AssignStreams(int64_t stream);
    /** Lose these packets of (node, port): 0-based indexes in commit order (see Port). */
    void SetChosenDrops(uint32_t node, uint32_t port, const uint64_t* indexes, std::size_t n);
    /**
     * The link at (node, port) is down, both directions, during the n [down, up) ps intervals in
     * downUpPs (rows of two; Port::SetDownIntervals); replaces earlier intervals of this link.
     */
    void SetLinkDown(uint32_t node, uint32_t port, const int64_t* downUpPs, std::size_t n);

    /** out[port * Port::NUM_COUNTERS + field] = Port::Counters, for every global port. */
    /** Every port's PfcCounters (n = GetNPorts() * PfcCounters::COUNT), port by port. */
    void GetPfcCounters(uint64_t* out, std::size_t n) const;
    /** The PFC deadlock found (it stopped the run): its ports as (node, port) pairs in out (n =
     * 2 * GetPfcDeadlockLength()), each waiting on the next. */
    void GetPfcDeadlock(uint32_t* out, std::size_t n) const;
    uint32_t GetPfcDeadlockLength() const; //!< ports in the PFC deadlock found (0: none)
    /** Every port's EcnCounters (n = GetNPorts() * EcnCounters::COUNT), port by port. */
    void GetEcnCounters(uint64_t* out, std::size_t n) const;
    /** Every port's IntCounters (n = GetNPorts() * IntCounters::COUNT), port by port. */
    void GetIntCounters(uint64_t* out, std::size_t n) const;
    /** The fabric's INT records (fabric.md, "INT"): its NICs take handles from it. */
    IntStore* GetIntStore();
    void GetPortCounters(uint64_t* out, std::size_t n) const;
    /** out[host * Host::NUM_COUNTERS + field] = Host::Counters. */
    void GetHostCounters(uint64_t* out, std::size_t n) const;
    /** out[source * 3 + field] = sent packets, sent payload bytes, last departure in ps. */
    void GetSourceCounters(uint64_t* out, std::size_t n) const;
    /** Packets switches could not route (unknown destination or group), summed. */
    uint64_t GetUnroutablePackets() const;

  protected:
    void DoDispose() override;

  private:
    // Build's steps, in order
    /** Number the ports node by node (m_portBase); size m_ports and m_peerIndex. */
    void NumberPorts(const uint32_t* switchPorts, std::size_t nSwitches);
    /** Create the two ports of link i (row link: nodeA, portA, nodeB, portB) and pair them. */
    void WireLink(std::size_t i,
                  const uint32_t* link,
                  uint64_t rateBps,
                  const uint32_t* encoding,
                  int64_t delayPs);
    /** Throw for a port no link uses. */
    void RequireEveryPortLinked() const;
    /** Create the hosts and the switches on their ports (each port's upstream: its peer port). */
    void CreateNodes();
    /** Connect every port to the node at the far end of its link. */
    void ConnectPorts();

    /** Global index of a link end; throws std::invalid_argument if it does not exist. */
    uint32_t LinkEnd(uint32_t node, uint32_t port) const;
    /** Node `node` exists and has port `port` (after NumberPorts). */
    bool HasPort(uint32_t node, uint32_t port) const;
    /** The node of global port g. */
    uint32_t NodeOf(uint32_t g) const;
    Ptr<Switch> SwitchAt(uint32_t node, const char* what) const;

    /** @brief A scheduled route change: a unicast table (group < 0) or a group's tree ports. */
    struct RouteUpdate
    {
        uint32_t node;
        int64_t group;
        std::vector<uint32_t> offsets; //!< unicast only
        std::vector<uint32_t> ports;   //!< the candidates (unicast) or the tree ports
    };

    void ScheduleRouteUpdate(int64_t atPs, RouteUpdate update); //!< keep it, apply it at atPs
    void ApplyRouteUpdate(std::size_t i);
    /** Global index of (node, port); throws std::invalid_argument naming `what`. */
    uint32_t PortAt(uint32_t node, uint32_t port, const char* what) const;

    static constexpr uint64_t DEFAULT_AGGREGATION_BUFFER_BYTES = 4 * 1024 * 1024;

    ObjectFactory m_switchFactory; //!< every switch's (SetSwitchFactory)
    ObjectFactory m_portFactory;   //!< every port's (SetPortFactory)
    FlowControl m_mode;            //!< "FlowControl"
    uint64_t m_switchBuffer;       //!< "SwitchBufferBytes"
    uint64_t m_hostBuffer;         //!< "HostBufferBytes"
    uint64_t m_aggregationBuffer;  //!< "AggregationBufferBytes"
    Forwarding m_forwarding;       //!< "Forwarding"
    uint32_t m_routingHeaderBytes; //!< "RoutingHeaderBytes"
    uint64_t m_seed;               //!< "Seed": RngRun of the fault streams
    bool m_ecn;                    //!< "Ecn"
    bool m_sumPayloads;            //!< "SumPayloads"
    int64_t m_firstStream;         //!< stream of global port 0's loss random variable

    uint32_t m_nHosts;
    std::vector<Ptr<Host>> m_hosts;
    std::vector<Ptr<Switch>> m_switches;
    PfcWatchdog m_pfcWatchdog;         //!< PFC: detects a deadlock
    IntStore m_intStore;               //!< INT records of the packets in flight
    std::vector<Ptr<Port>> m_ports;    //!< global port index -> port
    std::vector<uint32_t> m_portBase;  //!< node -> first global port index (+1 sentinel)
    std::vector<uint32_t> m_peerIndex; //!< global port -> global port at the link's far end
    std::vector<Ptr<TrafficSource>> m_sources;
    std::vector<RouteUpdate> m_routeUpdates;
    uint64_t m_routeUpdatesApplied = 0;
};

} // namespace mcsim
} // namespace ns3
