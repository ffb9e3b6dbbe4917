// SPDX-License-Identifier: GPL-2.0-only
#include "wire-frame.h"

#include "transport-header.h"

#include <array>

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr uint16_t MULTICAST_LID_BASE = 0xC000; //!< the first multicast LID (IBA 7.11.1)
constexpr uint16_t TOP_UNICAST_LID = 0xBFFF;    //!< aggregation trees count down from it
constexpr uint8_t BTH_OPCODE_UD_SEND_ONLY = 0x64;
constexpr uint8_t BTH_OPCODE_CNP = 0x81; //!< RoCEv2's CNP (Annex A17.9.3)
constexpr uint8_t AETH_ACK = 0x1F;       //!< ACK, credits invalid (no end-to-end credits)
constexpr uint8_t AETH_NAK_PSN = 0x60;   //!< NAK: PSN sequence error
constexpr uint8_t AETH_RNR_NAK = 0x20;   //!< RNR NAK (timer 0)
constexpr uint32_t UD_QKEY = 0x80010000; //!< the Q_Key of mcsim's UD QPs (a well-known value)
constexpr uint64_t LINK_LOCAL_PREFIX = 0xFE80000000000000ULL;
constexpr uint64_t MULTICAST_GID_PREFIX = 0xFF12401B00000000ULL; //!< IPoIB-style multicast GIDs
constexpr uint32_t HOST_IPV4 = 0x0A000000;                       //!< 10.0.0.0
constexpr uint32_t TREE_IPV4 = 0x0AFF0000;                       //!< 10.255.0.0
constexpr uint32_t GROUP_IPV4 = 0xEF000000;                      //!< 239.0.0.0
constexpr uint64_t HOST_MAC = 0x020000000000ULL;                 //!< locally administered, unicast
constexpr uint64_t GROUP_MAC = 0x01005E000000ULL;                //!< IPv4 multicast (RFC 1112)
constexpr uint16_t ETHERTYPE_IPV4 = 0x0800;
constexpr uint8_t IPV4_TTL = 64;
constexpr uint8_t IP_PROTOCOL_UDP = 17;
constexpr uint16_t IPV4_DONT_FRAGMENT = 0x4000;
constexpr uint16_t ROCEV2_UDP_PORT = 4791;             //!< IANA, RoCEv2 (Annex A17.2.2)
constexpr uint16_t ROCEV2_SOURCE_PORT_BASE = 0xC000;   //!< the source port: 0xC000 | the flow's id
constexpr uint16_t VCRC_POLYNOMIAL_REFLECTED = 0xD008; //!< 0x100B, bits reversed
/** The model numbers a NIC's QPs from 0; on the wire QP0 and QP1 are the subnet management and the
 * general services QPs (IBA 3.5.4), so a QP's number there is the model's + 2. */
constexpr uint32_t WIRE_QPN_OFFSET = 2;

void
Put(std::vector<uint8_t>& out, uint64_t value, int bytes)
{
    for (int i = bytes - 1; i >= 0; --i)
    {
        out.push_back(static_cast<uint8_t>(value >> (8 * i)));
    }
}

void
PutLittle(std::vector<uint8_t>& out, uint32_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
    {
        out.push_back(static_cast<uint8_t>(value >> (8 * i)));
    }
}

/** Where a packet goes, as the kind of address it names. */
enum class Target
{
    HOST,
    GROUP,
    TREE,
};

Target
TargetOf(uint32_t dst)
{
    return (dst & FabricHeader::GROUP_FLAG)            ? Target::GROUP
           : FabricHeader::IsAggregateDestination(dst) ? Target::TREE
                                                       : Target::HOST;
}

uint16_t
Lid(uint32_t dst)
{
    switch (TargetOf(dst))
    {
    case Target::GROUP:
        return static_cast<uint16_t>(MULTICAST_LID_BASE + (dst & ~FabricHeader::GROUP_FLAG));
    case Target::TREE:
        return static_cast<uint16_t>(TOP_UNICAST_LID - (dst & ~FabricHeader::AGGREGATE_FLAG));
    default:
        return static_cast<uint16_t>(dst + 1);
    }
}

uint32_t
Ipv4(uint32_t dst)
{
    switch (TargetOf(dst))
    {
    case Target::GROUP:
        return GROUP_IPV4 + (dst & ~FabricHeader::GROUP_FLAG);
    case Target::TREE:
        return TREE_IPV4 + (dst & ~FabricHeader::AGGREGATE_FLAG);
    default:
        return HOST_IPV4 + dst + 1;
    }
}

uint64_t
Mac(uint32_t dst)
{
    return TargetOf(dst) == Target::GROUP ? GROUP_MAC | (Ipv4(dst) & 0x7FFFFF)
                                          : HOST_MAC | (Ipv4(dst) & 0xFFFFFF);
}

