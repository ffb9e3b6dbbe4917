// SPDX-License-Identifier: GPL-2.0-only
#include "pcap-writer.h"

#include "transport-header.h"
#include "wire-format.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <stdexcept>

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr uint32_t PCAP_MAGIC_NS = 0xA1B23C4D; //!< pcap with nanosecond timestamps
constexpr uint32_t LINKTYPE_ERF = 197;
constexpr uint8_t ERF_TYPE_INFINIBAND = 21;
constexpr uint32_t ERF_HEADER_BYTES = 16;
constexpr uint32_t PCAP_FILE_HEADER_BYTES = 24;
constexpr uint32_t PCAP_RECORD_HEADER_BYTES =
    16;                                         //!< seconds, nanoseconds, captured, original length
constexpr uint16_t MULTICAST_LID_BASE = 0xC000; //!< the first multicast LID (IBA 7.11.1)
constexpr uint8_t BTH_OPCODE_UD_SEND_ONLY = 0x64;
constexpr uint8_t AETH_ACK = 0x1F;       //!< ACK, credits invalid (no end-to-end flow control)
constexpr uint8_t AETH_NAK_PSN = 0x60;   //!< NAK: PSN sequence error
constexpr uint8_t AETH_RNR_NAK = 0x20;   //!< RNR NAK (timer 0)
constexpr uint32_t UD_QKEY = 0x80010000; //!< the Q_Key of mcsim's UD QPs (a well-known value)

void
Put(std::vector<uint8_t>& out, uint64_t value, int bytes)
{
    for (int i = bytes - 1; i >= 0; --i)
    {
        out.push_back(static_cast<uint8_t>(value >> (8 * i)));
    }
}

/** A GID of the model's: the link-local prefix and the host's GUID (its number + 1). */
void
PutGid(std::vector<uint8_t>& out, uint64_t prefix, uint64_t id)
{
    Put(out, prefix, 8);
    Put(out, id, 8);
}

uint8_t
BthOpcode(Opcode op)
{
    // the RC opcodes in mcsim's Opcode are in the specification's order, 0x00 (SEND_FIRST) ..
    // 0x11 (ACKNOWLEDGE); UD SEND_ONLY and SEND_ONLY_IMM are 0x64 and 0x65
    return IsUd(op)
               ? static_cast<uint8_t>(BTH_OPCODE_UD_SEND_ONLY + (op == Opcode::UD_SEND_ONLY_IMM))
               : static_cast<uint8_t>(op);
}

uint8_t
Syndrome(uint8_t flags)
{
    return (flags & TransportHeader::FLAG_NAK)   ? AETH_NAK_PSN
           : (flags & TransportHeader::FLAG_RNR) ? AETH_RNR_NAK
                                                 : AETH_ACK;
}

void
PutExtensions(std::vector<uint8_t>& out, const TransportHeader& h, uint32_t srcQpn)
{
    if (IsUd(h.opcode))
    {
        Put(out, UD_QKEY, 4);
        Put(out, srcQpn & 0xFFFFFF, 4); // reserved byte, then SrcQP
    }
    if (HasReth(h.opcode))
    {
        Put(out, h.remoteOffset, 8); // VA
        Put(out, 0, 4);              // R_Key
        Put(out, h.length, 4);       // DMA length
    }
    if (HasAeth(h.opcode))
    {
        Put(out, (static_cast<uint32_t>(Syndrome(h.flags)) << 24), 4); // syndrome, MSN 0
    }
    if (HasImm(h.opcode))
    {
        Put(out, h.imm, 4);
    }
}
} // namespace

std::vector<uint8_t>
InfinibandFrame(const FabricHeader::Fields& fields,
                uint32_t payloadBytes,
                uint32_t srcQpn,
                uint32_t& wireBytes)
{
    const TransportHeader h = TransportHeader::FromFields(fields);
    const bool multicast = (h.dst & FabricHeader::GROUP_FLAG) != 0;
    const uint32_t group = h.dst & ~FabricHeader::GROUP_FLAG;
    const uint32_t pad = (4 - payloadBytes % 4) % 4;
    std::vector<uint8_t> ext;
    PutExtensions(ext, h, srcQpn);
    const uint32_t bth = wire::BTH_BYTES + static_cast<uint32_t>(ext.size());
    const uint32_t grh = multicast ? wire::GRH_BYTES : 0;
    const uint32_t toIcrc = wire::LRH_BYTES + grh + bth + payloadBytes + pad + wire::ICRC_BYTES;
    wireBytes = toIcrc + wire::VCRC_BYTES;
    std::vector<uint8_t> out;
    out.reserve(wire::LRH_BYTES + grh + bth);
    // LRH: VL 0, LVer 0; SL 0, LNH 3 (GRH follows) or 2 (BTH follows); DLID; PktLen in words; SLID
    Put(out, 0, 1);
    Put(out, multicast ? 3 : 2, 1);
    Put(out, multicast ? MULTICAST_LID_BASE + group : h.dst + 1, 2);
    Put(out, (toIcrc / 4) & 0x7FF, 2);
    Put(out, h.srcHost + 1, 2);
    if (multicast)
    {
        // GRH: IPVer 6, TClass 0, FlowLabel 0; PayLen (BTH to ICRC); NxtHdr 0x1B (BTH); HopLmt
        Put(out, 0x60000000, 4);
        Put(out, bth + payloadBytes + pad + wire::ICRC_BYTES, 2);
        Put(out, 0x1B, 1);
        Put(out, 0xFF, 1);
        PutGid(out, 0xFE80000000000000ULL, h.srcHost + 1);
        PutGid(out, 0xFF12401B00000000ULL, group); // a multicast GID of the IPoIB-style prefix
    }
    // BTH: OpCode; SE 0, M 0, PadCnt, TVer 0; P_Key; reserved; DestQP; A, PSN
    Put(out, BthOpcode(h.opcode), 1);
    Put(out, pad << 4, 1);
    Put(out, 0xFFFF, 2);
    Put(out, multicast ? 0xFFFFFFu : h.dstQpn, 4);
    const uint32_t ackReq = (h.flags & TransportHeader::FLAG_ACK_REQUEST) ? 0x80000000u : 0;
    Put(out, ackReq | (h.psn & 0xFFFFFF), 4);
    out.insert(out.end(), ext.begin(), ext.end());
    return out;
}

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
PcapWriter::Open(const std::string& path)
{
    m_out.open(path, std::ios::binary | std::ios::trunc);
    if (!m_out)
    {
        throw std::invalid_argument("PcapWriter: cannot write " + path);
    }
    m_path = path;
    // little-endian, as the host writes them: magic, version 2.4, zone, sigfigs, snaplen, link type
    const uint32_t magic = PCAP_MAGIC_NS;
    const uint16_t version[2] = {2, 4};
    const uint32_t rest[4] = {0, 0, 65535, LINKTYPE_ERF};
    m_out.write(reinterpret_cast<const char*>(&magic), sizeof(magic));
    m_out.write(reinterpret_cast<const char*>(version), sizeof(version));
    m_out.write(reinterpret_cast<const char*>(rest), sizeof(rest));
    m_bytes = PCAP_FILE_HEADER_BYTES;
}

