// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "packet-receiver.h"
#include "port.h"

#include "ns3/mcsim/counter-table.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A host with one network port: it sends what its sources give it and counts what it
 * receives. Its ingress buffer is drained at once (it returns credits on arrival); the transport
 * layer (NIC, QPs) sits on top of this.
 */
class Host : public Object, public PacketReceiver
{
  public:
    static TypeId GetTypeId();
    Host();
    ~Host() override;

    /** Fabric setup: this host's id, its port, and the port of the switch that sends to it. */
    void Setup(uint32_t id, Ptr<Port> port, Port* upstream);

    /**
     * Send a packet (with its FabricHeader, whose fields go beside it) into the fabric.
     * @return when its last bit leaves the host, or Time(-1) if it waits for credits (waker is
     * told when it leaves)
     */
    Time Send(const Ptr<Packet>& packet, const FabricHeader::Fields& fields, PortWaker* waker);

    void Receive(const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 uint32_t inPort) override;

    /**
     * Hand every received packet, after counting it, to an upper layer (a NIC's transport);
     * a raw back-pointer, null for none.
     */
    void SetUpperLayer(PacketReceiver* upper);

    uint32_t GetId() const;
    Ptr<Port> GetPort() const;

    /** The fields of Host::Counters, in order: X(member, initial, python_name). */
#define MCSIM_HOST_COUNTERS(X)                                                                     \
    /* packets received */                                                                         \
    X(rxPackets, 0, "rx_packets")                                                                  \
    /* packet bytes received (FabricHeader included) */                                            \
    X(rxBytes, 0, "rx_bytes")                                                                      \
    /* last bit of the first packet (NEVER_PS: none) */                                            \
    X(firstArrivalPs, NEVER_PS, "first_arrival_ps")                                                \
    /* last bit of the last packet (NEVER_PS: none) */                                             \
    X(lastArrivalPs, NEVER_PS, "last_arrival_ps")

    /** @brief Receive counters, read in bulk after the run. */
    struct Counters
    {
        MCSIM_COUNTERS(MCSIM_HOST_COUNTERS)
    };

    static constexpr uint32_t NUM_COUNTERS = Counters::COUNT; //!< fields of Counters, in order

    const Counters& GetCounters() const;

  protected:
    void DoDispose() override;

  private:
    uint32_t m_id;
    Ptr<Port> m_port;
    Port* m_upstream;        //!< the switch port that sends to this host (credits go back to it)
    PacketReceiver* m_upper; //!< transport on top (not owned), or null
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
