// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "port.h"

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Raw traffic source: sends TotalBytes as packets of at most PacketBytes through a Port.
 *
 * It keeps at most one packet queued at the port: the next packet is handed over when the previous
 * one's last bit leaves, so a source never builds a queue of its own making. The last packet
 * carries the remainder. One event per packet.
 */
class TrafficSource : public Object
{
  public:
    static TypeId GetTypeId();
    TrafficSource();
    ~TrafficSource() override;

    /** The port to send through (kept alive by this source). */
    void SetPort(Ptr<Port> port);
    /**
     * Start sending at the given absolute simulation time.
     * @throws std::logic_error without a port; std::invalid_argument if TotalBytes is 0
     */
    void Start(Time at);

    uint64_t GetSentPackets() const; //!< packets handed to the port
    uint64_t GetSentBytes() const;   //!< payload bytes handed to the port
    Time GetLastSendEnd() const;     //!< when the last packet's last bit left the port

  protected:
    void DoDispose() override;

  private:
    void SendNext();

    static constexpr uint32_t DEFAULT_PACKET_BYTES = 4096;

    uint64_t m_totalBytes;  //!< "TotalBytes"
    uint32_t m_packetBytes; //!< "PacketBytes": payload bytes per packet
    Ptr<Port> m_port;
    uint64_t m_sentPackets;
    uint64_t m_sentBytes;
    Time m_lastSendEnd;
};

} // namespace mcsim
} // namespace ns3
