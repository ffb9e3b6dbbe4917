// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "host.h"
#include "port.h"

#include "ns3/event-impl.h"
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
 * It keeps at most one packet queued at its host's port: the next one is handed over when the
 * previous one's last bit leaves (or, if it had to wait for credits, when it is committed and its
 * departure is known). The last packet carries the remainder. One event per packet.
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

    static constexpr uint32_t DEFAULT_PACKET_BYTES = 4096;

    uint64_t m_totalBytes;  //!< "TotalBytes": payload to send
    uint32_t m_packetBytes; //!< "PacketBytes": payload per packet (the MTU)
    Ptr<Host> m_host;
    uint32_t m_destination;
    uint32_t m_flow;
    uint64_t m_sentPackets;
    uint64_t m_sentBytes;
    Time m_lastDeparture;
    Ptr<EventImpl> m_sendEvent; //!< reused for every packet
};

} // namespace mcsim
} // namespace ns3
