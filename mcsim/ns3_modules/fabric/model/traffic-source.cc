// SPDX-License-Identifier: GPL-2.0-only
#include "traffic-source.h"

#include "fabric-header.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/reusable-event.h"
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
                                          "Payload bytes per packet (the MTU), in bytes; each "
                                          "packet also carries a 16-byte FabricHeader.",
                                          UintegerValue(DEFAULT_PACKET_BYTES),
                                          MakeUintegerAccessor(&TrafficSource::m_packetBytes),
                                          MakeUintegerChecker<uint32_t>(1))
                            .AddAttribute("Burst",
                                          "Packets handed to the host's port per wake-up (the "
                                          "source's events per packet are 1 / Burst).",
                                          UintegerValue(DEFAULT_BURST),
                                          MakeUintegerAccessor(&TrafficSource::m_burst),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

TrafficSource::TrafficSource()
    : m_sentPackets(0),
      m_sentBytes(0),
      m_lastSize(0),
      m_sendEvent(Create<ReusableEvent<TrafficSource, &TrafficSource::SendNext>>(this)),
      m_source(EventClass::TRANSMIT)
{
}

TrafficSource::~TrafficSource() = default;

void
TrafficSource::DoDispose()
{
    m_host = nullptr;
    m_packet = nullptr;
    m_sendEvent = nullptr;
    Object::DoDispose();
}

void
TrafficSource::Setup(Ptr<Host> host, uint32_t destination, uint32_t flow)
{
    m_host = host;
    m_header = FabricHeader(host->GetId(), destination, flow, 0);
    m_packet = nullptr;
    m_source.Place(host->GetId(), unit::TRAFFIC + (flow & (unit::LIMIT - 1 - unit::TRAFFIC)));
}

void
TrafficSource::Start(Time at)
{
    if (!m_host)
    {
        throw std::logic_error("TrafficSource::Start: no host set");
    }
    if (at < mcsim::Now())
    {
        throw std::invalid_argument("TrafficSource::Start: start time is in the past");
    }
    mcsim::Post(at - mcsim::Now(), m_sendEvent, m_source);
}

void
TrafficSource::SendNext()
{
    for (uint32_t i = 0; i < m_burst && m_sentBytes < m_totalBytes; ++i)
    {
        const auto size =
            static_cast<uint32_t>(std::min<uint64_t>(m_totalBytes - m_sentBytes, m_packetBytes));
        const Ptr<Packet>& packet = PacketOf(size);
        m_sentPackets++;
        m_sentBytes += size;
        m_lastSize = packet->GetSize();
        const Time departure = m_host->Send(packet, m_header.GetFields(), this);
        if (departure.IsNegative())
        {
            return; // it waits for credits: Wake() goes on when it is committed
        }
        m_lastDeparture = departure;
    }
    if (m_sentBytes < m_totalBytes)
    {
        WakeAtStart(m_lastDeparture, m_lastSize);
    }
}

const Ptr<Packet>&
TrafficSource::PacketOf(uint32_t payloadBytes)
{
    if (!m_packet || m_packet->GetSize() != payloadBytes + FabricHeader::SERIALIZED_BYTES)
    {
        // a new packet: the one before may still be on its way (ports and receivers hold it)
        m_packet = Create<Packet>(payloadBytes);
        m_packet->AddHeader(m_header);
    }
    return m_packet;
}

void
TrafficSource::Wake(Time departure)
{
    m_lastDeparture = departure;
    if (m_sentBytes < m_totalBytes)
    {
        WakeAtStart(departure, m_lastSize);
    }
}

void
TrafficSource::WakeAtStart(Time departure, uint32_t packetBytes)
{
    const Time start = departure - m_host->GetPort()->GetTxTime(packetBytes);
    mcsim::Post(std::max(start, mcsim::Now()) - mcsim::Now(), m_sendEvent, m_source);
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
TrafficSource::GetLastDeparture() const
{
    return m_lastDeparture;
}

} // namespace mcsim
} // namespace ns3
