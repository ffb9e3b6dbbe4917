// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "fabric-header.h"
#include "host.h"
#include "port.h"

#include "ns3/event-impl.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Raw traffic source: a host sends TotalBytes to a host or a multicast group, in packets of
 * PacketBytes payload plus a FabricHeader.
 *
 * The model: fabric/doc/fabric.md, "TrafficSource".
 */
class TrafficSource : public Object, public PortWaker
{
  public:
    static TypeId GetTypeId();
    TrafficSource();
    ~TrafficSource() override;

    /**
     * @param host the sending host (kept alive by this source)
     * @param destination a host id, or a group id | FabricHeader::GROUP_FLAG
     * @param flow the flow id (ECMP hash input)
     */
    void Setup(Ptr<Host> host, uint32_t destination, uint32_t flow);
    /** Start at an absolute time; throws std::logic_error without Setup. */
    void Start(Time at);

    void Wake(Time departure) override;

    uint64_t GetSentPackets() const; //!< packets handed to the host
    uint64_t GetSentBytes() const;   //!< payload bytes handed to the host
    Time GetLastDeparture() const;   //!< last bit of the last packet left the host

  protected:
    void DoDispose() override;

  private:
    void SendNext();
    /** Wake again when the packet whose last bit leaves at departure starts on the wire. */
    void WakeAtStart(Time departure, uint32_t packetBytes);
    /** The packet of payloadBytes (the one sent last if it has that size, else a new one). */
    const Ptr<Packet>& PacketOf(uint32_t payloadBytes);

    static constexpr uint32_t DEFAULT_PACKET_BYTES = 4096;
    static constexpr uint32_t DEFAULT_BURST = 8;

    uint64_t m_totalBytes;  //!< "TotalBytes": payload to send
    uint32_t m_packetBytes; //!< "PacketBytes": payload per packet (the MTU)
    uint32_t m_burst;       //!< "Burst": packets handed over per wake-up
    Ptr<Host> m_host;
    FabricHeader m_header; //!< every packet's header (host, destination, flow, seq 0)
    Ptr<Packet> m_packet;  //!< the packet sent last, shared by all packets of its size
    uint64_t m_sentPackets;
    uint64_t m_sentBytes;
    Time m_lastDeparture;
    uint32_t m_lastSize;        //!< size of the last packet handed over, FabricHeader included
    Ptr<EventImpl> m_sendEvent; //!< reused for every packet
    EventSource m_source;       //!< its order: (TRANSMIT, host, TRAFFIC + flow)
};

} // namespace mcsim
} // namespace ns3
