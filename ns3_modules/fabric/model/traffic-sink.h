// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "packet-receiver.h"

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/** @brief Raw traffic sink: counts what arrives and when the first and last packets did. */
class TrafficSink : public Object, public PacketReceiver
{
  public:
    static TypeId GetTypeId();
    TrafficSink();
    ~TrafficSink() override;

    void Receive(Ptr<Packet> packet, uint32_t inPort) override;

    /** This sink as a receiver, for Port::Connect (cppyy does not cast a Ptr to a base). */
    PacketReceiver* AsReceiver();

    uint64_t GetReceivedPackets() const; //!< packets received
    uint64_t GetReceivedBytes() const;   //!< payload bytes received
    Time GetFirstArrival() const;        //!< last bit of the first packet (0 if none)
    Time GetLastArrival() const;         //!< last bit of the last packet (0 if none)

  private:
    uint64_t m_receivedPackets;
    uint64_t m_receivedBytes;
    Time m_firstArrival;
    Time m_lastArrival;
};

} // namespace mcsim
} // namespace ns3
