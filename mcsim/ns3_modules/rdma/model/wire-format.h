// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/** @brief Link and network encapsulation of RDMA packets. */
enum class WireFormat
{
    INFINIBAND, //!< LRH 8 [+ GRH 40] + BTH 12 + extended headers + ICRC 4 + VCRC 2
    ROCEV2,     //!< Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + extended headers + ICRC 4 + FCS 4
};

/** @brief Transport opcodes (InfiniBand BTH opcodes, RC and UD). */
enum class Opcode : uint8_t
{
    SEND_FIRST,
    SEND_MIDDLE,
    SEND_LAST,
    SEND_LAST_IMM,
    SEND_ONLY,
    SEND_ONLY_IMM,
    WRITE_FIRST,
    WRITE_MIDDLE,
    WRITE_LAST,
    WRITE_LAST_IMM,
    WRITE_ONLY,
    WRITE_ONLY_IMM,
    READ_REQUEST,
    READ_RESPONSE_FIRST,
    READ_RESPONSE_MIDDLE,
    READ_RESPONSE_LAST,
    READ_RESPONSE_ONLY,
    ACK, //!< ACK or NAK (AETH syndrome in the flags)
    UD_SEND_ONLY,
    UD_SEND_ONLY_IMM,
    CNP, //!< RoCEv2's congestion notification packet (0x81; Annex A17.9.3): DCQCN's
    COUNT
};

// Opcode predicates: every test of an opcode goes through one of these (inline: the hot path).

/** @return true if the opcode carries a RETH (remote address, length): WRITE first/only, READ
 * request */
constexpr bool
HasReth(Opcode op)
{
    return op == Opcode::WRITE_FIRST || op == Opcode::WRITE_ONLY || op == Opcode::WRITE_ONLY_IMM ||
           op == Opcode::READ_REQUEST;
}

/** @return true if the opcode carries immediate data (ImmDt) */
constexpr bool
HasImm(Opcode op)
{
    return op == Opcode::SEND_LAST_IMM || op == Opcode::SEND_ONLY_IMM ||
           op == Opcode::WRITE_LAST_IMM || op == Opcode::WRITE_ONLY_IMM ||
           op == Opcode::UD_SEND_ONLY_IMM;
}

/** @return true if the opcode carries an AETH: ACK, READ response first/last/only */
constexpr bool
HasAeth(Opcode op)
{
    return op == Opcode::ACK || op == Opcode::READ_RESPONSE_FIRST ||
           op == Opcode::READ_RESPONSE_LAST || op == Opcode::READ_RESPONSE_ONLY;
}

/** @return true for UD opcodes (DETH) */
constexpr bool
IsUd(Opcode op)
{
    return op == Opcode::UD_SEND_ONLY || op == Opcode::UD_SEND_ONLY_IMM;
}

/** @return true for a congestion notification packet */
constexpr bool
IsCnp(Opcode op)
{
    return op == Opcode::CNP;
}

/** @return true for an ACK or NAK */
constexpr bool
IsAck(Opcode op)
{
    return op == Opcode::ACK;
}

/** @return true for a READ request */
constexpr bool
IsReadRequest(Opcode op)
{
    return op == Opcode::READ_REQUEST;
}

/** @return true for READ responses */
constexpr bool
IsReadResponse(Opcode op)
{
    return op == Opcode::READ_RESPONSE_FIRST || op == Opcode::READ_RESPONSE_MIDDLE ||
           op == Opcode::READ_RESPONSE_LAST || op == Opcode::READ_RESPONSE_ONLY;
}

/** @return true for the packets of an RDMA WRITE (any position, with or without immediate) */
constexpr bool
IsWrite(Opcode op)
{
    return op == Opcode::WRITE_FIRST || op == Opcode::WRITE_MIDDLE || op == Opcode::WRITE_LAST ||
           op == Opcode::WRITE_LAST_IMM || op == Opcode::WRITE_ONLY || op == Opcode::WRITE_ONLY_IMM;
}