uint8_t
BthOpcode(Opcode op)
{
    // the RC opcodes in mcsim's Opcode are in the specification's order, 0x00 (SEND_FIRST) ..
    // 0x11 (ACKNOWLEDGE); UD SEND_ONLY and SEND_ONLY_IMM are 0x64 and 0x65
    return IsCnp(op) ? BTH_OPCODE_CNP
           : IsUd(op)
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

/** BTH, then DETH, RETH, AETH and ImmDt as the opcode has them (IBA 9.2-9.4). */
void
PutTransport(std::vector<uint8_t>& out, const TransportHeader& h, uint32_t srcQpn, uint32_t pad)
{
    const bool group = TargetOf(h.dst) == Target::GROUP;
    // BTH: OpCode; SE 0, M 0, PadCnt, TVer 0; P_Key; reserved; DestQP; A, PSN
    Put(out, BthOpcode(h.opcode), 1);
    Put(out, pad << 4, 1);
    Put(out, 0xFFFF, 2);
    Put(out, group ? 0xFFFFFFu : h.dstQpn + WIRE_QPN_OFFSET, 4);
    const uint32_t ackReq = (h.flags & TransportHeader::FLAG_ACK_REQUEST) ? 0x80000000u : 0;
    Put(out, ackReq | (h.psn & 0xFFFFFF), 4);
    if (IsUd(h.opcode))
    {
        Put(out, UD_QKEY, 4);
        Put(out, (srcQpn + WIRE_QPN_OFFSET) & 0xFFFFFF, 4); // reserved byte, then SrcQP
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
    if (IsCnp(h.opcode))
    {
        Put(out, 0, 8); // reserved
        Put(out, 0, 8);
    }
}

/** LRH, and the GRH of a multicast packet: toIcrc = the bytes from the LRH through the ICRC. */
void
PutLrhGrh(std::vector<uint8_t>& out, const TransportHeader& h, uint32_t toIcrc)
{
    const bool group = TargetOf(h.dst) == Target::GROUP;
    // LRH: VL 0, LVer 0; SL 0, LNH 3 (GRH follows) or 2 (BTH follows); DLID; PktLen in words; SLID
    Put(out, 0, 1);
    Put(out, group ? 3 : 2, 1);
    Put(out, Lid(h.dst), 2);
    Put(out, (toIcrc / 4) & 0x7FF, 2);
    Put(out, h.srcHost + 1, 2);
    if (group)
    {
        // GRH: IPVer 6, TClass 0, FlowLabel 0; PayLen (BTH to ICRC); NxtHdr 0x1B (BTH); HopLmt
        Put(out, 0x60000000, 4);
        Put(out, toIcrc - wire::LRH_BYTES - wire::GRH_BYTES, 2);
        Put(out, 0x1B, 1);
        Put(out, 0xFF, 1);
        Put(out, LINK_LOCAL_PREFIX, 8);
        Put(out, h.srcHost + 1, 8);
        Put(out, MULTICAST_GID_PREFIX, 8);
        Put(out, h.dst & ~FabricHeader::GROUP_FLAG, 8);
    }
}

uint16_t
Ipv4Checksum(const uint8_t* header)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < wire::IPV4_BYTES; i += 2)
    {
        sum += (static_cast<uint32_t>(header[i]) << 8) | header[i + 1];
    }
    while (sum >> 16)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return static_cast<uint16_t>(~sum);
}

/** Ethernet II, IPv4 (DF, TTL 64, the packet's DSCP and ECN codepoint) and UDP (checksum 0, as
 * RoCEv2 sends it): udpBytes = the UDP header through the ICRC. */
void
PutEthIpUdp(std::vector<uint8_t>& out,
            const TransportHeader& h,
            uint32_t udpBytes,
            const FabricHeader::Fields& fields)
{
    Put(out, Mac(h.dst), 6);
    Put(out, Mac(h.srcHost), 6);
    Put(out, ETHERTYPE_IPV4, 2);
    const std::size_t ip = out.size();
    Put(out, 0x45, 1);            // version 4, IHL 5
    Put(out, fields.GetTos(), 1); // DSCP (0, or the lossy class's), ECN
    Put(out, wire::IPV4_BYTES + udpBytes, 2);
    Put(out, 0, 2); // identification
    Put(out, IPV4_DONT_FRAGMENT, 2);
    Put(out, IPV4_TTL, 1);
    Put(out, IP_PROTOCOL_UDP, 1);
    Put(out, 0, 2); // checksum, below
    Put(out, Ipv4(h.srcHost), 4);
    Put(out, Ipv4(h.dst), 4);
    const uint16_t checksum = Ipv4Checksum(out.data() + ip);
    out[ip + 10] = static_cast<uint8_t>(checksum >> 8);
    out[ip + 11] = static_cast<uint8_t>(checksum);
    Put(out, ROCEV2_SOURCE_PORT_BASE | (fields.flow & 0x3FFF), 2);
    Put(out, ROCEV2_UDP_PORT, 2);
    Put(out, udpBytes, 2);
    Put(out, 0, 2);
}

