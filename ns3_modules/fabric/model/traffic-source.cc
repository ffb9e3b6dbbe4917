// SPDX-License-Identifier: GPL-2.0-only
#include "traffic-source.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(TrafficSource);

TypeId
TrafficSource::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::TrafficSource")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<TrafficSource>()
                            .AddAttribute("TotalBytes",
                                          "Payload bytes to send, in bytes.",
                                          UintegerValue(1 << 20),
                                          MakeUintegerAccessor(&TrafficSource::m_totalBytes),
                                          MakeUintegerChecker<uint64_t>(1))
                            .AddAttribute("PacketBytes",
                                          "Payload bytes per packet (the MTU), in bytes.",
                                          UintegerValue(DEFAULT_PACKET_BYTES),
                                          MakeUintegerAccessor(&TrafficSource::m_packetBytes),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

TrafficSource::TrafficSource()
    : m_sentPackets(0),
      m_sentBytes(0)
{
}

TrafficSource::~TrafficSource() = default;

void
TrafficSource::DoDispose()
{
    m_port = nullptr;
    Object::DoDispose();
}

void
TrafficSource::SetPort(Ptr<Port> port)
{
    m_port = port;
}

void
TrafficSource::Start(Time at)
{
    if (!m_port)
    {
        throw std::logic_error("TrafficSource::Start: no port set");
    }
    if (at < Simulator::Now())
    {
        throw std::invalid_argument("TrafficSource::Start: start time is in the past");
    }
    Simulator::Schedule(at - Simulator::Now(), &TrafficSource::SendNext, this);
}

void
TrafficSource::SendNext()
{
    const uint64_t left = m_totalBytes - m_sentBytes;
    const auto size = static_cast<uint32_t>(std::min<uint64_t>(left, m_packetBytes));
    m_lastSendEnd = m_port->Send(Create<Packet>(size));
    m_sentPackets++;
    m_sentBytes += size;
    if (m_sentBytes < m_totalBytes)
    {
        Simulator::Schedule(m_lastSendEnd - Simulator::Now(), &TrafficSource::SendNext, this);
    }
}

uint64_t
TrafficSource::GetSentPackets() const
{
    return m_sentPackets;
}

uint64_t
TrafficSource::GetSentBytes() const
{
    return m_sentBytes;
}

Time
TrafficSource::GetLastSendEnd() const
{
    return m_lastSendEnd;
}

} // namespace mcsim
} // namespace ns3
