// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "aggregation-unit.h"
#include "packet-receiver.h"
#include "port.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** @brief Where host d's one link ends: its leaf switch (index among the switches) and the port. */
struct HostAttachment
{
    uint32_t leaf; //!< switch index (node id less the host count); UINT32_MAX: another host
    uint32_t port; //!< the leaf's port toward the host
};

/** @brief How every switch of a fabric forwards (see Switch). */
enum class Forwarding
{
    CUT_THROUGH,       //!< a packet may leave once its routing header is in (InfiniBand switches)
    STORE_AND_FORWARD, //!< a packet may leave once its last bit is in
};

/**
 * @brief Output-queued switch: unicast table with ECMP, multicast replication.
 *
 * The model: fabric/doc/fabric.md, "Switch".
 */
class Switch : public Object, public PacketReceiver, private AggregationOwner
{
  public:
    static TypeId GetTypeId();
    Switch();
    ~Switch() override;

    /**
     * Fabric setup: node id, ports, for each port the far-end port that sends into it, and where
     * every host attaches (one table shared by all switches; the switch index is id less its size).
     */
    void Setup(uint32_t id,
               std::vector<Ptr<Port>> ports,
               std::vector<Port*> upstream,
               bool lossless,
               std::shared_ptr<const std::vector<HostAttachment>> hosts);

    /**
     * Unicast table (CSR over destination switches, copied): offsets has one entry per switch plus
     * one, candidates the ports. A switch's own slice is not used (its hosts go to their ports). An
     * empty candidate list means no route (a subnet manager found none): such packets are dropped
     * and counted as unroutable.
     * @throws std::invalid_argument on offsets out of order or a port out of range
     */
    void SetUnicastTable(const uint32_t* offsets,
                         std::size_t nOffsets,
                         const uint32_t* candidates,
                         std::size_t nCandidates);
    /** Throws what SetUnicastTable would throw for this table; changes nothing. */
    void CheckUnicastTable(const uint32_t* offsets,
                           std::size_t nOffsets,
                           const uint32_t* candidates,
                           std::size_t nCandidates) const;

    /** This switch's ports in multicast group g's tree (replacing them; none: not in the tree). */
    void SetMulticastPorts(uint32_t group, const uint32_t* ports, std::size_t nPorts);
    /** Throws what SetMulticastPorts would throw (a port out of range); changes nothing. */
    void CheckMulticastPorts(uint32_t group, const uint32_t* ports, std::size_t nPorts) const;

    /**
     * Aggregation tree `tree` on this switch: its parent port (AggregationUnit::ROOT at the
     * root), the contributions per sequence number and the slots it holds (see AggregationUnit).
     * @throws std::invalid_argument for a parent port out of range, no child or no slot
     */
    void SetAggregationTree(uint32_t tree, uint32_t parent, uint32_t children, uint32_t window);
    /** Verify mode: sum the 32-bit integers contributions carry (else only their timing). */
    void SetSumPayloads(bool sum);
    /** The aggregation counters (all zero on a switch in no aggregation tree). */
    AggregationUnit::Counters GetAggregationCounters() const;

    void Receive(const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 uint32_t inPort) override;

    uint32_t GetNPorts() const;
    Ptr<Port> GetPort(uint32_t i) const;

    /** @brief Switch counters, read in bulk after the run. */
    struct Counters
    {
        uint64_t unroutable = 0; //!< packets with no route (unknown host or group): dropped
    };

    const Counters& GetCounters() const;

  protected:
    void DoDispose() override;

  private:
    std::string Where() const;
    /** The output port toward host h.dst (a flow keeps one ECMP candidate); false: no route. */
    bool RouteUnicast(const FabricHeader::Fields& h, uint32_t& port) const;
    void Consumed(uint32_t inPort,
                  const Ptr<Packet>& packet,
                  const FabricHeader::Fields& fields,
                  Time at) override;
    void Emit(const Ptr<Packet>& packet,
              const FabricHeader::Fields& fields,
              uint32_t parent,
              Time ready) override;
    /** A group's packet: one copy to every port of its tree but the ingress (all share one credit).
     */
    void Replicate(const Ptr<Packet>& packet,
                   const FabricHeader::Fields& h,
                   uint32_t inPort,
                   Port* upstream,
                   Time earliest,
                   Time tail,
                   Time lastBit);
    /** A packet that goes nowhere frees its ingress buffer when its last bit is in (LOSSLESS). */
    void ReleaseIngress(Port* upstream, const Ptr<Packet>& packet, Time lastBit);
    /** The port whose credit or PFC ingress a packet that came in on inPort holds (null: none). */
    Port* IngressHolder(uint32_t inPort, const FabricHeader::Fields& fields) const;

    /**
     * When a packet may start on port out: `earliest` (Latency after the switch got it), and, if
     * it arrives cutting through, no earlier than its last bit (tail: its arrival plus Latency)
     * less its serialization on out.
     */
    static Time Start(Port* out, uint32_t size, Time earliest, Time tail)
    {
        return tail == earliest ? earliest : std::max(earliest, tail - out->GetTxTime(size));
    }

    uint32_t m_id;
    uint32_t m_index;    //!< m_id less the host count: this switch's row in the unicast tables
    Time m_latency;      //!< "Latency": forwarding latency per hop
    uint32_t m_ecmpSeed; //!< "EcmpSeed"
    DataRate m_aluRate;  //!< "AggregationRate" (0: the sum of the ports' data rates)
    bool m_sumPayloads;
    std::unique_ptr<AggregationUnit> m_aggregation; //!< made by the first SetAggregationTree
    bool m_lossless;
    std::vector<Ptr<Port>> m_ports;
    std::vector<Port*> m_upstream; //!< port i's far end (credits go back to it)
    std::shared_ptr<const std::vector<HostAttachment>> m_hosts; //!< host -> its leaf and port
    std::vector<uint32_t> m_ucOffsets;               //!< destination switch -> first candidate
    std::vector<uint32_t> m_ucPorts;                 //!< candidates, dense
    std::vector<std::vector<uint32_t>> m_groupPorts; //!< group -> tree ports here
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
