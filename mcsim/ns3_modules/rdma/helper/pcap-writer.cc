// SPDX-License-Identifier: GPL-2.0-only
#include "pcap-writer.h"

#include "transport-header.h"
#include "wire-frame.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstring>
#include <stdexcept>

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr uint32_t PCAP_MAGIC_NS = 0xA1B23C4D; //!< pcap with nanosecond timestamps
constexpr uint32_t LINKTYPE_ETHERNET = 1;
constexpr uint32_t LINKTYPE_ERF = 197;
constexpr uint8_t ERF_TYPE_INFINIBAND = 21;
constexpr uint8_t ERF_FLAG_VARYING_LENGTH = 0x04;
constexpr uint32_t ERF_HEADER_BYTES = 16;
constexpr uint32_t PCAP_FILE_HEADER_BYTES = 24;
constexpr uint32_t PCAP_RECORD_HEADER_BYTES =
    16; //!< seconds, nanoseconds, captured, original length
constexpr uint32_t PCAP_SNAP_BYTES = 65535;
constexpr int64_t NS_PER_S = 1000000000;

} // namespace

NS_OBJECT_ENSURE_REGISTERED(PcapWriter);

TypeId
PcapWriter::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::PcapWriter")
            .SetParent<Object>()
            .SetGroupName("Mcsim")
            .AddConstructor<PcapWriter>()
            .AddAttribute("MaxPackets",
                          "Frames a file holds at most (0: no cap); the others are counted.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PcapWriter::m_maxPackets),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("MaxBytes",
                          "Bytes a file holds at most (0: no cap); frames past it are counted.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PcapWriter::m_maxBytes),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

PcapWriter::PcapWriter()
    : m_maxPackets(0),
      m_maxBytes(0)
{
}

PcapWriter::~PcapWriter() = default;

void
PcapWriter::DoDispose()
{
    Close();
    Object::DoDispose();
}

void
PcapWriter::Open(const std::string& path, WireFormat format, bool payload)
{
    m_out.open(path, std::ios::binary | std::ios::trunc);
    if (!m_out)
    {
        throw std::invalid_argument("PcapWriter: cannot write " + path);
    }
    m_path = path;
    m_format = format;
    m_payload = payload;
    // little-endian, as the host writes them: magic, version 2.4, zone, sigfigs, snaplen, link type
    const uint32_t magic = PCAP_MAGIC_NS;
    const uint16_t version[2] = {2, 4};
    const uint32_t rest[4] = {0,
                              0,
                              PCAP_SNAP_BYTES,
                              format == WireFormat::INFINIBAND ? LINKTYPE_ERF : LINKTYPE_ETHERNET};
    m_out.write(reinterpret_cast<const char*>(&magic), sizeof(magic));
    m_out.write(reinterpret_cast<const char*>(version), sizeof(version));
    m_out.write(reinterpret_cast<const char*>(rest), sizeof(rest));
    m_bytes = PCAP_FILE_HEADER_BYTES;
}

void
PcapWriter::Attach(Ptr<Nic> nic)
{
    if (nic->GetWireFormat() != m_format)
    {
        throw std::invalid_argument("PcapWriter: a NIC of another wire format than the file's");
    }
    // out: as its host's port commits them to the wire (with the fields the wire carries: ECN);
    // in: as the NIC takes them
    nic->GetPort()->TraceConnectWithoutContext("Tx", MakeCallback(&PcapWriter::OnPort, this));
    nic->TraceConnectWithoutContext("Rx", MakeCallback(&PcapWriter::OnRx, this));
}

void
PcapWriter::AttachPort(Ptr<Port> port, Ptr<Port> peer)
{
    port->TraceConnectWithoutContext("Tx", MakeCallback(&PcapWriter::OnPort, this));
    peer->TraceConnectWithoutContext("Rx", MakeCallback(&PcapWriter::OnPort, this));
}

void
PcapWriter::OnRx(Ptr<const Packet> packet,
                 const FabricHeader::Fields& f,
                 uint32_t /* host */,
                 uint32_t /* qpn */)
{
    // a datagram's flow is its sending QP (UdQp); an RC packet's carries no DETH
    Write(packet, f, f.flow);
}

void
PcapWriter::OnPort(Ptr<const Packet> packet,
                   const FabricHeader::Fields& f,
                   uint32_t /* node */,
                   uint32_t /* port */)
{
    Write(packet, f, f.flow);
}

void
PcapWriter::Write(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t srcQpn)
{
    if (m_maxPackets != 0 && m_written >= m_maxPackets)
    {
        m_skipped++; // over the packet cap: no frame built
        return;
    }
    const TransportHeader h = TransportHeader::FromFields(f);
    const uint32_t headers = WireHeaderBytes(m_format, h.opcode, f.IsGroup());
    const uint32_t size = packet->GetSize();
    const uint32_t payload = size > headers ? size - headers : 0;
    const uint8_t* data = nullptr; // headers only
    if (m_payload)
    {
        m_data.resize(payload + 1);               // never empty: an ACK's frame is whole too
        packet->CopyData(m_data.data(), payload); // a verify-mode packet has its payload first
        data = m_data.data();
    }
    const uint32_t wireBytes = BuildWireFrame(m_format, f, payload, srcQpn, data, m_frame);
    WriteRecord(m_frame, wireBytes);
}

void
PcapWriter::WriteRecord(const std::vector<uint8_t>& frame, uint32_t wireBytes)
{
    const bool erf = m_format == WireFormat::INFINIBAND;
    const uint32_t erfBytes = erf ? ERF_HEADER_BYTES : 0;
    const uint32_t capLen = erfBytes + static_cast<uint32_t>(frame.size());
    const uint32_t record = PCAP_RECORD_HEADER_BYTES + capLen;
    if (m_maxBytes != 0 && m_bytes + record > m_maxBytes)
    {
        m_skipped++;
        return;
    }
    const int64_t ns = Simulator::Now().GetNanoSeconds();
    const uint32_t rec[4] = {static_cast<uint32_t>(ns / NS_PER_S),
                             static_cast<uint32_t>(ns % NS_PER_S),
                             capLen,
                             erfBytes + wireBytes};
    char head[PCAP_RECORD_HEADER_BYTES + ERF_HEADER_BYTES];
    std::memcpy(head, rec, sizeof(rec)); // little-endian, as the file header
    if (erf)
    {
        // ERF: timestamp (little-endian 32.32 seconds), type, flags, rlen, lctr, wlen (big-endian)
        const uint64_t seconds = static_cast<uint64_t>(ns / NS_PER_S);
        const uint64_t frac = (static_cast<uint64_t>(ns % NS_PER_S) << 32) / NS_PER_S;
        const uint64_t ts = (seconds << 32) | frac;
        std::memcpy(head + sizeof(rec), &ts, sizeof(ts));
        const uint8_t rest[8] = {ERF_TYPE_INFINIBAND,
                                 ERF_FLAG_VARYING_LENGTH,
                                 static_cast<uint8_t>(capLen >> 8),
                                 static_cast<uint8_t>(capLen),
                                 0,
                                 0,
                                 static_cast<uint8_t>(wireBytes >> 8),
                                 static_cast<uint8_t>(wireBytes)};
        std::memcpy(head + sizeof(rec) + sizeof(ts), rest, sizeof(rest));
    }
    m_out.write(head, static_cast<std::streamsize>(sizeof(rec) + erfBytes));
    m_out.write(reinterpret_cast<const char*>(frame.data()),
                static_cast<std::streamsize>(frame.size()));
    m_bytes += record;
    m_written++;
}

void
PcapWriter::Close()
{
    if (m_out.is_open())
    {
        m_out.close();
    }
}

uint64_t
PcapWriter::GetWritten() const
{
    return m_written;
}

uint64_t
PcapWriter::GetSkipped() const
{
    return m_skipped;
}

} // namespace mcsim
} // namespace ns3