void
PcapWriter::Attach(Ptr<Nic> nic)
{
    if (nic->GetWireFormat() != WireFormat::INFINIBAND)
    {
        throw std::invalid_argument("PcapWriter: traces native InfiniBand frames (the NIC's "
                                    "WireFormat is RoCEv2)");
    }
    nic->TraceConnectWithoutContext("Tx", MakeCallback(&PcapWriter::OnTx, this));
    nic->TraceConnectWithoutContext("Rx", MakeCallback(&PcapWriter::OnRx, this));
}

void
PcapWriter::OnTx(Ptr<const Packet> packet,
                 const FabricHeader::Fields& f,
                 uint32_t /* host */,
                 uint32_t qpn)
{
    Write(f, packet->GetSize(), qpn);
}

void
PcapWriter::OnRx(Ptr<const Packet> packet,
                 const FabricHeader::Fields& f,
                 uint32_t /* host */,
                 uint32_t /* qpn */)
{
    // a datagram's flow is its sending QP (UdQp); an RC packet's carries no DETH
    Write(f, packet->GetSize(), f.flow);
}

void
PcapWriter::Write(const FabricHeader::Fields& f, uint32_t packetBytes, uint32_t srcQpn)
{
    if (m_maxPackets != 0 && m_written >= m_maxPackets)
    {
        m_skipped++; // over the packet cap: no frame built
        return;
    }
    const TransportHeader h = TransportHeader::FromFields(f);
    const bool multicast = (h.dst & FabricHeader::GROUP_FLAG) != 0;
    const uint32_t headers = WireHeaderBytes(WireFormat::INFINIBAND, h.opcode, multicast);
    const uint32_t payload = packetBytes > headers ? packetBytes - headers : 0;
    uint32_t wireBytes = 0;
    const std::vector<uint8_t> frame = InfinibandFrame(f, payload, srcQpn, wireBytes);
    const uint32_t record =
        PCAP_RECORD_HEADER_BYTES + ERF_HEADER_BYTES + static_cast<uint32_t>(frame.size());
    if (m_maxBytes != 0 && m_bytes + record > m_maxBytes)
    {
        m_skipped++;
        return;
    }
    const int64_t ns = Simulator::Now().GetNanoSeconds();
    const uint32_t capLen = ERF_HEADER_BYTES + static_cast<uint32_t>(frame.size());
    const uint32_t origLen = ERF_HEADER_BYTES + wireBytes;
    const uint32_t rec[4] = {static_cast<uint32_t>(ns / 1000000000),
                             static_cast<uint32_t>(ns % 1000000000),
                             capLen,
                             origLen};
    m_out.write(reinterpret_cast<const char*>(rec), sizeof(rec));
    // ERF: timestamp (little-endian 32.32 seconds), type, flags (varying length), rlen, lctr,
    // wlen (big-endian)
    const uint64_t seconds = static_cast<uint64_t>(ns / 1000000000);
    const uint64_t frac = (static_cast<uint64_t>(ns % 1000000000) << 32) / 1000000000;
    const uint64_t ts = (seconds << 32) | frac;
    m_out.write(reinterpret_cast<const char*>(&ts), 8);
    std::vector<uint8_t> erf;
    Put(erf, ERF_TYPE_INFINIBAND, 1);
    Put(erf, 0x04, 1); // varying-length record
    Put(erf, capLen, 2);
    Put(erf, 0, 2);
    Put(erf, wireBytes & 0xFFFF, 2);
    m_out.write(reinterpret_cast<const char*>(erf.data()),
                static_cast<std::streamsize>(erf.size()));
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