/**
 * The ICRC (IBA 7.8.1; RoCEv2: Annex A17.3.3) of a frame whose headers end at its BTH's end plus
 * extensions: the invariant fields from the LRH (RoCEv2: 8 bytes of ones in its place, then the IP
 * header) through the payload and pad, every variant field as ones.
 */
uint32_t
Icrc(WireFormat format, const std::vector<uint8_t>& frame, std::size_t bth, std::size_t end)
{
    std::vector<uint8_t> masked;
    if (format == WireFormat::INFINIBAND)
    {
        masked.assign(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(end));
        masked[0] |= 0xF0; // VL
        if (bth > wire::LRH_BYTES)
        {
            const std::size_t g = wire::LRH_BYTES;
            masked[g] |= 0x0F; // TClass, FlowLabel
            masked[g + 1] = masked[g + 2] = masked[g + 3] = 0xFF;
            masked[g + 7] = 0xFF; // HopLmt
        }
    }
    else
    {
        masked.assign(8, 0xFF);
        masked.insert(masked.end(),
                      frame.begin() + wire::ETH_BYTES,
                      frame.begin() + static_cast<std::ptrdiff_t>(end));
        const std::size_t ip = 8;
        masked[ip + 1] = 0xFF;                    // DSCP, ECN
        masked[ip + 8] = 0xFF;                    // TTL
        masked[ip + 10] = masked[ip + 11] = 0xFF; // header checksum
        const std::size_t udp = ip + wire::IPV4_BYTES;
        masked[udp + 6] = masked[udp + 7] = 0xFF; // UDP checksum
        bth = bth - wire::ETH_BYTES + 8;
    }
    masked[bth + 4] = 0xFF; // the BTH's reserved byte before DestQP
    return Crc32(0, masked.data(), masked.size());
}

const std::array<uint32_t, 256>&
Crc32Table()
{
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i)
        {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
            {
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            }
            t[i] = c;
        }
        return t;
    }();
    return table;
}
} // namespace

uint32_t
Crc32(uint32_t crc, const uint8_t* data, std::size_t n)
{
    const auto& table = Crc32Table();
    crc = ~crc;
    for (std::size_t i = 0; i < n; ++i)
    {
        crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    }
    return ~crc;
}

uint16_t
Vcrc16(const uint8_t* data, std::size_t n)
{
    uint16_t crc = 0xFFFF;
    for (std::size_t i = 0; i < n; ++i)
    {
        crc ^= data[i];
        for (int k = 0; k < 8; ++k)
        {
            crc = (crc & 1) ? static_cast<uint16_t>(VCRC_POLYNOMIAL_REFLECTED ^ (crc >> 1))
                            : static_cast<uint16_t>(crc >> 1);
        }
    }
    return static_cast<uint16_t>(~crc);
}

uint32_t
BuildWireFrame(WireFormat format,
               const FabricHeader::Fields& fields,
               uint32_t payloadBytes,
               uint32_t srcQpn,
               const uint8_t* payload,
               std::vector<uint8_t>& out)
{
    const TransportHeader h = TransportHeader::FromFields(fields);
    const bool ib = format == WireFormat::INFINIBAND;
    const uint32_t pad = (4 - payloadBytes % 4) % 4;
    // BTH and its extensions: the InfiniBand unicast headers less the LRH, ICRC and VCRC
    const uint32_t transport = WireHeaderBytes(WireFormat::INFINIBAND, h.opcode, false) -
                               wire::LRH_BYTES - wire::ICRC_BYTES - wire::VCRC_BYTES;
    const uint32_t body = transport + payloadBytes + pad + wire::ICRC_BYTES; // BTH through ICRC
    out.clear();
    uint32_t wireBytes = 0;
    if (ib)
    {
        const uint32_t grh = TargetOf(h.dst) == Target::GROUP ? wire::GRH_BYTES : 0;
        PutLrhGrh(out, h, wire::LRH_BYTES + grh + body);
        wireBytes = wire::LRH_BYTES + grh + body + wire::VCRC_BYTES;
    }
    else
    {
        PutEthIpUdp(out, h, wire::UDP_BYTES + body, fields);
        wireBytes = wire::ETH_BYTES + wire::IPV4_BYTES + wire::UDP_BYTES + body + wire::FCS_BYTES;
    }
    const std::size_t bth = out.size();
    PutTransport(out, h, srcQpn, pad);
    if (payload == nullptr)
    {
        return wireBytes;
    }
    out.insert(out.end(), payload, payload + payloadBytes);
    out.insert(out.end(), pad, 0);
    PutLittle(out, Icrc(format, out, bth, out.size()), 4);
    if (ib)
    {
        PutLittle(out, Vcrc16(out.data(), out.size()), 2);
    }
    else
    {
        PutLittle(out, Crc32(0, out.data(), out.size()), 4);
    }
    return wireBytes;
}

} // namespace mcsim
} // namespace ns3
