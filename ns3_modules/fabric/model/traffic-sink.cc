// SPDX-License-Identifier: GPL-2.0-only
#include "traffic-sink.h"

#include "ns3/simulator.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(TrafficSink);

TypeId
TrafficSink::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::TrafficSink")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<TrafficSink>();
    return tid;
}

TrafficSink::TrafficSink()
    : m_receivedPackets(0),
      m_receivedBytes(0)
{
}

TrafficSink::~TrafficSink() = default;

void
TrafficSink::Receive(Ptr<Packet> packet, uint32_t inPort)
{
    if (m_receivedPackets == 0)
    {
        m_firstArrival = Simulator::Now();
    }
    m_lastArrival = Simulator::Now();
    m_receivedPackets++;
    m_receivedBytes += packet->GetSize();
}

PacketReceiver*
TrafficSink::AsReceiver()
{
    return this;
}

uint64_t
TrafficSink::GetReceivedPackets() const
{
    return m_receivedPackets;
}

uint64_t
TrafficSink::GetReceivedBytes() const
{
    return m_receivedBytes;
}

Time
TrafficSink::GetFirstArrival() const
{
    return m_firstArrival;
}

Time
TrafficSink::GetLastArrival() const
{
    return m_lastArrival;
}

} // namespace mcsim
} // namespace ns3