/** @return true for the first packet of an RC SEND or WRITE message (first or only) */
constexpr bool
StartsMessage(Opcode op)
{
    return op == Opcode::SEND_FIRST || op == Opcode::SEND_ONLY || op == Opcode::SEND_ONLY_IMM ||
           op == Opcode::WRITE_FIRST || op == Opcode::WRITE_ONLY || op == Opcode::WRITE_ONLY_IMM;
}

/** @return true for the last packet of an RC SEND message (last or only): it completes a receive */
constexpr bool
EndsSend(Opcode op)
{
    return op == Opcode::SEND_LAST || op == Opcode::SEND_LAST_IMM || op == Opcode::SEND_ONLY ||
           op == Opcode::SEND_ONLY_IMM;
}

/**
 * @return true for the RC packet that takes a posted receive: a SEND's first (or only) packet,
 * a WRITE with immediate's last (or only) packet
 */
constexpr bool
ConsumesRecv(Opcode op)
{
    return op == Opcode::SEND_FIRST || op == Opcode::SEND_ONLY || op == Opcode::SEND_ONLY_IMM ||
           op == Opcode::WRITE_LAST_IMM || op == Opcode::WRITE_ONLY_IMM;
}

/**
 * The opcode of one packet of a SEND (send) or RDMA WRITE message: the first and/or the last of
 * the message (both: an ONLY packet); withImm: the message carries immediate data (on its last).
 */
Opcode MessageOpcode(bool send, bool withImm, bool first, bool last);
/** The opcode of one READ response packet: the first and/or the last of the stream. */
Opcode ReadResponseOpcode(bool first, bool last);

/** Header and trailer sizes (bytes) of the real formats. */
namespace wire
{
// InfiniBand Architecture Specification, vol. 1, chapter 9 (transport) and 7 (link)
constexpr uint32_t LRH_BYTES = 8;
constexpr uint32_t GRH_BYTES = 40;
constexpr uint32_t BTH_BYTES = 12;
constexpr uint32_t RETH_BYTES = 16;
constexpr uint32_t AETH_BYTES = 4;
constexpr uint32_t IMMDT_BYTES = 4;
constexpr uint32_t DETH_BYTES = 8;
constexpr uint32_t ICRC_BYTES = 4;
constexpr uint32_t VCRC_BYTES = 2;
constexpr uint32_t CNP_RESERVED_BYTES = 16; //!< a CNP's reserved bytes after its BTH
// RoCEv2 (Annex A17): Ethernet II + IPv4 + UDP replace LRH/GRH; the Ethernet FCS replaces VCRC
constexpr uint32_t ETH_BYTES = 14;
constexpr uint32_t IPV4_BYTES = 20;
constexpr uint32_t UDP_BYTES = 8;
constexpr uint32_t FCS_BYTES = 4;
} // namespace wire

/**
 * Bytes of headers and trailers on the wire for one packet, from the real formats (inline: twice
 * per packet on the hot path).
 * @param format InfiniBand or RoCEv2
 * @param op the opcode (decides RETH, AETH, ImmDt, DETH)
 * @param multicast UD multicast: InfiniBand adds the 40-byte GRH
 */
constexpr uint32_t
WireHeaderBytes(WireFormat format, Opcode op, bool multicast)
{
    using namespace wire;
    uint32_t bytes = BTH_BYTES + ICRC_BYTES;
    bytes += HasReth(op) ? RETH_BYTES : 0;
    bytes += HasAeth(op) ? AETH_BYTES : 0;
    bytes += HasImm(op) ? IMMDT_BYTES : 0;
    bytes += IsUd(op) ? DETH_BYTES : 0;
    bytes += IsCnp(op) ? CNP_RESERVED_BYTES : 0;
    if (format == WireFormat::INFINIBAND)
    {
        return bytes + LRH_BYTES + VCRC_BYTES + (multicast ? GRH_BYTES : 0);
    }
    return bytes + ETH_BYTES + IPV4_BYTES + UDP_BYTES + FCS_BYTES;
}

} // namespace mcsim
} // namespace ns3
