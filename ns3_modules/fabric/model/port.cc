// SPDX-License-Identifier: GPL-2.0-only
#include "port.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimPort");
NS_OBJECT_ENSURE_REGISTERED(Port);

TypeId
Port::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Port")
            .SetParent<Object>()
            .SetGroupName("Mcsim")
            .AddConstructor<Port>()
            .AddAttribute("DataRate",
                          "Signalling rate of the link in bit/s, before line encoding.",
                          DataRateValue(DataRate("56Gbps")),
                          MakeDataRateAccessor(&Port::m_rate),
                          MakeDataRateChecker())
            .AddAttribute("EncodingDataBits",
                          "Data bits per line code word (64 for 64b/66b; 1 with EncodingLineBits 1 "
                          "for no encoding overhead).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&Port::m_encodingDataBits),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("EncodingLineBits",
                          "Line bits per code word (66 for 64b/66b); must be >= EncodingDataBits.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&Port::m_encodingLineBits),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("HeaderBytes",
                          "Bytes each packet occupies on the wire beyond its payload (headers, "
                          "CRCs), in bytes.",
                          UintegerValue(DEFAULT_HEADER_BYTES),
                          MakeUintegerAccessor(&Port::m_headerBytes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Delay",
                          "Propagation delay of the link, from last bit sent to last bit received.",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&Port::m_delay),
                          MakeTimeChecker(Time(0)));
    return tid;
}

Port::Port()
    : m_peer(nullptr),
      m_peerPort(0),
      m_txPackets(0),
      m_txBytes(0),
      m_txWireBytes(0)
{
}

Port::~Port() = default;

void
Port::DoDispose()
{
    m_inFlight.clear();
    m_peer = nullptr;
    Object::DoDispose();
}

void
Port::Connect(PacketReceiver* peer, uint32_t peerPort)
{
    if (peer == nullptr)
    {
        throw std::invalid_argument("Port::Connect: peer must not be null");
    }
    if (m_encodingLineBits < m_encodingDataBits)
    {
        throw std::invalid_argument("Port: EncodingLineBits=" + std::to_string(m_encodingLineBits) +
                                    " must be >= EncodingDataBits=" +
                                    std::to_string(m_encodingDataBits));
    }
    if (m_rate.GetBitRate() == 0)
    {
        throw std::invalid_argument("Port: DataRate must be > 0 bit/s");
    }
    m_peer = peer;
    m_peerPort = peerPort;
}

Time
Port::GetTxTime(uint64_t payloadBytes) const
{
    // ps = ceil(bits * 1e12 * line / (data * rate)), exact in 128-bit integers.
    const unsigned __int128 bits = (payloadBytes + m_headerBytes) * 8ULL;
    const unsigned __int128 num = bits * 1000000000000ULL * m_encodingLineBits;
    const unsigned __int128 den =
        static_cast<unsigned __int128>(m_encodingDataBits) * m_rate.GetBitRate();
    return PicoSeconds(static_cast<int64_t>((num + den - 1) / den));
}

uint64_t
Port::GetDataRateBps() const
{
    return static_cast<uint64_t>(static_cast<unsigned __int128>(m_rate.GetBitRate()) *
                                 m_encodingDataBits / m_encodingLineBits);
}

Time
Port::Send(Ptr<Packet> packet)
{
    if (m_peer == nullptr)
    {
        throw std::logic_error("Port::Send: the port is not connected");
    }
    const uint32_t size = packet->GetSize();
    const Time tx = GetTxTime(size);
    const Time start = std::max(Simulator::Now(), m_busyUntil);
    m_busyUntil = start + tx;
    m_busyTime += tx;
    m_txPackets++;
    m_txBytes += size;
    m_txWireBytes += size + m_headerBytes;
    m_inFlight.push_back({m_busyUntil + m_delay, packet});
    if (m_inFlight.size() == 1)
    {
        Simulator::Schedule(m_inFlight.front().arrival - Simulator::Now(), &Port::Arrive, this);
    }
    return m_busyUntil;
}

void
Port::Arrive()
{
    NS_ASSERT_MSG(!m_inFlight.empty(), "Port::Arrive with nothing in flight");
    Ptr<Packet> packet = m_inFlight.front().packet;
    m_inFlight.pop_front();
    if (!m_inFlight.empty())
    {
        Simulator::Schedule(m_inFlight.front().arrival - Simulator::Now(), &Port::Arrive, this);
    }
    m_peer->Receive(packet, m_peerPort);
}

Time
Port::GetBusyUntil() const
{
    return m_busyUntil;
}

uint64_t
Port::GetTxPackets() const
{
    return m_txPackets;
}

uint64_t
Port::GetTxBytes() const
{
    return m_txBytes;
}

uint64_t
Port::GetTxWireBytes() const
{
    return m_txWireBytes;
}

Time
Port::GetBusyTime() const
{
    return m_busyTime;
}

} // namespace mcsim
} // namespace ns3
